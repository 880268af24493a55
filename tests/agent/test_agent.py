"""The agent loop: scripted runs that save, and every way a run can go wrong ending with a clear reason."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from dagtools import ModelError, Tool, ToolCall
from dagtools.agent._agent import Agent, system_prompt
from dagtools.models import FunctionModel, ModelResponse, ScriptedModel, Usage
from tests.command import dagtools as run_command
from tests.fake_models import anthropic_server, gemini_server, openai_server, responses_server  # noqa: F401
from tests.kitchen import SEED_INPUTS, kitchen_session

ROOT = Path(__file__).resolve().parents[2]
FRIES = ROOT / "examples" / "kitchen" / "fries.yaml"
API = f"{ROOT / 'examples' / 'kitchen' / 'api.py'}:schema"
PROMPT = "Bake me some french fries."


async def run(turns, **options):
    session = await kitchen_session()
    model = turns if hasattr(turns, "complete") else ScriptedModel(turns)
    result = await Agent(session, model, **options).run(PROMPT)
    return session, model, result


def tool_messages(result):
    return [m for m in result.transcript if m.role == "tool"]


async def test_scripted_fries_run_saves_a_plate():
    session, model, result = await run(FRIES)
    assert result.reason == "saved" and result.ok
    assert result.outputs == {"fries": "Plate#2"}
    assert session.object("Plate#2").type_name == "Plate"
    assert result.steps == 8 and result.usage.total_tokens > 0
    # Tools are re-rendered after each selectTools: Potato_rinse is offered from the second turn.
    assert "Potato_rinse" not in model.history[0].tool_names
    assert "Potato_rinse" in model.history[1].tool_names
    assert "Fries_plate" in model.history[6].tool_names
    # The run is recorded in the session's context: system prompt, prompt, then calls and results.
    assert result.transcript[0].role == "system" and result.transcript[1].content == PROMPT
    assert [c.name for c, _ in result.calls()][-1] == "save"
    assert all(r is not None and not r.is_error for _, r in result.calls())


async def test_system_prompt_states_the_rules_inputs_and_outputs():
    session = await kitchen_session()
    await session.add_input("limit", value=3, description="How many potatoes at most.")
    text = system_prompt(session)
    for needle in (
        "immutable",
        "Type#N",
        "selectTools",
        "save",
        "Oven#1: An oven you can use for cooking.",
        "limit = 3",
        "fries (Plate): The baked french fries, on a plate.",
    ):
        assert needle in text


async def test_a_model_that_never_saves_is_told_once_then_the_run_ends():
    _, model, result = await run(["I baked them in my head.", "Really, they are done."])
    assert result.reason == "model_stopped"
    assert "stopped twice without saving fries" in result.message
    assert result.steps == 2 and result.outputs == {}
    nudges = [m for m in result.transcript if m.role == "user" and "without saving" in m.content]
    assert len(nudges) == 1 and "fries" in nudges[0].content
    assert model.history[1].messages[-1] == nudges[0]


async def test_a_nudged_model_can_still_finish():
    turns = ["Done!"] + [[call] for call in __import__("yaml").safe_load(FRIES.read_text())["calls"]]
    _, _, result = await run(turns)
    assert result.reason == "saved" and result.steps == 9


async def test_unknown_tools_come_back_as_errors_and_the_run_ends_cleanly():
    _, _, result = await run([[{"tool": "Potato_fry", "arguments": {}}], "I give up."])
    error = tool_messages(result)[0]
    assert error.is_error and "There is no tool Potato_fry" in error.content
    assert result.reason == "model_stopped"


async def test_a_tool_called_before_it_is_selected_is_an_error():
    _, _, result = await run([[{"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}}], "stop", "stop"])
    error = tool_messages(result)[0]
    assert error.is_error and "not selected yet" in json.loads(error.content)["error"]
    assert result.reason == "model_stopped"


async def test_bad_json_arguments_are_an_error_result():
    _, _, result = await run([[{"tool": "selectTools", "arguments": '{"tools": [Potato_peel'}], "stop", "stop"])
    error = tool_messages(result)[0]
    assert error.is_error and "not valid JSON" in error.content
    assert result.reason == "model_stopped"


async def test_a_looping_model_stops_at_the_step_limit():
    model = FunctionModel(lambda messages, tools: [{"tool": "selectTools", "arguments": {"tools": ["Potato_peel"]}}])
    _, _, result = await run(model, max_steps=5)
    assert result.reason == "step_limit" and result.steps == 5
    assert "step limit" in result.message and "fries" in result.message
    assert len(model.history) == 5


async def test_the_token_limit_stops_a_run():
    looping = FunctionModel(
        lambda messages, tools: ModelResponse(
            tool_calls=(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}),),
            usage=Usage(input_tokens=400, output_tokens=200),
        )
    )
    _, _, result = await run(looping, max_tokens=1000)
    assert result.reason == "token_limit" and result.steps == 2
    assert result.usage.total_tokens == 1200


@pytest.mark.parametrize("error", [ModelError("The model refused: no."), RuntimeError("socket exploded")])
async def test_a_model_exception_ends_the_run_with_its_message(error):
    _, _, result = await run([[{"tool": "selectTools", "arguments": {"tools": ["Potato_peel"]}}], error])
    assert result.reason == "model_error"
    assert str(error) in result.message and result.steps == 2


async def test_a_client_tool_in_an_automatic_run_tells_the_model_no_one_runs_it():
    session = await kitchen_session()
    session.add_tool(Tool(name="askUser", description="Ask the user.", parameters={"type": "object"}))
    result = await Agent(session, ScriptedModel([[{"tool": "askUser"}], "ok", "ok"])).run(PROMPT)
    error = tool_messages(result)[0]
    assert error.is_error and "run by the client" in error.content
    assert result.reason == "model_stopped"


def test_run_sync():
    import anyio

    from dagtools import open_session

    async def make():
        from examples.kitchen.api import schema

        return await open_session(schema, inputs=SEED_INPUTS, outputs={"fries": "Plate"})

    session = anyio.run(make)
    result = Agent(session, ScriptedModel(FRIES)).run_sync(PROMPT)
    assert result.reason == "saved"


# -- the command line ----------------------------------------------------------------------------------


def dagtools(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", **(env or {})}
    keys = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
    for key in (*keys, "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        if key not in (env or {}):
            full_env.pop(key, None)
    return run_command(*args, env=full_env)


SEED_ARGS = [
    "--input",
    "oven=oven:An oven you can use for cooking.",
    "--input",
    "potato=potato:The raw potato to turn into french fries.",
    "--input",
    "sink=sink:A sink for cleaning food.",
    "--input",
    "plate=plate:A plate for serving food.",
    "--output",
    "fries:Plate:The baked french fries, on a plate.",
]


def test_cli_run_with_a_script_model_and_replay_its_json(tmp_path):
    done = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", f"script:{FRIES}")
    assert done.returncode == 0, done.stderr
    assert "Oven_bake" in done.stdout and '{"fries": "Plate#2"}' in done.stdout
    assert "saved" in done.stderr and "tokens" in done.stderr
    as_json = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", f"script:{FRIES}", "--json")
    assert as_json.returncode == 0, as_json.stderr
    script = json.loads(as_json.stdout)
    assert script["calls"][-1]["tool"] == "save"
    assert script["calls"][1]["expect"] == {"result": "Potato#2"}
    path = tmp_path / "run.json"
    path.write_text(as_json.stdout)
    replay = dagtools("call", API, str(path))
    assert replay.returncode == 0, replay.stderr
    assert '{"fries": "Plate#2"}' in replay.stdout
    # The recorded run plays back as a model too.
    again = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", f"script:{path}")
    assert again.returncode == 0 and '{"fries": "Plate#2"}' in again.stdout


def test_a_run_without_outputs_fails_when_every_call_failed(tmp_path):
    """With no outputs asked for, the model's last words are the answer: a script may trust exit 0
    only when some call brought data back."""
    failing = tmp_path / "failing.json"
    failing.write_text(json.dumps({"calls": [{"tool": "Potato_peal", "arguments": {"Potato": "Potato#1"}}]}))
    done = dagtools("run", API, "Peel the potato.", *SEED_ARGS[:4], "--model", f"script:{failing}")
    assert done.returncode == 1, done.stderr
    assert "every tool call failed (1 call)" in done.stderr
    working = tmp_path / "working.json"
    peel = [{"tool": "selectTools", "arguments": {"tools": ["Potato_peel"]}}, {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}}]
    working.write_text(json.dumps({"calls": [{"tool": "Potato_peal", "arguments": {"Potato": "Potato#1"}}, *peel]}))
    done = dagtools("run", API, "Peel the potato.", *SEED_ARGS[:4], "--model", f"script:{working}")
    assert done.returncode == 0, done.stderr
    assert "every tool call failed" not in done.stderr


def test_cli_run_through_openai(openai_server):
    done = dagtools(
        "run",
        API,
        PROMPT,
        *SEED_ARGS,
        "--model",
        "openai:fake-gpt",
        "--base-url",
        openai_server.url,
        "--model-option",
        "temperature=0.5",
        "--model-option",
        "top_k=40",
        "--model-option",
        'stop=["END"]',
        "--model-option",
        "service_tier=flex",
        env={"OPENAI_API_KEY": "test-key"},
    )
    assert done.returncode == 0, done.stderr
    assert '{"fries": "Plate#2"}' in done.stdout and "100 in" in done.stdout
    assert 'Potato_rinse(Potato: "Potato#1", sink: "Sink#1")' in done.stdout
    assert openai_server.problems == []
    first = openai_server.requests[0]
    assert (first["temperature"], first["top_k"], first["stop"], first["service_tier"]) == (0.5, 40, ["END"], "flex")


@pytest.mark.parametrize("provider", ["openai-responses", "gemini"])
def test_cli_run_through_the_responses_api_and_gemini(provider, responses_server, gemini_server):
    server = responses_server if provider == "openai-responses" else gemini_server
    key = {"OPENAI_API_KEY": "test-key"} if provider == "openai-responses" else {"GEMINI_API_KEY": "test-key"}
    done = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", f"{provider}:fake", "--base-url", server.url, env=key)
    assert done.returncode == 0, done.stderr
    assert '{"fries": "Plate#2"}' in done.stdout
    assert server.problems == [] and len(server.requests) == 8


def test_cli_demo_through_anthropic(anthropic_server):
    done = dagtools("demo", "--model", "anthropic:fake-claude", "--base-url", anthropic_server.url, env={"ANTHROPIC_API_KEY": "test-key"})
    assert done.returncode == 0, done.stderr
    assert '{"fries": "Plate#2"}' in done.stdout
    assert anthropic_server.problems == []
    assert anthropic_server.requests[0]["messages"][0]["content"][0]["text"] == PROMPT


@pytest.mark.parametrize("command", ["run", "demo"])
def test_cli_without_a_key_fails_first(command):
    arguments = ["run", API, PROMPT, *SEED_ARGS] if command == "run" else ["demo"]
    done = dagtools(*arguments, "--model", "anthropic:claude-x")
    assert done.returncode == 2
    assert done.stdout == ""  # nothing ran: no steps, no "Outputs" section
    assert "No Anthropic API key" in done.stderr and "ANTHROPIC_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_a_refused_local_model_server_fails_fast():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", "openai:local", "--base-url", f"http://127.0.0.1:{port}/v1")
    # One attempt (the time it takes is pinned in test_model_wire, without an interpreter's start).
    assert done.returncode == 1 and "(1 steps" in done.stderr
    assert f"Nothing answers at http://127.0.0.1:{port}/v1" in done.stderr and "model server is running" in done.stderr


def test_cli_retries_and_turn_timeout(openai_server):
    openai_server.always_status = 503
    done = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", "openai:m", "--base-url", openai_server.url, "--retries", "1")
    assert done.returncode == 1 and "kept failing after 2 attempts (HTTP 503)" in done.stderr
    assert len(openai_server.requests) == 2
    openai_server.always_status = None
    openai_server.delay = 3
    started = time.monotonic()
    done = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", "openai:m", "--base-url", openai_server.url, "--turn-timeout", "0.5")
    assert done.returncode == 1 and "no answer" in done.stderr and "--turn-timeout" in done.stderr
    assert len(openai_server.requests) <= 3 and time.monotonic() - started < 10  # one request at most, never resent
    bad = dagtools("run", API, PROMPT, "--model", "openai:m", "--model-option", "=1")
    assert bad.returncode == 2 and "KEY=JSON" in bad.stderr


def test_cli_rejects_bad_specs():
    bad_model = dagtools("run", API, PROMPT, "--model", "gpt4")
    assert bad_model.returncode == 2 and "provider:name" in bad_model.stderr
    bad_output = dagtools("run", API, PROMPT, "--output", "fries", "--model", f"script:{FRIES}")
    assert bad_output.returncode == 2 and "name:Type" in bad_output.stderr


def test_parse_input_keeps_colons_inside_the_chain():
    from dagtools.cli._options import parse_input, parse_output, parse_value

    assert parse_input('repo=repository(owner: "a", name: "b:c"):The repo') == (
        "repo",
        {"field": 'repository(owner: "a", name: "b:c")', "description": "The repo"},
    )
    assert parse_input("oven=oven") == ("oven", {"field": "oven", "description": ""})
    assert parse_value("limit=3") == ("limit", {"value": 3})
    assert parse_value("name=octocat") == ("name", {"value": "octocat"})
    assert parse_output("fries:[Plate!]:All of them") == ("fries", {"type": "[Plate!]", "description": "All of them"})


async def test_a_model_turn_goes_through_call_tools_as_one_batch():
    session = await kitchen_session()
    batches: list[list[str]] = []
    original = session.call_tools

    async def call_tools(calls):
        batches.append([c.name for c in calls])
        return await original(calls)

    session.call_tools = call_tools  # type: ignore[attr-defined]
    turns = [
        [{"tool": "selectTools", "arguments": {"tools": ["Potato_rinse", "Potato_description"]}}],
        [
            {"tool": "Potato_rinse", "arguments": {"Potato": "Potato#1", "sink": "Sink#1"}},
            {"tool": "Potato_description", "arguments": {"Potato": "Potato#1"}},
        ],
        [{"tool": "save", "arguments": {"fries": "Plate#1"}}],
    ]
    result = await Agent(session, ScriptedModel(turns)).run(PROMPT)
    assert result.reason == "saved"
    assert batches[1] == ["Potato_rinse", "Potato_description"]


def test_mcp_and_run_read_the_same_option_forms():
    from dagtools.cli._options import parse_input, parse_output

    assert parse_input("oven=oven # An oven") == parse_input("oven=oven:An oven") == ("oven", {"field": "oven", "description": "An oven"})
    assert (
        parse_output("fries=Plate # On a plate")
        == parse_output("fries:Plate:On a plate")
        == ("fries", {"type": "Plate", "description": "On a plate"})
    )
