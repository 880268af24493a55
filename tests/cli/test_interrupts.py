"""Ctrl-C, as a user presses it: SIGINT sent to the `dagtools` console script running `run`, `eval`, `call`
and `serve`, with a slow model (tests/fake_models.py's OpenAI-compatible server, answering late) or a slow
API on loopback. The first Ctrl-C stops the command within a second or two, says where, and keeps what it
finished (a valid `run --json`, the eval's table and files for the attempts done), marked interrupted;
a second stops it at once; never a traceback; exit code 130. The in-process tests at the end press the
same stop from another thread (`INTERRUPTS.interrupt()`, what the signal handler calls)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from dagtools._interrupts import INTERRUPTS
from tests.command import ROOT, dagtools
from tests.fake_models import FakeServer

KITCHEN_API = f"{ROOT / 'examples/kitchen/api.py'}:schema"
FRIES_RUN = [
    KITCHEN_API,
    "Bake me some french fries.",
    *("--input", "oven=oven", "--input", "potato=potato", "--input", "sink=sink", "--input", "plate=plate"),
    *("--output", "fries:Plate"),
]
#: The longest the first Ctrl-C may take to stop a command, on a loaded machine (measured: 0.9-2.3 s);
#: before, a slow request held `serve` for as long as it took, and `eval` and `run` lost everything.
STOPS_WITHIN = 6.0
#: The second Ctrl-C stops at once (measured: 0.3-0.4 s, the interpreter's exit included).
STOPS_AT_ONCE = 2.5

#: An API whose `slow` field answers after 60 seconds (an async resolver: the server stays responsive).
SLOW_API = """\
import asyncio
from graphql import GraphQLField, GraphQLObjectType, GraphQLSchema, GraphQLString

async def slow(root, info):
    await asyncio.sleep(60)
    return "late"

