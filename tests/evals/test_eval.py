"""`dagtools eval` run as a user runs it: scripted models whose attempts fail on purpose, so every
figure of the report can be checked against what the scripts do.

The command runs in this process (tests/command.py); one test starts it as a process, for the exit code
the interpreter sets."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from dagtools._errors import ToolCallError
from dagtools._tools import Tool
from dagtools.evals import QueryToolset
from dagtools.examples.kitchen import api as kitchen
from dagtools.executors._local import LocalExecutor
from tests.command import dagtools, dagtools_process
from tests.conftest import ROOT
from tests.fake_models import FRIES_TURNS, anthropic_server  # noqa: F401 - fixture
from tests.thirdparty import swapi_url  # noqa: F401 - fixture

KITCHEN_TASKS = ROOT / "examples/evals/kitchen/tasks.yaml"
KITCHEN_SCRIPTS = f"script:{ROOT / 'examples/evals/kitchen/scripts'}"
SWAPI_TASKS = ROOT / "examples/evals/swapi/tasks.yaml"
SWAPI_SCRIPTS = f"script:{ROOT / 'examples/evals/swapi/scripts'}"
CHROMIUM = Path("/usr/bin/chromium")


def wilson_by_roots(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson interval as the two p where |successes/n - p| = z * sqrt(p(1-p)/n): a quadratic's roots."""
    share = successes / n
    a, b, c = 1 + z * z / n, -(2 * share + z * z / n), share * share
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def read_lines(folder: Path) -> tuple[list[dict], dict[tuple[str, str], dict]]:
    items = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    attempts = [i for i in items if i["kind"] == "attempt"]
    rows = {(r["task"], r["mode"]): r for r in items if r["kind"] == "row"}
    return attempts, rows


@pytest.fixture(scope="module")
def kitchen_eval(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("kitchen-eval")
    run = dagtools(
        "eval", str(KITCHEN_TASKS), "--model", KITCHEN_SCRIPTS, "-n", "5", "--tools", "dynamic,fixed,query", "--out", str(out),
        "--min-success", "0.8",
    )  # fmt: skip
    return run, out


def test_kitchen_figures_match_the_scripted_outcomes(kitchen_eval):
    run, out = kitchen_eval
    assert run.returncode == 1, run.stderr  # three rows are under 80%
    attempts, rows = read_lines(out)
    # What the scripts do (see each script's header): successes of 5, and calls per attempt.
    expected = {
        ("fries", "dynamic"): (4, (7 * 4 + 2) / 5),
        ("fries", "fixed"): (3, (7 * 3 + 1 * 2) / 5),
        ("fries", "query"): (0, 2),
        ("varieties", "dynamic"): (5, 3),
        ("varieties", "fixed"): (5, 2),
        ("varieties", "query"): (3, 2),
    }
    assert {key: (row["successes"], round(row["calls"], 6)) for key, row in rows.items()} == expected
    for (task, mode), row in rows.items():
        assert row["attempts"] == 5
        low, high = wilson_by_roots(row["successes"], 5)
        assert (row["low"], row["high"]) == pytest.approx((low, high), abs=1e-9), (task, mode)
    failed = sorted((a["task"], a["mode"], a["number"]) for a in attempts if not a["ok"])
    assert failed == sorted(
        [("fries", "dynamic", 4), ("fries", "fixed", 2), ("fries", "fixed", 4), ("varieties", "query", 2), ("varieties", "query", 4)]
        + [("fries", "query", n) for n in range(1, 6)]
    )
    assert rows[("varieties", "query")]["failure"] == "output count is not 3"
    assert rows[("varieties", "query")]["failures"] == 2
    assert rows[("fries", "query")]["failure"] == "not saved (model stopped)"
    # The table names the same figures, and the rows under the threshold are said.
    assert re.search(r"fries\s+\S+\s+dynamic\s+4/5 80%\s+38-96%\s+6\.0", run.stdout), run.stdout
    assert re.search(r"varieties\s+\S+\s+query\s+3/5 60%\s+23-88%", run.stdout), run.stdout
    assert "fries" in run.stderr and "60% is under 80%" in run.stderr
    assert all(a["tokens_counted_by"] in ("o200k", "estimate") and a["input_tokens"] > 0 for a in attempts)


def test_each_attempt_keeps_a_script_that_replays_and_a_trace(kitchen_eval):
    _, out = kitchen_eval
    attempts, _ = read_lines(out)
    first = next(a for a in attempts if a["task"] == "fries" and a["mode"] == "dynamic" and a["number"] == 1)
    assert Path(first["trace"]).read_text().startswith("<!DOCTYPE html>")
    replay = dagtools("call", "examples/kitchen/api.py:schema", first["script"], "--json")
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout.splitlines()[-1]) == {"outputs": {"fries": "Plate#2"}}
    # The query tool's refusal of a mutation is kept too, as a call that failed.
    refused = next(a for a in attempts if a["task"] == "fries" and a["mode"] == "query")
    calls = json.loads(Path(refused["script"]).read_text())["calls"]
    assert [(c["tool"], c.get("expect_error", False)) for c in calls] == [("query", False), ("query", True)]


