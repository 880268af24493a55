"""The interactive shell on a real pseudo-terminal, as a person uses it: Tab completion, history kept
between runs, Ctrl-C stopping a slow call and staying, a write's confirmation, Ctrl-D leaving; with
prompt_toolkit and with the plain line reader."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="the terminal tests drive a pseudo-terminal with pexpect: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parents[2]
DESK = f"{ROOT / 'tests' / 'shell' / 'desk_api.py'}:schema"
PROMPT = "dagtools>"


def spawn(state: Path, *options: str):
    env = {**os.environ, "DAGTOOLS_STATE_DIR": str(state), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "dagtools.cli", "shell", DESK, *options],
        env=env,
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    child.expect("Ctrl-D leaves")
    child.expect(PROMPT)
    return child


def leave(child) -> int:
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def run(child, line: str, *expected: str) -> None:
    child.send(line + "\r")
    for text in expected:
        child.expect_exact(text)
    child.expect(PROMPT)


@pytest.mark.parametrize("reader", ["prompt_toolkit", "plain"])
def test_a_slow_call_stopped_with_ctrl_c_leaves_the_shell_running(tmp_path, reader):
    if reader == "prompt_toolkit":
        pytest.importorskip("prompt_toolkit", reason="the shell extra: pip install -e '.[shell]'")
    child = spawn(tmp_path, *(["--plain"] if reader == "plain" else []))
    run(child, "Query_repository owner=a name=b", "result: Repository#1")
    child.send("Query_slowRepository seconds=50\r")
    child.expect_exact("Query_slowRepository seconds=50")
    time.sleep(1.0)  # the call is under way: its resolver sleeps in the API
    started = time.monotonic()
    child.sendintr()
    child.expect_exact("Interrupted: the call was stopped")
    assert time.monotonic() - started < 10
    child.expect(PROMPT)
    run(child, "held", "Repository#1 = ")  # the session as it was: nothing of the stopped call
    assert "Repository#2" not in child.before
    child.sendintr()  # Ctrl-C at the prompt: a fresh line, still in the shell
    child.expect(PROMPT)
    run(child, "Repository_stars", "result: 0")
    assert leave(child) == 0


def test_tab_completes_tools_objects_arguments_and_enum_values(tmp_path):
    pytest.importorskip("prompt_toolkit", reason="the shell extra: pip install -e '.[shell]'")
    child = spawn(tmp_path)
    child.send("Query_rep\t")
    child.expect_exact("ository")
    child.send(" owner=a name=b\r")
    child.expect_exact("result: Repository#1")
    child.expect(PROMPT)
    child.send("Repository_iss\t")
    child.expect_exact("ues")
    child.send(" Repository#1 sta\t")
    child.expect_exact("tes=")
    child.send("[CL\t")
    child.expect_exact("OSED")
    child.send("]\r")
    child.expect_exact('2, "CLOSED"')
    child.expect(PROMPT)
    assert leave(child) == 0


@pytest.mark.parametrize("reader", ["prompt_toolkit", "plain"])
def test_history_is_kept_between_runs(tmp_path, reader):
    if reader == "prompt_toolkit":
        pytest.importorskip("prompt_toolkit", reason="the shell extra: pip install -e '.[shell]'")
    options = ["--plain"] if reader == "plain" else []
    first = spawn(tmp_path, *options)
    run(first, "Query_repository owner=kept name=between", "result: Repository#1")
    assert leave(first) == 0
    assert "Query_repository owner=kept name=between" in (tmp_path / "shell-history").read_text()
    second = spawn(tmp_path, *options)
    second.send("\x1b[A")  # the up arrow brings the last line of the run before back
    second.expect_exact("owner=kept name=between")
    second.send("\r")
    second.expect_exact('"owner": "kept"')
    second.expect(PROMPT)
    assert leave(second) == 0


@pytest.mark.parametrize("reader", ["prompt_toolkit", "plain"])
def test_a_write_asks_before_it_runs(tmp_path, reader):
    if reader == "prompt_toolkit":
        pytest.importorskip("prompt_toolkit", reason="the shell extra: pip install -e '.[shell]'")
    child = spawn(tmp_path, "--allow-mutations", *(["--plain"] if reader == "plain" else []))
    child.send("Mutation_addStar owner=a name=b\r")
    child.expect_exact("This writes to the API. Run it? [y/N]")
    child.send("n\r")
    child.expect_exact("Not run: nothing was sent.")
    child.expect(PROMPT)
    child.send("Mutation_addStar owner=a name=b\r")
    child.expect_exact("Run it? [y/N]")
    child.send("y\r")
    child.expect_exact("result: 1")  # the first star: the declined call sent nothing
    child.expect(PROMPT)
    assert leave(child) == 0
    assert "\ny\n" not in "\n" + (tmp_path / "shell-history").read_text() + "\n"  # answers are no history


def test_exit_leaves_and_a_bad_line_stays(tmp_path):
    child = spawn(tmp_path, "--plain")
    run(child, 'Query_repository owner="a', 'error: The " at column 24 is never closed')
    run(child, "Query_repositori owner=a name=b", "Did you mean Query_repository")
    child.send("exit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
