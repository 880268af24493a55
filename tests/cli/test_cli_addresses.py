"""The command line on the mistakes and pipes of real use: a malformed URL or a port out of range is a
one-line error with exit code 2 (never a traceback), a reader that closes the pipe early ends the
command quietly, and `demo --json` prints a script the replaying commands accept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.command import dagtools
from tests.conftest import ROOT

KITCHEN = "examples/kitchen/api.py:schema"
FRIES = "examples/kitchen/fries.yaml"
DAGTOOLS = [sys.executable, "-m", "dagtools.cli"]


BAD_ADDRESSES = [
    (["mcp", KITCHEN, "--transport", "http", "--port", "99999"], "--port 99999 is out of range"),
    (["mcp", KITCHEN, "--transport", "http", "--port", "-1"], "--port -1 is out of range"),
    (["tools", "http://127.0.0.1:99999/graphql", "--no-cache"], "port is out of range"),
    (["call", "http://127.0.0.1:99999/graphql", FRIES], "port is out of range"),
    (["tools", "http://host:abc/graphql", "--no-cache"], "port is not a number"),
    (["tools", "http://[::1/graphql", "--no-cache"], "IPv6 address is not closed"),
    (["mcp", "http://[::1/graphql"], "IPv6 address is not closed"),
    (["run", "http://host:abc/graphql", "Bake fries", "--model", "script:fries.yaml"], "port is not a number"),
    (["run", KITCHEN, "Bake fries", "--model", "openai:x", "--base-url", "http://[::1/v1"], "--base-url"),
    (["mcp", KITCHEN, "--transport", "http", "--public-url", "http://x:y/mcp"], "--public-url"),
    (["mcp", "schemas/kitchen.graphql", "--endpoint", "http://127.0.0.1:70000/graphql"], "--endpoint"),
    (["tools", KITCHEN, "--timeout", "0"], "--timeout 0 must be more than 0"),
]


@pytest.mark.parametrize(("args", "said"), BAD_ADDRESSES, ids=[" ".join(a[:2]) + f"-{i}" for i, (a, _) in enumerate(BAD_ADDRESSES)])
def test_a_bad_address_is_one_line_and_exit_code_2(args: list[str], said: str) -> None:
    run = dagtools(*args)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and "Error:" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dagtools: ") and said in lines[0], run.stderr
    assert run.stdout == ""


def test_a_bad_address_shows_no_credentials() -> None:
    run = dagtools("call", "http://user:hunter2@127.0.0.1:99999/graphql?token=s3cret", FRIES)
    assert run.returncode == 2 and "port is out of range" in run.stderr
    assert "hunter2" not in run.stderr and "s3cret" not in run.stderr


def test_a_bad_port_in_a_config_file_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "mcp.yaml"
    config.write_text(f"source: {ROOT / 'examples' / 'kitchen' / 'api.py'}:schema\ntransport: http\nport: 70000\n")
    run = dagtools("mcp", "--config", str(config))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "port 70000 is out of range" in run.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(
    "args",
    [["demo"], ["demo", "--json"], ["call", KITCHEN, FRIES, "--json"], ["tools", KITCHEN, "--all"], ["tools", KITCHEN, "--all", "--json"]],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_reader_that_stops_early_ends_the_command_quietly(args: list[str]) -> None:
    """`dagtools ... | head -1`: the shell's own pipe, a reader that leaves after one line."""
    command = " ".join(DAGTOOLS + args)
    run = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command} | head -c 1 >/dev/null; echo status=${{PIPESTATUS[0]}} >&2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in run.stderr and "BrokenPipeError" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr
    status = run.stderr.strip().splitlines()[-1]
    assert status in ("status=0", "status=141"), run.stderr


@pytest.mark.e2e
def test_a_closed_pipe_is_caught_while_writing_much() -> None:
    """The reader goes away while the command is still writing line after line: exit 141, as `cat` does."""
    process = subprocess.Popen(
        [*DAGTOOLS, "tools", KITCHEN, "--all", "--format", "mcp", "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(1)
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) in (0, 141)
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr


def demo_json_into(*command: str) -> subprocess.CompletedProcess[str]:
    """`dagtools demo --json | dagtools COMMAND`, failing when either side fails."""
    demo = dagtools("demo", "--json")
    assert demo.returncode == 0, demo.stderr
    return dagtools(*command, stdin=demo.stdout)


def test_demo_json_is_a_script_that_call_and_a_scripted_model_replay() -> None:
    demo = demo_json_into("call", KITCHEN, "-", "--json")
    assert demo.returncode == 0, demo.stderr
    lines = [json.loads(line) for line in demo.stdout.splitlines()]
    assert lines[-1] == {"outputs": {"fries": "Plate#2"}}
    assert not any(line.get("is_error") for line in lines[:-1])

    played = demo_json_into("demo", "--model", "script:-")
    assert played.returncode == 0, played.stderr
    assert '{"fries": "Plate#2"}' in played.stdout


def test_a_replayed_demo_fails_when_the_api_answers_otherwise(tmp_path: Path) -> None:
    """The recorded expectations are checked: a script whose expectation no longer holds fails."""
    script = json.loads(dagtools("demo", "--json").stdout)
    peel = next(c for c in script["calls"] if c["tool"] == "Potato_peel")
    peel["expect"] = {"result": "Potato#9"}
    run = dagtools("call", KITCHEN, "-", stdin=json.dumps(script))
    assert run.returncode == 1 and "does not match the expected" in run.stderr