def test_min_success_exits_zero_at_or_above_it():
    run = dagtools_process(
        "eval", str(KITCHEN_TASKS), "--model", KITCHEN_SCRIPTS, "-n", "5", "--out", "/dev/null/x", "--min-success", "0.8"
    )
    assert run.returncode == 2 and "/dev/null/x" in run.stderr  # an output folder that cannot exist is said
    with_out = dagtools_process(
        "eval", str(KITCHEN_TASKS), "--model", KITCHEN_SCRIPTS, "-n", "5", "--min-success", "0.8",
        "--out", str(ROOT / ".pytest-eval-out"),
    )  # fmt: skip
    shutil.rmtree(ROOT / ".pytest-eval-out", ignore_errors=True)
    assert with_out.returncode == 0, with_out.stderr  # dynamic tools: fries 4/5 = 80%, varieties 5/5
    assert "is under" not in with_out.stderr


def test_a_task_file_whose_state_check_writes_is_refused(tmp_path):
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        f"source: {ROOT / 'examples/kitchen/api.py'}:schema\nprompt: Tip the cook.\n"
        "checks:\n  state:\n    - query: 'mutation {{ tip(amount: 1) }}'\n      expect: {{tip: 1}}\n".replace("{{", "{").replace("}}", "}")
    )
    run = dagtools("eval", str(tasks), "--model", KITCHEN_SCRIPTS, "--out", str(tmp_path / "out"))
    assert run.returncode == 2
    assert "state check 1 is a mutation; a check only reads, so write a query" in run.stderr


def test_a_script_folder_without_a_mode_script_stops_the_eval_and_names_the_file(tmp_path):
    run = dagtools("eval", str(KITCHEN_TASKS), "--model", SWAPI_SCRIPTS, "-n", "2", "--out", str(tmp_path))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "no script for task fries in dynamic mode; write" in run.stderr and "fries/dynamic.yaml" in run.stderr


def test_the_query_baseline_refuses_a_mutation_and_changes_nothing():
    executor = LocalExecutor(kitchen.schema)
    reads = QueryToolset(executor)
    writes = QueryToolset(executor, mutations=True)

    async def call(toolset: QueryToolset, query: str) -> object:
        tool: Tool = toolset.tool
        return await toolset.call_tool(tool, {"query": query})

    async def scenario() -> None:
        before = await call(writes, "mutation { tip(amount: 0) }")
        with pytest.raises(ToolCallError, match="This mutation was not run: the query tool only reads here; mutations are off"):
            await call(reads, "mutation { tip(amount: 5) }")
        after = await call(writes, "mutation { tip(amount: 0) }")
        assert before == after  # the refused tip never reached the API
        assert await call(reads, "{ potato { variety } }") == {"data": {"potato": {"variety": "Russet"}}}
        named = QueryToolset(executor, mutations=["tip"])
        assert isinstance(await call(named, "mutation { tip(amount: 0) }"), dict)
        with pytest.raises(ToolCallError, match="loadOvenFromID is not allowed here; the mutations allowed are tip"):
            await call(named, 'mutation { tip(amount: 0) loadOvenFromID(id: "x") { id } }')
        with pytest.raises(ToolCallError, match="subscriptions never run"):
            await call(writes, "subscription { tip }")
        small = QueryToolset(executor, budget=40)
        cut = await call(small, "{ potatoes { variety description } }")
        assert isinstance(cut, dict) and len(cut["cut"]) == 40 and "was cut after 40" in cut["note"]

    anyio.run(scenario)


def test_swapi_suite_counts_on_a_third_party_server(swapi_url, tmp_path):  # noqa: F811
    import os

    env = {**os.environ, "SWAPI_URL": swapi_url}
    run = dagtools(
        "eval", str(SWAPI_TASKS), "--model", SWAPI_SCRIPTS, "-n", "3", "--tools", "dynamic,fixed,query", "--out", str(tmp_path), env=env
    )
    assert run.returncode == 0, run.stderr
    _, rows = read_lines(tmp_path)
    successes = {key: row["successes"] for key, row in rows.items()}
    assert successes == {
        ("director", "dynamic"): 3,
        ("director", "fixed"): 3,
        ("director", "query"): 2,  # the third attempt saves the producer
        ("hero", "dynamic"): 3,
        ("hero", "fixed"): 3,
        ("hero", "query"): 0,  # a query tool gives no handle to save
    }
    assert rows[("director", "query")]["failure"] == 'output director is not "George Lucas"'


