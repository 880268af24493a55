"""Agent runs with deferred tools: one tool list, byte for byte, on every request of the fries run,
while selectTools reveals tools in place, through the official SDKs against the loopback fakes."""

from __future__ import annotations

import json

import pytest

from dagtools import ConfigError
from dagtools.agent._agent import Agent
from dagtools.models import ScriptedModel
from tests.agent.test_agent import API, FRIES, PROMPT, SEED_ARGS, dagtools
from tests.fake_models import FRIES_TURNS, FakeServer, anthropic_server, gemini_server, openai_server, raw_member, responses_server  # noqa: F401
from tests.kitchen import kitchen_session
from tests.models.test_models import make_model, run_fries

REVEALED = ["Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake", "Potato_description"]


def assert_one_tool_list(server: FakeServer) -> list[dict]:
    """Every request's `tools` member is the same bytes; the list, parsed."""
    assert len(server.raw) == len(FRIES_TURNS)
    sent = {raw_member(raw, "tools") for raw in server.raw}
    assert len(sent) == 1, f"{len(sent)} different tool lists"
    return json.loads(sent.pop())


async def test_a_deferred_anthropic_run_sends_one_tool_list_and_reveals_with_tool_references(anthropic_server):
    session, result = await run_fries(make_model(anthropic_server), tools="deferred")
    assert anthropic_server.problems == []
    assert result.reason == "saved", result.message
    assert result.outputs == {"fries": "Plate#2"} and session.object("Plate#2").type_name == "Plate"
    tools = assert_one_tool_list(anthropic_server)
    deferred = {t["name"] for t in tools if t.get("defer_loading")}
    assert {"selectTools", "save"} <= {t["name"] for t in tools} - deferred
    assert set(REVEALED) | {"Fries_plate"} <= deferred
    # The first selectTools call was answered with references to the tools it selected, and the
    # answer is repeated, the same, in every later request.
    answers = [
        block
        for body in anthropic_server.requests[1:]
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if isinstance(block, dict) and block.get("tool_use_id") == "toolu_0_0"
    ]
    assert len(answers) == len(FRIES_TURNS) - 1 and all(a == answers[0] for a in answers)
    assert answers[0]["content"] == [{"type": "tool_reference", "tool_name": name} for name in REVEALED]


async def test_a_deferred_responses_run_searches_with_tool_search_and_sends_one_tool_list(responses_server):
    session, result = await run_fries(make_model(responses_server), tools="deferred")
    assert responses_server.problems == []
    assert result.reason == "saved", result.message
    assert result.outputs == {"fries": "Plate#2"}
    tools = assert_one_tool_list(responses_server)
    assert tools[0]["type"] == "tool_search" and tools[0]["execution"] == "client"
    assert "Potato#1" in tools[0]["description"]  # the objects held when the list was made
    assert not any(t.get("name") == "selectTools" for t in tools)
    plate = next(t for t in tools if t.get("name") == "Fries_plate")
    # The model's tool_search_call went back as it came, followed by the output holding the definitions.
    items = responses_server.requests[-1]["input"]
    searches = [i for i in items if i.get("type") == "tool_search_call"]
    assert [(s["call_id"], s["arguments"]) for s in searches] == [
        ("call_0_0", {"tools": REVEALED}),
        ("call_5_0", {"tools": ["Fries_plate"]}),
    ]
    outputs = [i for i in items if i.get("type") == "tool_search_output"]
    assert outputs[1]["call_id"] == "call_5_0" and outputs[1]["tools"] == [plate]
    assert [t["name"] for t in outputs[0]["tools"]] == REVEALED
    # In the transcript, the searches are selectTools calls like any other.
    assert [call.name for call, _ in result.calls()].count("selectTools") == 2


async def test_the_fakes_refuse_a_deferred_tool_that_was_never_revealed(anthropic_server, responses_server):
    for server in (anthropic_server, responses_server):
        server.turns, server.expected = [[("Potato_peel", {"Potato": "Potato#1"})]], {}
        await run_fries(make_model(server), tools="deferred")
        assert any("Potato_peel, which the model cannot see" in p for p in server.problems), server.problems


@pytest.mark.parametrize("kind", ["openai", "gemini", "script"])
async def test_models_that_cannot_defer_refuse_deferred_tools_and_say_what_to_use(kind, openai_server, gemini_server):
    model = ScriptedModel(FRIES) if kind == "script" else make_model(openai_server if kind == "openai" else gemini_server)
    async with await kitchen_session() as session:
        with pytest.raises(ConfigError, match="anthropic:NAME or openai-responses:NAME") as refused:
            Agent(session, model, tools="deferred")
        assert "dynamic" in str(refused.value)
        with pytest.raises(ConfigError, match="dynamic, deferred"):
            Agent(session, model, tools="fixed")  # type: ignore[arg-type]
        assert len(session.context) == 0  # nothing ran
    await getattr(model, "aclose", _nothing)()


