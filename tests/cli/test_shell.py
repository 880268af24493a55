"""`dagtools shell` one command at a time, as agents and scripts use it: named sessions kept in a store,
lines on standard input, `--json`, writes that need --yes, the agent's instructions, bad input, and
`dagtools eval check` scoring a task done in a shell session (beside `dagtools eval TASKS` as before).

Most run in this process (tests/command.py); the tests named `*_across_processes*` start processes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from graphql import build_schema

from dagtools.calls._preview_pages import rows_of
from dagtools.catalogue import compile_catalogue
from dagtools.shell._map import MAP_LIMIT, api_map
from tests.command import dagtools, dagtools_process
from tests.conftest import ROOT, shared_schema_path
from tests.kitchen import kitchen_session

DESK = f"{ROOT / 'tests' / 'shell' / 'desk_api.py'}:schema"
TASKS = ROOT / "examples" / "evals" / "kitchen" / "tasks.yaml"
SCRIPTS = f"script:{ROOT / 'examples/evals/kitchen/scripts'}"


def environment(tmp_path: Path) -> dict[str, str]:
    import os

    return {**os.environ, "DAGTOOLS_STATE_DIR": str(tmp_path / "state")}


def shell(tmp_path: Path, *args: str, stdin: str | None = None, source: str = DESK) -> subprocess.CompletedProcess[str]:
    return dagtools("shell", source, *args, stdin=stdin, env=environment(tmp_path))


def test_a_named_session_keeps_its_handles_from_one_command_to_the_next(tmp_path):
    first = shell(tmp_path, "--session", "work", "-c", "Query_repository owner=octocat name=hello-world")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("result: Repository#1\n")
    second = shell(tmp_path, "--session", "work", "-c", "Repository_issues Repository#1 first=5 states=[OPEN]")
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith('result: ["Issue#1", "Issue#2", "Issue#3"]')
    listing = shell(tmp_path, "--session", "work", "-c", "held")
    assert listing.stdout.startswith("Repository#1 = ") and "\nIssue#3 = " in listing.stdout
    assert (tmp_path / "state" / "shell-sessions.sqlite3").exists()  # under the user's state directory
    other = shell(tmp_path, "--session", "other", "-c", "Repository_issues Repository#1")
    assert other.returncode == 1 and "There is no object Repository#1" in other.stderr  # sessions are apart


def test_any_store_the_other_commands_take(tmp_path):
    store = f"sqlite:///{tmp_path / 'mine.db'}"
    assert shell(tmp_path, "--session", "s", "--store", store, "-c", "Query_repository owner=a name=b").returncode == 0
    again = shell(tmp_path, "--session", "s", "--store", store, "-c", "Repository_stars Repository#1")
    assert again.returncode == 0 and again.stdout.startswith("result: 0")
    assert not (tmp_path / "state").exists()
    refused = shell(tmp_path, "--store", store, "-c", "held")
    assert refused.returncode == 2 and "--session NAME" in refused.stderr
    named = shell(tmp_path, "--session", "no/slashes", "-c", "held")
    assert named.returncode == 2 and "a session name is letters" in named.stderr


def test_lines_on_standard_input_run_in_order_and_the_exit_code_says_if_one_failed(tmp_path):
    lines = "Query_repository owner=a name=b\n# a comment\n\nRepository_nope\nRepository_stars Repository#1\n"
    result = shell(tmp_path, stdin=lines)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "result: Repository#1" and "result: 0" in result.stdout
    assert "There is no tool Repository_nope" in result.stderr
    assert shell(tmp_path, stdin="Query_repository owner=a name=b\n").returncode == 0


def test_json_prints_what_an_mcp_client_gets(tmp_path):
    result = shell(tmp_path, "--json", "-c", "Query_repository owner=a name=b", "-c", "Query_repository owner=a")
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["isError"] is False and json.loads(first["content"][0]["text"])["result"] == "Repository#1"
    assert second["isError"] is True and "name" in json.loads(second["content"][0]["text"])["error"]
    assert result.returncode == 1
    assert "selected" in json.loads(first["content"][0]["text"])  # the MCP form says the call selected its tool
    plain = shell(tmp_path, "--session", "plain", "-c", "Query_repository owner=a name=b")
    assert plain.stdout.startswith("result: Repository#1") and "selected" not in plain.stdout  # the shell runs any tool


def test_a_pipe_reads_the_fields_each_step_names_in_one_call(tmp_path):
    """A write-free chain with `fields` on its steps, and a list on the way of a path (issues, read to a bound)."""
    line = 'Query_repository owner=a name=b fields=["issues.title"] | Repository_stars'
    first = shell(
        tmp_path, "--json", "-c", line, "-c", 'Query_repository owner=a name=b | Repository_issues first=3 fields=["author.login"]'
    )
    listed, chained = (json.loads(json.loads(printed)["content"][0]["text"]) for printed in first.stdout.splitlines())
    assert first.returncode == 0, first.stderr
    rows = rows_of(listed["preview"])
    assert [rows[i]["title"] for i in rows["Repository#1"]["issues"]] == [
        "crash on start",
        "typo in the readme",
        "slow search",
        "dark mode",
    ]
    rows = rows_of(chained["preview"])
    (issues,) = chained["result"].values()
    assert [rows[rows[i]["author"]]["login"] for i in issues] == ["ada", "bob", "cy"]
    wrong = shell(tmp_path, "-c", 'Query_repository owner=a name=b | Repository_issues fields=["author.logn"]')
    assert wrong.returncode == 1 and "Step 2 of the chain" in wrong.stderr and "did you mean 'login'" in wrong.stderr


def test_a_write_needs_yes_in_one_command(tmp_path):
    refused = shell(tmp_path, "--allow-mutations", "-c", "Mutation_addStar owner=a name=b")
    assert refused.returncode == 1 and "run the line again with --yes" in refused.stderr and refused.stdout == ""
    done = shell(tmp_path, "--allow-mutations", "--yes", "-c", "Mutation_addStar owner=a name=b")
    assert done.returncode == 0 and done.stdout.startswith("result: ")
    unallowed = shell(tmp_path, "--yes", "-c", "Mutation_addStar owner=a name=b")
    assert unallowed.returncode == 1 and "--mutation addStar" in unallowed.stderr


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("Query_repositori owner=a name=b", "Did you mean Query_repository"),
        ("Repository_issues Repository#4", "There is no object Repository#4"),
        ("Query_repository owner=a", "missing the required argument name"),
        ("Query_repository owner='a name=b", "The ' at column 24 is never closed"),
        ("Repository_issues states=[OPEN", "The [ at column 26 is never closed"),
        ("Query_repository owner=a name=b | Repository_stars | Repository_issues", "answers a value, so no step can follow it"),
    ],
)
def test_bad_input_is_said_with_the_contracts_message_and_no_traceback(tmp_path, line, said):
    result = shell(tmp_path, "--session", "bad", "-c", line)
    assert result.returncode == 1
    assert said in result.stderr and "Traceback" not in result.stderr
    assert shell(tmp_path, "--session", "bad", "-c", "held").stdout.startswith("No objects yet")  # the failed line changed nothing


@pytest.mark.parametrize("source", ["kitchen", DESK, "github.schema.graphql"])
def test_the_agents_instructions_fit_in_300_tokens(tmp_path, source):
    bpe_openai = pytest.importorskip("bpe_openai", reason="bpe-openai counts o200k tokens: pip install -e '.[bench]'")
    if source.endswith(".graphql"):
        source = str(shared_schema_path(source))
    result = shell(tmp_path, "--agent-help", "--session", "task-1", source=source)
    assert result.returncode == 0, result.stderr
    text, _, shown = result.stdout.partition("The API, one type a line")
    if not shown:
        text, _, _ = result.stdout.partition("This API is large")
    tokens = len(bpe_openai.get_encoding("o200k_base").encode(text))
    assert tokens <= 300, (tokens, text)
    # a small API's map comes with them, within its own bound; a large one's never does
    assert bool(shown) == (not source.endswith(".graphql")) and len(shown) <= MAP_LIMIT + 100
    assert f"dagtools shell {source} --session task-1 -c 'LINE'" in text
    for taught in ("Type_field", "Type#N", " | ", "search WORDS", "save NAME=Type#N", "--yes", "fields=[", "several -c", "as an ID"):
        assert taught in text


def test_the_agents_instructions_on_a_task_name_what_it_asks_to_save(tmp_path):
    """An agent given a task must learn what to hand back from the instructions, not only from `held`."""
    bpe_openai = pytest.importorskip("bpe_openai", reason="bpe-openai counts o200k tokens: pip install -e '.[bench]'")
    tasks = str(ROOT / "examples" / "evals" / "kitchen" / "tasks.yaml")
    result = shell(tmp_path, "--agent-help", "--task", "fries", "--session", "t", source=tasks)
    assert result.returncode == 0, result.stderr
    assert "This task asks you to save: fries (Plate)" in result.stdout and "`held`" in result.stdout
    taught = result.stdout.partition("The API, one type a line")[0]
    assert len(bpe_openai.get_encoding("o200k_base").encode(taught)) <= 300
    plain = shell(tmp_path, "--agent-help", "--task", "varieties", "--session", "t", source=tasks).stdout
    assert "save: count (Int)" in plain and "`held`" not in plain  # no inputs to look at


def test_the_agents_instructions_work_as_written(tmp_path):
    """The example lines the instructions give run as they stand on the API they were made for."""
    text = shell(tmp_path, "--agent-help", source="kitchen").stdout
    examples = [line.strip() for line in text.splitlines() if line.startswith("  ")]
    assert examples[0] == "Query_potato" and len(examples) == 3  # a root call, a call on what it made, a chain
    for example in examples:
        ran = shell(tmp_path, "--session", "taught", "-c", example, source="kitchen")
        assert ran.returncode == 0, (example, ran.stderr)
    desk = shell(tmp_path, "--agent-help", source=DESK).stdout
    assert "  Query_repository owner=OWNER name=NAME\n  Repository_" in desk  # required arguments named


def test_eval_check_scores_a_shell_session_as_a_models_attempt(tmp_path):
    env = environment(tmp_path)
    missing = dagtools("eval", "check", str(TASKS), "--task", "fries", "--session", "by-hand", env=env)
    assert missing.returncode == 2 and "There is no shell session 'by-hand'" in missing.stderr
    lines = [
        "Potato_rinse Potato#1 sink=Sink#1",
        "Potato_peel | Potato_slice shape=STICKS",
        "Oven_bake Oven#1 item=Potato#3",
        "Fries_plate Fries#1 plate=Plate#1",
    ]
    done = dagtools("shell", str(TASKS), "--task", "fries", "--session", "by-hand", stdin="\n".join(lines), env=env)
    assert done.returncode == 0, done.stderr
    unsaved = dagtools("eval", "check", str(TASKS), "--task", "fries", "--session", "by-hand", env=env)
    assert unsaved.returncode == 1
    assert "dagtools: fries shell shell #1: failed: not saved (model stopped)" in unsaved.stderr
    assert dagtools("shell", str(TASKS), "--task", "fries", "--session", "by-hand", "-c", "save fries=Plate#2", env=env).returncode == 0
    judged = dagtools("eval", "check", str(TASKS), "--task", "fries", "--session", "by-hand", "--json", env=env)
    assert judged.returncode == 0, judged.stderr
    assert "dagtools: fries shell shell #1: ok" in judged.stderr
    attempt, row = (json.loads(line) for line in judged.stdout.splitlines())
    assert attempt["kind"] == "attempt" and attempt["ok"] and attempt["calls"] == 5  # the chain is one call
    assert row["kind"] == "row" and row["successes"] == 1 and row["attempts"] == 1
    table = dagtools("eval", "check", str(TASKS), "--task", "fries", "--session", "by-hand", env=env)
    assert table.stdout.splitlines()[0].split()[:4] == ["task", "model", "tools", "success"]
    assert "fries  shell  shell  1/1 100%" in table.stdout


def test_eval_check_fails_a_wrong_output_with_the_models_failure_text(tmp_path):
    env = environment(tmp_path)
    lines = ["Query_potatoes", "save count=2"]
    dagtools("shell", str(TASKS), "--task", "varieties", "--session", "v", stdin="\n".join(lines), env=env)
    judged = dagtools("eval", "check", str(TASKS), "--task", "varieties", "--session", "v", env=env)
    assert judged.returncode == 1 and "failed: output count is not 3" in judged.stderr


def test_eval_task_files_run_as_before_beside_check(tmp_path):
    result = dagtools("eval", str(TASKS), "--model", SCRIPTS, "-n", "1", "--tools", "dynamic", "--out", str(tmp_path / "out"), "--json")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["task"] for line in result.stdout.splitlines()] == ["fries", "varieties"]
    assert "check" in dagtools("eval", "--help").stdout
    usage = dagtools("eval", "check", "--help")
    assert usage.returncode == 0 and "dagtools eval check" in usage.stdout


# -- across processes ------------------------------------------------------------------------------------


def test_handles_are_kept_across_processes_and_restarts(tmp_path):
    env = environment(tmp_path)
    made = dagtools_process("shell", DESK, "--session", "kept", "-c", "Query_repository owner=octocat name=hello-world", env=env)
    assert made.returncode == 0, made.stderr
    used = dagtools_process("shell", DESK, "--session", "kept", "-c", "Repository_issues Repository#1 first=1 | Issue_author", env=env)
    assert used.returncode == 0, used.stderr
    assert 'result: {"Issue#1": "User#1"}' in used.stdout
    bad = dagtools_process("shell", DESK, "--session", "kept", "-c", "Repository_issues Repository#2", env=env)
    assert bad.returncode == 1 and "There is no object Repository#2" in bad.stderr and "Traceback" not in bad.stderr


def test_two_commands_on_one_session_at_once_are_serialised_across_processes(tmp_path):
    env = environment(tmp_path)
    assert dagtools_process("shell", DESK, "--session", "busy", "-c", "held", env=env).returncode == 0
    started = time.monotonic()
    both = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dagtools.cli",
                "shell",
                DESK,
                "--session",
                "busy",
                "-c",
                f"Query_slowRepository seconds=1.5 name={name}",
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    outputs = [process.communicate(timeout=120) for process in both]
    assert [p.returncode for p in both] == [0, 0], outputs
    assert time.monotonic() - started >= 3.0  # one call's wait after the other's, never both at once
    minted = sorted(out.splitlines()[0] for out, _ in outputs)
    assert minted == ["result: Repository#1", "result: Repository#2"]  # the second saw what the first saved
    listing = dagtools_process("shell", DESK, "--session", "busy", "-c", "held", env=env).stdout
    assert 'slowRepository(seconds: 1.5, name: "first")' in listing and 'slowRepository(seconds: 1.5, name: "second")' in listing


async def test_the_map_shows_every_type_a_call_can_reach_and_its_calls_run(tmp_path):
    """One read tells an agent what to call: each type's fields as tools, what they take and give."""
    text = shell(tmp_path, "-c", "map", source="kitchen").stdout
    lines = dict(line.split(": ", 1) for line in text.strip().splitlines())
    assert "potato(variety) -> Potato" in lines["Query"] and "potatoes -> Potato list" in lines["Query"]
    assert "slice(shape!) -> Potato" in lines["Potato"] and "rinsed: Boolean" in lines["Potato"]
    assert lines["Food"] == "Potato | Fries"  # a union names its members, each with a line of its own
    assert {"Oven", "Sink", "Plate", "Fries"} <= set(lines)
    async with await kitchen_session() as session:  # every field named is a tool by that name, and nothing is missing
        fields = {t: re.split(r", (?![^(]*\))", fs) for t, fs in lines.items() if " | " not in fs}  # not inside (a, b)
        named = {t + "_" + re.split(r"\W", f, maxsplit=1)[0] for t, fs in fields.items() for f in fs}
        assert named == set(session.catalogue.names())
    paged = api_map(compile_catalogue(build_schema(shared_schema_path("swapi.schema.graphql").read_text())))
    assert paged is not None
    assert "allPeople(first) -> Person list" in paged and "after" not in paged  # how many to read, never a cursor
    desk = shell(tmp_path, "-c", "map", source=DESK).stdout  # repositories are read by two keys, or by no key at all
    assert "Repository: " in desk and "no tool lists" not in desk
    big = shell(tmp_path, "--agent-help", source=str(shared_schema_path("github.schema.graphql")))
    assert big.returncode == 0 and big.stdout.rstrip().endswith(
        "This API is large: search WORDS finds its tools, help Type lists a type's."
    )


def test_a_list_of_values_looks_each_up_in_one_line(tmp_path):
    """`dagtools shell` as an agent runs it: one lookup line with a list of names reads each repository."""
    run = shell(tmp_path, "--session", "many", "-c", 'Query_repository owner=octocat name=["hello-world", "spoon-knife"]')
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.split("result: ", 1)[1].splitlines()[0])
    assert list(result) == ["hello-world", "spoon-knife"] and all(v.startswith("Repository#") for v in result.values())