def test_a_hosted_model_runs_dynamic_and_deferred_and_its_own_token_counts_are_reported(anthropic_server, tmp_path):  # noqa: F811
    import os

    tasks = tmp_path / "fries.yaml"
    whole = (KITCHEN_TASKS.read_text().split("  - name: varieties")[0]).replace(
        "../../kitchen/api.py", str(ROOT / "examples/kitchen/api.py")
    )
    tasks.write_text(whole)
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key"}
    run = dagtools(
        "eval", str(tasks), "--model", "anthropic:fake", "--base-url", anthropic_server.url, "-n", "2",
        "--tools", "dynamic,deferred", "--out", str(tmp_path / "out"), "--min-success", "1", env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert anthropic_server.problems == []
    attempts, rows = read_lines(tmp_path / "out")
    assert set(rows) == {("fries", "dynamic"), ("fries", "deferred")}
    turns = len(FRIES_TURNS)
    for row in rows.values():
        assert (row["successes"], row["attempts"], row["tokens_counted_by"]) == (2, 2, "model")
        assert row["calls"] == sum(len(turn) for turn in FRIES_TURNS)
        # The fake server counts 200 + the turn's number input tokens and 20 output tokens a turn.
        assert (row["input_tokens"], row["output_tokens"]) == (sum(200 + t for t in range(turns)), 20 * turns)


def test_the_report_page_renders_in_a_browser(kitchen_eval):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium) to render the page headless")
    _, out = kitchen_eval
    page = (out / "report.html").as_uri()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([str(CHROMIUM), *flags, "--dump-dom", page], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    widths = [float(w) for w in re.findall(r'<rect class="bar"[^>]* width="([0-9.]+)"', dom.stdout)]
    assert widths == pytest.approx([480 * r for r in (4 / 5, 3 / 5, 0, 1, 1, 3 / 5)])
    assert dom.stdout.count('class="interval"') == 6 and "<script" not in dom.stdout
    shot = Path("/tmp/eval-page.png")
    shot.unlink(missing_ok=True)
    taken = subprocess.run(
        [str(CHROMIUM), *flags, "--window-size=1100,560", f"--screenshot={shot}", page], capture_output=True, timeout=120
    )
    assert taken.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _rendered(page: str) -> str:
    """The DOM headless Chromium builds for `page` (a file: URI)."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    dom = subprocess.run([str(CHROMIUM), *flags, "--dump-dom", page], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout


def test_each_row_links_its_attempts_failing_first_and_a_link_opens_the_trace(kitchen_eval, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium) to render the page headless")
    _, out = kitchen_eval
    moved = tmp_path / "moved"  # the links are relative: the folder works wherever it is unpacked
    shutil.copytree(out, moved)
    dom = _rendered((moved / "report.html").as_uri())
    row = re.search(r"<tr[^>]*>(?:(?!</tr>).)*?<td>fries</td>(?:(?!</tr>).)*?<td>fixed</td>(?:(?!</tr>).)*</tr>", dom, re.S)
    assert row, dom[-3000:]
    numbers = re.findall(r"#(\d) (ok|failed)", row.group(0))
    assert numbers == [("2", "failed"), ("4", "failed"), ("1", "ok"), ("3", "ok"), ("5", "ok")]  # failing attempts first
    href = re.search(r'<a class="failed" href="([^"]+)">trace</a>', row.group(0)).group(1)
    assert not href.startswith(("/", "file:")), href
    target = (moved / href).resolve()
    assert target.is_file() and moved in target.parents
    trace = _rendered(target.as_uri())
    assert "fries" in trace and "fixed tools, attempt 2" in trace
    script = re.search(r'<a class="failed" href="([^"]+)">script</a>', row.group(0)).group(1)
    assert json.loads((moved / script).read_text())  # the script the attempt left, as `--model script:` plays it


def test_the_legend_names_the_modes_in_the_order_of_the_bars(kitchen_eval):
    _, out = kitchen_eval
    page = (out / "report.html").read_text()
    legend = re.findall(r"</i>(\w+)</span>", page.split('<p class="legend">')[1].split("</p>")[0])
    bars = list(dict.fromkeys(re.findall(r"<title>\w+ · [^<]* · (\w+): \d+/\d+</title>", page)))
    assert legend == bars == ["dynamic", "fixed", "query"]


def test_the_console_and_the_report_say_when_the_model_is_a_script(kitchen_eval):
    run, out = kitchen_eval
    assert "is a script, not a model" in run.stderr
    page = (out / "report.html").read_text()
    warning = re.search(r'<p class="warning">([^<]*)</p>', page)
    assert warning is not None and "is a script, not a model" in warning.group(1), page[:2000]
    assert page.index('class="warning"') < page.index("<svg")  # read before the figures


def test_a_refused_save_is_the_failure_with_what_the_model_was_told(tmp_path: Path):
    """A model whose save was refused did not just stop: its row says the save was refused, and why."""
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        f"source: {ROOT / 'examples/kitchen/api.py'}:schema\n"
        "tasks:\n"
        "  - name: peeled\n"
        "    prompt: Peel the potato and save it.\n"
        "    inputs: {potato: {field: potato, description: A raw potato.}, sink: {field: sink, description: A sink.}}\n"
        "    outputs: {peeled: {type: Potato, description: The peeled potato.}}\n"
    )
    scripts = tmp_path / "scripts" / "peeled"
    scripts.mkdir(parents=True)
    save_a_sink = "[{tool: save, arguments: {peeled: 'Sink#1'}}]"
    (scripts / "dynamic.yaml").write_text(f"turns:\n  - {save_a_sink}\n  - I saved it.\n")
    (scripts / "fixed.yaml").write_text(
        "turns:\n  - [{tool: callTool, arguments: {tool: save, arguments: {peeled: 'Sink#1'}}}]\n  - I saved it.\n"
    )
    out = tmp_path / "out"
    run = dagtools(
        "eval", str(tasks), "--model", f"script:{tmp_path / 'scripts'}", "-n", "1", "--tools", "dynamic,fixed", "--out", str(out)
    )
    attempts, rows = read_lines(out)
    assert len(attempts) == 2, run.stderr
    for mode in ("dynamic", "fixed"):
        failure = rows[("peeled", mode)]["failure"]
        assert failure.startswith("save refused, then the model stopped: save was not done: peeled: "), failure
        assert "Sink#1" in failure and "Potato" in failure, failure


def test_a_model_that_cannot_be_reached_says_why_in_each_attempt(tmp_path: Path):
    """An attempt the model's side ended says what it said (here: nothing listens at --base-url), in the
    console, the results and the table, not only "model error"."""
    from tests.servers import free_port

    out = tmp_path / "eval"
    base = f"http://127.0.0.1:{free_port()}/v1"
    run = dagtools(
        "eval", str(KITCHEN_TASKS), "--model", "openai:local", "--base-url", base, "-n", "1", "--tools", "dynamic",
        "--retries", "0", "--out", str(out), env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr  # every attempt ran to its verdict (no --min-success to miss)
    attempts, _ = read_lines(out)
    assert attempts and all(a["failure"].startswith("not saved (model error): the model failed: Nothing answers at") for a in attempts)
    assert f"{base}/chat/completions" in run.stderr and "--base-url" in run.stdout


def test_modes_no_model_can_take_are_refused_and_the_last_report_is_kept(tmp_path):
    out = tmp_path / "out"
    first = dagtools("eval", str(KITCHEN_TASKS), "--model", KITCHEN_SCRIPTS, "-n", "1", "--out", str(out))
    assert first.returncode == 0, first.stderr
    kept = {name: (out / name).read_bytes() for name in ("report.html", "results.jsonl")}
    assert kept["results.jsonl"]
    run = dagtools("eval", str(KITCHEN_TASKS), "--model", KITCHEN_SCRIPTS, "-n", "1", "--tools", "deferred", "--out", str(out))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "No model given can take the tool modes asked for (deferred)" in run.stderr and "--tools dynamic,deferred" in run.stderr
    assert {name: (out / name).read_bytes() for name in kept} == kept  # not replaced by an empty report


def test_a_call_script_given_as_a_task_file_says_what_each_is_for(tmp_path):
    run = dagtools("eval", str(ROOT / "examples/kitchen/fries.yaml"), "--model", KITCHEN_SCRIPTS, "--out", str(tmp_path / "out"))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "has calls: it reads as a call script, not a task" in run.stderr
    assert "dagtools call SCHEMA" in run.stderr and "--model script:FOLDER" in run.stderr
    assert not (tmp_path / "out").exists()


def test_model_options_reach_every_model_request(anthropic_server, tmp_path):  # noqa: F811
    """`--model-option` as for dagtools run: a field added to each request the eval's models send."""
    tasks = tmp_path / "fries.yaml"
    whole = KITCHEN_TASKS.read_text().split("  - name: varieties")[0].replace("../../kitchen/api.py", str(ROOT / "examples/kitchen/api.py"))
    tasks.write_text(whole)
    run = dagtools(
        "eval", str(tasks), "--model", "anthropic:fake", "--base-url", anthropic_server.url, "-n", "1", "--tools", "dynamic",
        "--model-option", "temperature=0.25", "--out", str(tmp_path / "out"), env={**os.environ, "ANTHROPIC_API_KEY": "test-key"},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert anthropic_server.requests and all(r.get("temperature") == 0.25 for r in anthropic_server.requests)
