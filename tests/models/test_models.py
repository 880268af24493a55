"""Model adapters on the official SDKs against loopback servers speaking the real wire formats."""

from __future__ import annotations

import pytest

from dagtools import ModelError
from dagtools._tools import ToolCall
from dagtools.agent._agent import Agent
from dagtools.models import AnthropicModel, GeminiModel, OpenAIModel, OpenAIResponsesModel, ScriptedModel, get_model
from dagtools.models._anthropic import parse_anthropic_response, to_anthropic_messages
from dagtools.models._gemini import to_gemini_contents
from dagtools.models._openai import parse_openai_response, to_openai_messages
from dagtools.models._responses import parse_responses_output, to_responses_input, to_responses_tools
from dagtools.session._context import Message
from tests.fake_models import FRIES_TURNS, anthropic_server, gemini_server, openai_server, responses_server  # noqa: F401
from tests.kitchen import kitchen_session

PROMPT = "Bake me some french fries."


def make_model(server, **options):
    """The adapter for the fake `server`, pointed at it with the SDK's base URL option."""
    kind = {"openai": OpenAIModel, "responses": OpenAIResponsesModel, "anthropic": AnthropicModel, "gemini": GeminiModel}
    if server.provider == "gemini":
        options.setdefault("retry_wait", 0.01)
    return kind[server.provider](f"fake-{server.provider}", base_url=server.url, api_key="test-key", **options)


async def run_fries(model, **agent_options):
    session = await kitchen_session()
    try:
        result = await Agent(session, model, **agent_options).run(PROMPT)
    finally:
        await model.aclose()
    return session, result


async def test_openai_adapter_does_the_fries_task(openai_server):
    session, result = await run_fries(make_model(openai_server))
    assert openai_server.problems == []
    assert result.reason == "saved", result.message
    assert result.outputs == {"fries": "Plate#2"}
    assert session.object("Plate#2").type_name == "Plate"
    assert result.steps == len(FRIES_TURNS)
    assert result.usage.input_tokens == sum(100 + t for t in range(len(FRIES_TURNS)))
    assert result.usage.output_tokens == 10 * len(FRIES_TURNS)
    first = openai_server.requests[0]
    assert first["model"] == "fake-openai" and first["parallel_tool_calls"] is True and first["tool_choice"] == "auto"
    # The parallel turn's two calls were both answered, by id, in the next request.
    tool_messages = [m for m in openai_server.requests[2]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages][-2:] == ["call_1_0", "call_1_1"]
    # The request went through the official SDK.
    assert openai_server.headers[0]["x-stainless-lang"] == "python"


async def test_responses_adapter_does_the_fries_task(responses_server):
    session, result = await run_fries(make_model(responses_server))
    assert responses_server.problems == []
    assert result.reason == "saved", result.message
    assert result.outputs == {"fries": "Plate#2"} and session.object("Plate#2").type_name == "Plate"
    assert result.usage.output_tokens == 30 * len(FRIES_TURNS)
    first = responses_server.requests[0]
    assert first["store"] is False and first["input"] == [{"role": "user", "content": PROMPT}]
    outputs = [i for i in responses_server.requests[2]["input"] if i.get("type") == "function_call_output"]
    assert [i["call_id"] for i in outputs][-2:] == ["call_1_0", "call_1_1"]


async def test_anthropic_adapter_does_the_fries_task(anthropic_server):
    session, result = await run_fries(make_model(anthropic_server))
    assert anthropic_server.problems == []
    assert result.reason == "saved", result.message
    assert result.outputs == {"fries": "Plate#2"}
    assert session.object("Plate#2").type_name == "Plate"
    assert result.usage.output_tokens == 20 * len(FRIES_TURNS)
    headers = anthropic_server.headers[0]
    assert "test-key" in headers.get("x-api-key", headers["authorization"]) and headers["anthropic-version"]
    assert headers["x-stainless-lang"] == "python"
    last = anthropic_server.requests[-1]["messages"][-1]
    assert last["role"] == "user" and last["content"][0]["tool_use_id"] == "toolu_6_0"


async def test_gemini_adapter_does_the_fries_task(gemini_server):
    session, result = await run_fries(make_model(gemini_server))
    assert gemini_server.problems == []
    assert result.reason == "saved", result.message
    assert result.outputs == {"fries": "Plate#2"} and session.object("Plate#2").type_name == "Plate"
    assert result.usage.input_tokens == sum(400 + t for t in range(len(FRIES_TURNS)))
    assert "google-genai-sdk" in gemini_server.headers[0]["x-goog-api-client"]
    # The parallel turn's two calls were answered together, by name and id, in the next user turn.
    answers = gemini_server.requests[2]["contents"][-1]["parts"]
    assert [(p["functionResponse"]["name"], p["functionResponse"]["id"]) for p in answers] == [
        ("Potato_rinse", "fc_1_0"),
        ("Potato_description", "fc_1_1"),
    ]


async def test_provider_options_reach_the_request_and_can_override(openai_server, gemini_server):
    model = make_model(openai_server, extra={"top_k": 40, "tool_choice": "required"})
    await model.complete([Message(role="user", content="hi")], [{"type": "function", "function": {"name": "f", "parameters": {}}}])
    await model.aclose()
    assert openai_server.requests[0]["top_k"] == 40 and openai_server.requests[0]["tool_choice"] == "required"
    model = make_model(gemini_server, extra={"cachedContent": "cachedContents/x"})
    await model.complete([Message(role="user", content="hi")], [])
    await model.aclose()
    assert gemini_server.requests[0]["cachedContent"] == "cachedContents/x"


