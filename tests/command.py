"""The `dagtools` command for tests: in this process through `main(argv)`, or as a user starts it.

`dagtools(*args)` runs the command in process, with its own stdin, stdout, stderr, environment and
working folder, and answers a `subprocess.CompletedProcess` as `subprocess.run` would: the exit code,
everything written to stdout and stderr, and a traceback on stderr (exit code 1) where the command
raised what it should have caught. It costs milliseconds where an interpreter's start and the imports
cost a second or more on a loaded machine, so every module can test the command at length.

`dagtools_process(*args)` starts `python -m dagtools.cli` in a subprocess; tests that use it carry the
`e2e` marker and are kept to one smoke test per command (and to what only a process shows: pipes,
terminals, signals, exit codes set by the interpreter).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ROOT", "dagtools", "dagtools_process"]

ROOT = Path(__file__).resolve().parents[1]

# One command at a time: the standard streams, the environment and the working folder are the process's.
_one_at_a_time = threading.Lock()


class _Output(io.StringIO):
    """A text stream with a name and no terminal, as a pipe looks to the command."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def isatty(self) -> bool:
        return False


def dagtools(
    *args: str,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path = ROOT,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run `dagtools ARGS` in process; `env`, where given, is the whole environment, as for subprocess.run."""
    argv = [str(a) for a in args]
    result: dict[str, int] = {}

    def run() -> None:
        from dagtools.cli import main

        try:
            result["code"] = int(main(argv) or 0)
        except SystemExit as done:  # argparse's errors and --version end the command this way
            code = done.code
            result["code"] = code if isinstance(code, int) else (0 if code is None else 1)
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)
        except BaseException:  # what the interpreter would print before exiting with 1
            traceback.print_exc()
            result["code"] = 1

    logger = logging.getLogger("dagtools")
    with _one_at_a_time:
        stdout, stderr = _Output("<stdout>"), _Output("<stderr>")
        saved_logging = (list(logger.handlers), logger.level, logger.propagate)
        environment = dict(os.environ if env is None else env)
        with (
            contextlib.chdir(cwd),
            _environment(environment),
            _streams(io.StringIO(stdin or ""), stdout, stderr),
        ):
            try:
                _in_a_thread(run, timeout)
            finally:
                logger.handlers[:], logger.level, logger.propagate = saved_logging
    return subprocess.CompletedProcess(["dagtools", *argv], result.get("code", 1), stdout.getvalue(), stderr.getvalue())


def dagtools_process(
    *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None, cwd: str | Path = ROOT, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `python -m dagtools.cli ARGS` as a user runs it (tests that use it are marked e2e)."""
    return subprocess.run(
        [sys.executable, "-m", "dagtools.cli", *args],
        cwd=cwd,
        env=None if env is None else dict(env),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@contextlib.contextmanager
def _environment(environment: dict[str, str]):
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environment)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _streams(stdin: io.StringIO, stdout: io.StringIO, stderr: io.StringIO):
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def _in_a_thread(run, timeout: float) -> None:
    """A thread of its own: the command starts its own event loop (an async test already runs one), and
    a command that hangs fails the test after `timeout` seconds instead of stopping the run."""
    thread = threading.Thread(target=run, name="dagtools-command", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"the dagtools command did not finish within {timeout:g}s")