async def _nothing() -> None:
    return None


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_cli_run_with_deferred_tools(provider, anthropic_server, responses_server):
    server = anthropic_server if provider == "anthropic" else responses_server
    key = {"ANTHROPIC_API_KEY": "test-key"} if provider == "anthropic" else {"OPENAI_API_KEY": "test-key"}
    done = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", f"{provider}:fake", "--base-url", server.url, "--tools", "deferred", env=key)
    assert done.returncode == 0, done.stderr
    assert '{"fries": "Plate#2"}' in done.stdout
    assert server.problems == []
    assert len({raw_member(raw, "tools") for raw in server.raw}) == 1


def test_cli_refuses_deferred_tools_for_a_model_that_cannot_defer(openai_server):
    done = dagtools("run", API, PROMPT, *SEED_ARGS, "--model", "openai:m", "--base-url", openai_server.url, "--tools", "deferred")
    assert done.returncode == 2 and done.stdout == ""
    assert "anthropic:NAME or openai-responses:NAME" in done.stderr and "Traceback" not in done.stderr
    assert openai_server.requests == []  # refused before any request


async def test_the_bench_measures_no_lost_prefix_byte_on_the_wire_in_deferred_mode():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_prefix_wire", Path(__file__).resolve().parents[2] / "bench" / "prefix.py")
    assert spec is not None and spec.loader is not None
    prefix = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prefix)
    figures = await prefix.measure_wire()
    for provider in ("anthropic", "openai-responses"):
        assert figures["deferred", provider] == (0, 0)
        assert figures["dynamic", provider][0] > 0 and figures["dynamic", provider][1] > 0


async def test_a_select_tools_call_that_names_an_unknown_tool_still_reveals_the_others(anthropic_server, responses_server):
    for server in (anthropic_server, responses_server):
        server.turns = [[("selectTools", {"tools": ["Potato_peel", "Potato_frobnicate"]})], [("Potato_peel", {"Potato": "Potato#1"})]]
        server.expected = {}
        session, result = await run_fries(make_model(server), tools="deferred")
        assert server.problems == []
        peeled = [outcome for call, outcome in result.calls() if call.name == "Potato_peel"]
        assert len(peeled) == 1 and peeled[0] is not None and not peeled[0].is_error
        # The note on the unknown name reached the model beside the reveal, as text of its own.
        if server.provider == "anthropic":
            blocks = server.requests[1]["messages"][-1]["content"]
            assert blocks[0]["content"] == [{"type": "tool_reference", "tool_name": "Potato_peel"}]
            notes = [b["text"] for b in blocks if b["type"] == "text"]
        else:
            items = server.requests[1]["input"]
            assert [t["name"] for t in items[-2]["tools"]] == ["Potato_peel"]
            notes = [part["text"] for part in items[-1]["content"]]
        assert len(notes) == 1 and "Potato_frobnicate" in notes[0]


def test_the_wire_conversions_of_a_deferred_run():
    from dagtools import ModelError, ToolCall
    from dagtools.models._anthropic import to_anthropic_messages
    from dagtools.models._responses import parse_responses_output, to_responses_input, to_responses_tools
    from dagtools.session._context import Message

    search = {"type": "tool_search_call", "id": "ts_1", "call_id": "c1", "arguments": {"tools": ["Potato_peel"]}, "execution": "client"}
    parsed = parse_responses_output({"output": [search]})
    assert parsed.tool_calls == (ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}, id="c1"),)
    assert parsed.stop_reason == "tool_calls"
    with pytest.raises(ModelError, match="without a call_id"):
        parse_responses_output({"output": [{**search, "call_id": None}]})
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=parsed.tool_calls),
        Message(role="tool", content="ok", tool_call_id="c1"),
    ]
    output = {"type": "tool_search_output", "call_id": "c1", "execution": "client", "status": "completed", "tools": []}
    _, items = to_responses_input(history, {"c1": [output]})
    assert items[1] == {"type": "tool_search_call", "call_id": "c1", "arguments": {"tools": ["Potato_peel"]}, "execution": "client"}
    assert items[2] == output
    _, plain = to_responses_input(history)  # without reveals, the same call is an ordinary function call
    assert plain[1]["type"] == "function_call" and plain[2]["type"] == "function_call_output"
    # A deferred list is already in the Responses shape and goes out as it is.
    listed = [{"type": "tool_search", "execution": "client", "description": "d", "parameters": {}}]
    listed.append({"type": "function", "name": "f", "description": "", "parameters": {}, "strict": False, "defer_loading": True})
    assert to_responses_tools(listed) == listed
    reveal = [{"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "tool_reference", "tool_name": "Potato_peel"}]}]
    _, wire = to_anthropic_messages(history, {"c1": reveal})
    assert wire[-1] == {"role": "user", "content": reveal}