schema = GraphQLSchema(GraphQLObjectType("Query", {
    "slow": GraphQLField(GraphQLString, resolve=slow),
    "quick": GraphQLField(GraphQLString, resolve=lambda root, info: "now"),
}))
"""


def console_script() -> list[str]:
    """The installed `dagtools` script beside this interpreter, as a user starts it."""
    script = Path(sys.executable).with_name("dagtools")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dagtools.cli"]


class Launched:
    """`dagtools ARGS` in a process of its own, its stderr read line by line as it comes."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [*console_script(), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
        )
        self.lines: list[str] = []  # stderr
        self.out: list[str] = []  # stdout
        self._readers = [
            threading.Thread(target=self._read, args=(self.process.stderr, self.lines), daemon=True),
            threading.Thread(target=self._read, args=(self.process.stdout, self.out), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line)

    def wait_for(self, condition, what: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None:
                raise AssertionError(f"dagtools stopped before {what}:\n{''.join(self.lines)}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout:g} s:\n{''.join(self.lines)}")
            time.sleep(0.05)

    def interrupt(self, times: int = 1) -> float:
        """SIGINT (`times` of them, a third of a second apart); the seconds from the first to the exit."""
        started = time.monotonic()
        for n in range(times):
            if n:
                time.sleep(0.3)
            self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)
        return time.monotonic() - started

    def finish(self) -> tuple[str, str]:
        for reader in self._readers:
            reader.join(10)
        return "".join(self.out), "".join(self.lines)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture
def slow_model():
    """An OpenAI-compatible server on loopback playing the fries script; `delay` set by the test."""
    server = FakeServer("openai")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def model_args(server: FakeServer) -> list[str]:
    return ["--model", "openai:fake-gpt", "--base-url", server.url]


MODEL_ENV = {"OPENAI_API_KEY": "sk-loopback"}


def test_run_json_stopped_by_sigint_writes_the_run_so_far_marked_interrupted(slow_model, tmp_path):
    slow_model.delay, slow_model.delay_from = 60, 2  # the first turn at once, the second held: a slow hosted model
    run = Launched("run", *FRIES_RUN, *model_args(slow_model), "--json", env=MODEL_ENV)
    try:
        run.wait_for(lambda: len(slow_model.requests) >= 2, "the second model request")
        seconds = run.interrupt()
        out, err = run.finish()
    finally:
        run.kill()
    assert run.process.returncode == 130, err
    assert seconds < STOPS_WITHIN, (seconds, err)
    assert "Traceback" not in err, err
    script = json.loads(out)  # valid JSON, the whole of stdout
    assert script["interrupted"].startswith("stopped by Ctrl-C waiting for the model's turn 2"), script
    assert "never saved fries" in script["interrupted"]
    assert [c["tool"] for c in script["calls"]] == ["selectTools"] and script["calls"][0]["expect"]
    assert script["outputs"] == {"fries": {"type": "Plate", "description": ""}}
    assert "dagtools: stopping (Ctrl-C again stops at once)" in err
    assert "dagtools: interrupted: stopped by Ctrl-C waiting for the model's turn 2" in err
    # What it wrote replays: `dagtools call` takes the note and runs the calls the run made.
    saved = tmp_path / "run.json"
    saved.write_text(out)
    replay = dagtools("call", KITCHEN_API, str(saved))
    assert "selectTools" in replay.stdout and "the script never saved fries" in replay.stderr, replay.stderr
    assert "unknown keys" not in replay.stderr


def fries_tasks(tmp_path: Path) -> Path:
    """The kitchen eval's fries task alone (the fake model plays the fries script)."""
    tasks = yaml.safe_load((ROOT / "examples/evals/kitchen/tasks.yaml").read_text())
    tasks["source"] = KITCHEN_API
    tasks["tasks"] = [t for t in tasks["tasks"] if t["name"] == "fries"]
    path = tmp_path / "tasks.yaml"
    path.write_text(yaml.safe_dump(tasks))
    return path


def test_eval_stopped_by_sigint_reports_the_attempts_done_marked_interrupted(slow_model, tmp_path):
    slow_model.delay = 0.15  # eight turns an attempt: about 1.5 s each, so attempts are always under way
    out_dir = tmp_path / "out"
    run = Launched(
        "eval", str(fries_tasks(tmp_path)), *model_args(slow_model), "-n", "200", "--concurrency", "2", "--out", str(out_dir), env=MODEL_ENV
    )
    finished = lambda: [line for line in run.lines if line.startswith("dagtools: fries fake-gpt dynamic #")]  # noqa: E731
    try:
        run.wait_for(lambda: len(finished()) >= 3, "three finished attempts")
        seconds = run.interrupt()
        out, err = run.finish()
    finally:
        run.kill()
    assert run.process.returncode == 130, err
    assert seconds < STOPS_WITHIN, (seconds, err)
    assert "Traceback" not in err, err
    done = len(finished())
    assert 3 <= done < 200
    lines = [json.loads(line) for line in (out_dir / "results.jsonl").read_text().splitlines()]
    attempts = [item for item in lines if item["kind"] == "attempt"]
    rows = [item for item in lines if item["kind"] == "row"]
    assert len(attempts) == done and all(a["ok"] for a in attempts), attempts  # those finished, none cut off
    assert sum(r["attempts"] for r in rows) == done
    assert lines[-1]["kind"] == "interrupted" and lines[-1]["attempts"] == done
    assert lines[-1]["message"].startswith(f"stopped by Ctrl-C after {done} finished attempts")
    page = (out_dir / "report.html").read_text()
    assert "<title>dagtools eval (interrupted)</title>" in page and "<strong>Interrupted:</strong>" in page
    assert f"{done}/{done} 100%" in out and "Interrupted: stopped by Ctrl-C" in out  # the table, marked
    assert f"dagtools: eval interrupted (Ctrl-C) after {done} finished attempts" in err
    assert not list(out_dir.glob(".*.partial"))


@pytest.fixture
def slow_api(tmp_path) -> Path:
    path = tmp_path / "slow_api.py"
    path.write_text(SLOW_API)
    return path


def serving(slow_api: Path) -> tuple[Launched, str]:
    server = Launched("serve", f"{slow_api}:schema", "--port", "0")
    server.wait_for(lambda: any(" at http://" in line for line in server.lines), "the serving line")
    url = next(line for line in server.lines if " at http://" in line).split(" at ", 1)[1].split(" ", 1)[0]
    return server, url


def in_flight(url: str, query: str) -> tuple[threading.Thread, dict]:
    """A request sent from a thread; the dict receives its answer (or the error)."""
    answer: dict = {}

    def send() -> None:
        try:
            response = httpx.post(url, json={"query": query}, timeout=90)
            answer["status"], answer["text"] = response.status_code, response.text
        except httpx.HTTPError as error:
            answer["error"] = error

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread, answer


def test_serve_with_a_slow_request_in_flight_stops_on_the_first_sigint(slow_api):
    server, url = serving(slow_api)
    try:
        assert httpx.post(url, json={"query": "{ quick }"}, timeout=30).json() == {"data": {"quick": "now"}}
        thread, answer = in_flight(url, "{ slow }")
        time.sleep(1)  # the request is in the resolver, for another minute
        seconds = server.interrupt()
        _, err = server.finish()
        thread.join(30)
    finally:
        server.kill()
    assert server.process.returncode == 130, err
    assert seconds < STOPS_WITHIN, (seconds, err)
    assert "Traceback" not in err and "ERROR" not in err, err
    assert answer.get("status") == 503 and "stopped (Ctrl-C) before this request finished" in answer["text"], answer
    assert "dagtools: a request under way (POST /graphql) was cut off by the stop" in err
    assert f"dagtools: stopped serving {url} (Ctrl-C)" in err


def test_serve_stops_at_once_on_a_second_sigint(slow_api):
    server, url = serving(slow_api)
    try:
        thread, _ = in_flight(url, "{ slow }")
        time.sleep(1)
        seconds = server.interrupt(times=2)
        _, err = server.finish()
        thread.join(30)
    finally:
        server.kill()
    assert server.process.returncode == 130, err
    assert seconds < STOPS_AT_ONCE, (seconds, err)
    assert "Traceback" not in err, err
    assert "dagtools: stopped at once (Ctrl-C twice)" in err


def test_call_stopped_by_sigint_says_how_far_it_got(slow_api, tmp_path):
    script = tmp_path / "slow.yaml"
    script.write_text(
        "calls:\n"
        "  - {tool: selectTools, arguments: {tools: [Query_quick, Query_slow]}}\n"
        "  - {tool: Query_quick, arguments: {}}\n"
        "  - {tool: Query_slow, arguments: {}}\n"
    )
    api, url = serving(slow_api)
    try:
        call = Launched("call", url, str(script), "--json")
        try:
            call.wait_for(lambda: len(call.out) >= 2, "the two quick calls")
            time.sleep(1)  # the third is in the API's slow resolver
            seconds = call.interrupt()
            out, err = call.finish()
        finally:
            call.kill()
    finally:
        api.kill()
    assert call.process.returncode == 130, err
    assert seconds < STOPS_WITHIN, (seconds, err)
    assert "Traceback" not in err, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r.get("tool") for r in records[:-1]] == ["selectTools", "Query_quick"]
    assert records[-1] == {"outputs": {}, "interrupted": "stopped by Ctrl-C after 2 of 3 calls"}
    assert "dagtools: stopped by Ctrl-C after 2 of 3 calls" in err