async def test_missing_keys_fail_when_the_model_is_made(monkeypatch):
    for variable in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
    ):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude")
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt")
    with pytest.raises(ModelError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        get_model("gemini:gemini-2.5-flash")
    # A server of its own (llama.cpp, vLLM) needs no key.
    assert OpenAIModel("local", base_url="http://127.0.0.1:9/v1").api_key
    monkeypatch.setenv("GOOGLE_API_KEY", "from-env")
    assert GeminiModel("g").api_key == "from-env"


def test_malformed_and_refused_answers():
    with pytest.raises(ModelError, match="no choices"):
        parse_openai_response({"object": "chat.completion"})
    with pytest.raises(ModelError, match="refused: no can do"):
        parse_openai_response({"choices": [{"message": {"role": "assistant", "refusal": "no can do"}}]})
    with pytest.raises(ModelError, match="malformed tool call"):
        parse_openai_response({"choices": [{"message": {"tool_calls": [{"id": "x"}]}}]})
    with pytest.raises(ModelError, match="refused"):
        parse_anthropic_response({"content": [], "stop_reason": "refusal"})
    with pytest.raises(ModelError, match="no content"):
        parse_anthropic_response({"type": "message"})
    with pytest.raises(ModelError, match="refused: no"):
        parse_responses_output({"output": [{"type": "message", "content": [{"type": "refusal", "refusal": "no"}]}]})
    with pytest.raises(ModelError, match="failed response: boom"):
        parse_responses_output({"status": "failed", "error": {"message": "boom"}})
    incomplete = parse_responses_output({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []})
    assert incomplete.stop_reason == "max_tokens"


def test_openai_keeps_bad_json_arguments_as_text():
    response = parse_openai_response(
        {
            "choices": [
                {
                    "message": {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "save", "arguments": "{oops"}}]},
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    assert response.tool_calls == (ToolCall(name="save", arguments="{oops", id="c1"),)
    wire = to_openai_messages([Message(role="assistant", tool_calls=response.tool_calls)])
    assert wire[0]["tool_calls"][0]["function"]["arguments"] == "{oops"


def test_anthropic_messages_alternate_and_flag_errors():
    call = ToolCall(name="Potato_peel", arguments={"Potato": "Potato#9"}, id="t1")
    system, wire = to_anthropic_messages(
        [
            Message(role="system", content="rules"),
            Message(role="user", content="go"),
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", content='{"error": "no Potato#9"}', tool_call_id="t1", is_error=True),
            Message(role="user", content="You stopped without saving."),
        ]
    )
    assert system == "rules"
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert wire[2]["content"][0] == {"type": "tool_result", "tool_use_id": "t1", "content": '{"error": "no Potato#9"}', "is_error": True}
    assert wire[2]["content"][1]["type"] == "text"


def test_assistant_tool_calls_carry_empty_text_never_null_or_none():
    """llama-cpp-python refuses `"content": null` (500) and its templates read `content`, so a message
    without the key fails as well ("'dict object' has no attribute 'content'"): "" is what every server takes."""
    call = ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}, id="c1")
    wire = to_openai_messages([Message(role="assistant", tool_calls=(call,)), Message(role="assistant", content="")])
    assert wire[0]["content"] == "" and wire[0]["tool_calls"][0]["id"] == "c1"
    assert wire[1] == {"role": "assistant", "content": ""}


def test_responses_and_gemini_conversions():
    call = ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}, id="c1")
    history = [
        Message(role="system", content="rules"),
        Message(role="user", content="go"),
        Message(role="assistant", content="Peeling.", tool_calls=(call,)),
        Message(role="tool", content='{"result": "Potato#2"}', tool_call_id="c1"),
        Message(role="tool", content="plain text", tool_call_id="c1"),
    ]
    instructions, items = to_responses_input(history)
    assert instructions == "rules"
    assert [i.get("type") or i["role"] for i in items] == [
        "user",
        "assistant",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert items[2]["arguments"] == '{"Potato": "Potato#1"}'
    tool = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}
    assert to_responses_tools([tool]) == [
        {"type": "function", "name": "f", "description": "d", "parameters": {"type": "object"}, "strict": False}
    ]
    system, contents = to_gemini_contents(history, {"c1": b"sig"})
    assert system == "rules" and [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"][1] == {
        "function_call": {"id": "c1", "name": "Potato_peel", "args": {"Potato": "Potato#1"}},
        "thought_signature": b"sig",
    }
    responses = [p["function_response"] for p in contents[2]["parts"]]
    assert [r["response"] for r in responses] == [{"result": "Potato#2"}, {"output": "plain text"}]
    assert {r["name"] for r in responses} == {"Potato_peel"}


def test_get_model():
    assert isinstance(get_model("openai:gpt-4o-mini", api_key="k"), OpenAIModel)
    assert isinstance(get_model("openai-responses:gpt-4o-mini", api_key="k"), OpenAIResponsesModel)
    assert get_model("ollama:llama3.2").base_url == "http://localhost:11434/v1"
    model = get_model("anthropic:claude-x", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert isinstance(model, AnthropicModel) and model.base_url == "http://127.0.0.1:9"
    gemini = get_model("gemini:gemini-2.5-flash", api_key="k", max_retries=0, extra={"top_k": 3})
    assert isinstance(gemini, GeminiModel) and gemini.tool_format == "gemini" and gemini.extra == {"top_k": 3}
    assert isinstance(get_model("script:examples/kitchen/fries.yaml"), ScriptedModel)
    from dagtools import ConfigError

    for bad in ("gpt-4o", "mystery:model", "openai:"):
        with pytest.raises(ConfigError):
            get_model(bad)
