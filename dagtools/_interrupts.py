"""Ctrl-C in a command: the first stops it where it is and keeps what it finished; a second stops it at once.

The command line installs `INTERRUPTS` for the whole command. While no stop is registered (loading a
schema, writing a report) the first Ctrl-C raises `KeyboardInterrupt` as Python's own handler does, and
the command says so and exits 130. Work that should wind down instead registers how it stops:

- async work runs under `INTERRUPTS.cancelling()`, a cancel scope the first Ctrl-C cancels from the
  event loop, so every `finally` runs and the command then writes what the work finished (or hands a
  scope of its own to `cancels()`, for work that keeps its results when cancelled, as the eval does);
- a server registers its own stop with `INTERRUPTS.on_stop(...)` (uvicorn's `should_exit`).

The second Ctrl-C exits with 130 without running anything more (`os._exit`): the user asked twice.
Files a command writes after an interrupt are written whole or not at all (`write_whole`), so one
stopped mid-write leaves the previous file, never half of a new one.

Outside the command line nothing here is installed, and Ctrl-C behaves as Python and anyio make it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import anyio

__all__ = ["INTERRUPTED_EXIT", "INTERRUPTS", "Interrupts", "write_whole"]

T = TypeVar("T")

#: The exit code of a command stopped by Ctrl-C, as shells report SIGINT (128 + 2).
INTERRUPTED_EXIT = 130


class Interrupts:
    """SIGINT for one command: counted, the first handed to the registered stops, the second final."""

    def __init__(self) -> None:
        self.count = 0
        self.installed = False
        self._stops: list[Callable[[], object]] = []
        self._previous: Any = None

    @property
    def stopped(self) -> bool:
        """Whether Ctrl-C was pressed since `install()`."""
        return self.count > 0

    def install(self) -> None:
        """Take SIGINT for this command (only the main thread can; elsewhere, as in tests that run the
        command in a thread, nothing changes)."""
        self.count = 0
        self._stops.clear()
        if threading.current_thread() is not threading.main_thread():
            return
        self._previous = signal.signal(signal.SIGINT, self._handle)
        self.installed = True

    def uninstall(self) -> None:
        if self.installed:
            signal.signal(signal.SIGINT, self._previous)
            self.installed = False

    def interrupt(self) -> None:
        """What Ctrl-C does, for code that stops a command the same way (and for tests)."""
        self.count += 1
        if self.count > 1:
            _say("dagtools: stopped at once (Ctrl-C twice): what was being finished is left as it was")
            os._exit(INTERRUPTED_EXIT)
        if not self._stops:
            raise KeyboardInterrupt
        _say("dagtools: stopping (Ctrl-C again stops at once)")
        self._stops[-1]()  # the innermost: it knows what to keep, and the code around it then runs on

    def _handle(self, signum: int, frame: Any) -> None:
        self.interrupt()

    def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """`anyio.run(work)`, cancelled by a Ctrl-C that comes before `work` registers a stop of its own
        (opening a session, say), which then ends the command as `KeyboardInterrupt` does."""

        async def stoppable() -> tuple[T] | None:
            with self.cancelling():
                return (await work(),)
            return None

        import anyio  # only once a command runs: help and argument errors import no event loop

        done = anyio.run(stoppable)
        if done is None:
            raise KeyboardInterrupt
        return done[0]

    @contextmanager
    def on_stop(self, stop: Callable[[], object]) -> Iterator[None]:
        """While inside, the first Ctrl-C calls `stop` (from the signal handler: it must only set a flag
        or schedule work) instead of raising `KeyboardInterrupt`. Stops nest: only the innermost is called."""
        self._stops.append(stop)
        try:
            yield
        finally:
            self._stops.remove(stop)

    @contextmanager
    def cancels(self, scope: anyio.CancelScope) -> Iterator[anyio.CancelScope]:
        """While inside (in an event loop), the first Ctrl-C cancels `scope`, entered here or by the work."""
        loop = asyncio.get_running_loop()
        with self.on_stop(lambda: loop.call_soon_threadsafe(scope.cancel)):
            yield scope

    @contextmanager
    def cancelling(self) -> Iterator[anyio.CancelScope]:
        """A cancel scope the first Ctrl-C cancels; after it, `stopped` tells an interrupt from an end."""
        import anyio

        with anyio.CancelScope() as scope, self.cancels(scope):
            yield scope


#: The command's interrupts (one process runs one command).
INTERRUPTS = Interrupts()


def write_whole(path: Path, text: str) -> None:
    """Write `text` to `path` through a file beside it, renamed over it once complete."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)


def _say(line: str) -> None:
    """One line on stderr from a signal handler: straight to the descriptor, past any buffer."""
    try:
        sys.stderr.flush()
    except (OSError, ValueError, RuntimeError):
        pass
    try:
        os.write(2, (line + "\n").encode())
    except OSError:
        pass
