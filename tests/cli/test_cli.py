"""The command line: each command once as a user runs it (a subprocess), and at length in process."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

from tests.command import dagtools, dagtools_process
from tests.conftest import FORGE, shared_schema_path
from tests.kitchen import SEED_INPUTS, SEED_OUTPUTS

KITCHEN = "examples/kitchen/api.py:schema"
FRIES = "examples/kitchen/fries.yaml"


def test_call_reproduces_the_seed_transcript():
    run = dagtools("call", KITCHEN, "examples/kitchen/fries.yaml", "--json")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    calls = lines[:-1]
    assert [c["tool"] for c in calls] == [
        "selectTools",
        "Potato_rinse",
        "Potato_peel",
        "Potato_slice",
        "Oven_bake",
        "selectTools",
        "Fries_plate",
        "save",
    ]
    minted = [c["result"]["result"] for c in calls if isinstance(c["result"], dict)]
    assert minted == ["Potato#2", "Potato#3", "Potato#4", "Fries#1", "Plate#2"]
    assert not any(c["is_error"] for c in calls)
    assert lines[-1] == {"outputs": {"fries": "Plate#2"}}


def test_demo_prints_the_transcript():
    run = dagtools("demo")
    assert run.returncode == 0, run.stderr
    assert "selectTools(" in run.stdout and "Fries_plate" in run.stdout
    assert '{"fries": "Plate#2"}' in run.stdout


def test_demo_json_prints_a_script_that_call_replays():
    run = dagtools("demo", "--json")
    assert run.returncode == 0, run.stderr
    script = json.loads(run.stdout)
    assert script["outputs"] == {"fries": {"type": "Plate", "description": "The baked french fries, on a plate."}}
    assert script["calls"][-1]["tool"] == "save" and all("expect" in c or c.get("expect_error") for c in script["calls"])


def test_call_fails_on_an_unexpected_error_or_a_failed_expectation(tmp_path: Path):
    script = tmp_path / "s.yaml"
    script.write_text(
        "inputs: {potato: {field: potato}}\n"
        "calls:\n"
        "  - {tool: selectTools, arguments: {tools: [Potato_peel]}}\n"
        "  - {tool: Potato_peel, expect: {result: 'Potato#2'}}\n"
        "  - {tool: Potato_peel, arguments: {Potato: 'Potato#2'}, expect_error: true}\n"
    )
    assert dagtools("call", KITCHEN, str(script)).returncode == 0
    script.write_text(
        "inputs: {potato: {field: potato}}\n"
        "calls:\n"
        "  - {tool: selectTools, arguments: {tools: [Potato_peel]}}\n"
        "  - {tool: Potato_peel, expect: {result: 'Potato#9'}}\n"
    )
    run = dagtools("call", KITCHEN, str(script))
    assert run.returncode == 1 and "does not match the expected" in run.stderr
    script.write_text("calls:\n  - {tool: Potato_peal}\n")
    run = dagtools("call", KITCHEN, str(script))
    assert run.returncode == 1 and "Did you mean Potato_peel" in run.stderr


def test_tools_json_is_exactly_a_json_array():
    run = dagtools("tools", KITCHEN, "--json", "--format", "anthropic")
    assert run.returncode == 0, run.stderr
    tools = json.loads(run.stdout)
    assert [t["name"] for t in tools] == ["selectTools", "callChain"]
    everything = json.loads(dagtools("tools", KITCHEN, "--json", "--all").stdout)
    assert len(everything) > 20 and everything[0]["type"] == "function"


def test_tools_prints_sizes_for_a_large_schema():
    run = dagtools("tools", str(shared_schema_path(FORGE)), "--sizes", "-v")
    assert run.returncode == 0, run.stderr
    assert "tolerated: Repository.name is defined twice" in run.stderr
    summary = run.stdout.strip().splitlines()[-1]
    tokens = int(summary.rsplit("about ", 1)[1].split()[0])
    assert tokens <= 2000


def test_bad_sources_and_scripts_give_clear_errors(tmp_path: Path):
    run = dagtools("tools", "nowhere.graphql")
    assert run.returncode == 2 and "does not exist" in run.stderr
    sdl = tmp_path / "api.graphql"
    sdl.write_text("type Query { a: Int }")
    script = tmp_path / "s.yaml"
    script.write_text("calls: []\n")
    run = dagtools("call", str(sdl), str(script))
    assert run.returncode == 2 and "cannot run queries" in run.stderr
    script.write_text("calls: [{tool: 3, bogus: 1}]\n")
    run = dagtools("call", KITCHEN, str(script))
    assert run.returncode == 2 and "unknown keys ['bogus']" in run.stderr


def test_logging_is_silent_unless_asked():
    script = "examples/kitchen/fries.yaml"
    quiet = dagtools("call", "examples/kitchen/api.py:schema", script, "--json")
    assert quiet.returncode == 0 and "INFO" not in quiet.stderr
    loud = dagtools("-v", "call", "examples/kitchen/api.py:schema", script, "--json")
    assert loud.returncode == 0
    assert "dagtools: INFO schema loaded from examples/kitchen/api.py:schema" in loud.stderr
    assert "dagtools: INFO session opened on" in loud.stderr
    assert loud.stdout == quiet.stdout  # logs never mix with the output


@pytest.mark.parametrize("module", ["dagtools", "dagtools.cli"])
def test_python_dash_m_runs_the_command_and_exits_with_its_code(module: str, monkeypatch, capsys) -> None:
    """`python -m dagtools` and `python -m dagtools.cli` (run here as the interpreter runs them)."""
    monkeypatch.setattr(sys, "argv", [module, "--version"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    assert exited.value.code == 0 and capsys.readouterr().out.startswith("dagtools ")
    monkeypatch.setattr(sys, "argv", [module, "tools", "nowhere.graphql"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    assert exited.value.code == 2 and "does not exist" in capsys.readouterr().err


def test_version():
    done = dagtools("--version")
    assert done.returncode == 0 and done.stdout.strip().startswith("dagtools ") and done.stdout.strip() != "dagtools "


# -- each command once in a subprocess, as a user runs it (the rest run in process) -----------------------

SEED_ARGS = [
    *(f"--input={name}={spec['field']}:{spec['description']}" for name, spec in SEED_INPUTS.items()),
    *(f"--output={name}:{spec['type']}:{spec['description']}" for name, spec in SEED_OUTPUTS.items()),
]
SMOKE = {
    "demo": (["demo"], '{"fries": "Plate#2"}'),
    "call": (["call", KITCHEN, FRIES], '{"fries": "Plate#2"}'),
    "run": (["run", KITCHEN, "Bake fries", *SEED_ARGS, "--model", f"script:{FRIES}"], '{"fries": "Plate#2"}'),
    "tools": (["tools", KITCHEN, "--all"], "Potato_peel"),
    "--version": (["--version"], "dagtools "),
}


@pytest.mark.e2e
@pytest.mark.parametrize("command", list(SMOKE))
def test_each_command_runs_as_a_user_runs_it(command: str) -> None:
    """`python -m dagtools.cli` starts, imports what the command needs and exits 0 (mcp: tests/mcpserver/test_mcp.py)."""
    args, shown = SMOKE[command]
    run = dagtools_process(*args)
    assert run.returncode == 0, run.stderr
    assert shown in run.stdout and "Traceback" not in run.stderr
    assert run.stdout == dagtools(*args).stdout  # in process, the command prints the same