# -- in process: the same stop, pressed from another thread --------------------------------------------------


def test_an_eval_stopped_in_process_writes_what_it_finished(tmp_path):
    """The stop without a process or a signal: `INTERRUPTS.interrupt()`, what the handler calls, pressed
    from the test's thread once an attempt of the kitchen scripts has written its script."""
    out_dir = tmp_path / "out"

    def press() -> None:
        deadline = time.monotonic() + 60
        while not any(out_dir.rglob("attempt-*.script.json")) and time.monotonic() < deadline:
            time.sleep(0.01)
        INTERRUPTS.interrupt()

    presser = threading.Thread(target=press, daemon=True)
    presser.start()
    scripts = f"script:{ROOT / 'examples/evals/kitchen/scripts'}"
    run = dagtools(
        "eval", str(ROOT / "examples/evals/kitchen/tasks.yaml"), "--model", scripts, "-n", "300", "--json", "--out", str(out_dir)
    )
    presser.join(10)
    assert run.returncode == 130, run.stderr
    lines = [json.loads(line) for line in (out_dir / "results.jsonl").read_text().splitlines()]
    done = sum(item["kind"] == "attempt" for item in lines)
    assert 1 <= done < 600 and lines[-1] == {"kind": "interrupted", "message": lines[-1]["message"], "attempts": done}
    printed = [json.loads(line) for line in run.stdout.splitlines()]
    assert printed[-1] == lines[-1]  # --json ends as the file does
    assert sum(p["attempts"] for p in printed if p["kind"] == "row") == done
