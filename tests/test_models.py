"""Model adapters against loopback servers speaking the real wire formats; retries and model errors."""

from __future__ import annotations

import socket

import pytest

from dagtools import ModelError
from dagtools._tools import ToolCall
from dagtools.agent._agent import Agent
from dagtools.models import AnthropicModel, OpenAIModel, ScriptedModel, get_model
from dagtools.models._anthropic import parse_anthropic_response, to_anthropic_messages
from dagtools.models._openai import parse_openai_response, to_openai_messages
from dagtools.session._context import Message
from tests.fake_models import FRIES_TURNS, anthropic_server, openai_server  # noqa: F401
from tests.kitchen import kitchen_session

PROMPT = "Bake me some french fries."


def openai_model(server, **options) -> OpenAIModel:
    return OpenAIModel("fake-gpt", base_url=server.url, api_key="test-key", retry_wait=0, **options)


def anthropic_model(server, **options) -> AnthropicModel:
    return AnthropicModel("fake-claude", base_url=server.url, api_key="test-key", retry_wait=0, **options)


async def run_fries(model):
    session = await kitchen_session()
    try:
        result = await Agent(session, model).run(PROMPT)
    finally:
        await model.aclose()
    return session, result


async def test_openai_adapter_does_the_fries_task(openai_server):
    session, result = await run_fries(openai_model(openai_server))
    assert openai_server.problems == []
    assert result.reason == "saved", result.message
    assert result.outputs == {"fries": "Plate#2"}
    assert session.object("Plate#2").type_name == "Plate"
    assert result.steps == len(FRIES_TURNS)
    assert result.usage.input_tokens == sum(100 + t for t in range(len(FRIES_TURNS)))
    assert result.usage.output_tokens == 10 * len(FRIES_TURNS)
    first = openai_server.requests[0]
    assert first["model"] == "fake-gpt" and first["parallel_tool_calls"] is True
    # The parallel turn's two calls were both answered, by id, in the next request.
    tool_messages = [m for m in openai_server.requests[2]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages][-2:] == ["call_1_0", "call_1_1"]


async def test_anthropic_adapter_does_the_fries_task(anthropic_server):
    session, result = await run_fries(anthropic_model(anthropic_server))
    assert anthropic_server.problems == []
    assert result.reason == "saved", result.message
    assert result.outputs == {"fries": "Plate#2"}
    assert session.object("Plate#2").type_name == "Plate"
    assert result.usage.output_tokens == 20 * len(FRIES_TURNS)
    headers = anthropic_server.headers[0]
    assert headers["x-api-key"] == "test-key" and headers["anthropic-version"]
    last = anthropic_server.requests[-1]["messages"][-1]
    assert last["role"] == "user" and last["content"][0]["tool_use_id"] == "toolu_6_0"


async def test_server_errors_are_retried(openai_server):
    openai_server.statuses = [500, 503]
    _, result = await run_fries(openai_model(openai_server))
    assert result.reason == "saved"
    assert len(openai_server.requests) == len(FRIES_TURNS) + 2


async def test_rate_limits_are_retried_until_they_run_out(anthropic_server):
    anthropic_server.always_status = 429
    _, result = await run_fries(anthropic_model(anthropic_server, max_retries=2))
    assert result.reason == "model_error"
    assert "kept failing after 3 attempts" in result.message and "429" in result.message
    assert len(anthropic_server.requests) == 3


@pytest.mark.parametrize("status", [401, 403])
async def test_bad_key_is_a_clear_error_without_retry(openai_server, status):
    openai_server.always_status = status
    _, result = await run_fries(openai_model(openai_server))
    assert result.reason == "model_error"
    assert f"HTTP {status}" in result.message and "OPENAI_API_KEY" in result.message
    assert len(openai_server.requests) == 1
    assert result.outputs == {}


async def test_bad_key_anthropic(anthropic_server):
    anthropic_server.always_status = 401
    model = anthropic_model(anthropic_server)
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        await model.complete([Message(role="user", content="hi")], [])
    await model.aclose()


async def test_connection_refused_is_retried_then_a_model_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", retry_wait=0, max_retries=1)
    _, result = await run_fries(model)
    assert result.reason == "model_error"
    assert "could not reach" in result.message and "2 attempts" in result.message


async def test_missing_keys_are_model_errors(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        await AnthropicModel("claude").complete([], [])
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        await OpenAIModel("gpt").complete([], [])


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


def test_get_model():
    assert isinstance(get_model("openai:gpt-4o-mini", api_key="k"), OpenAIModel)
    assert get_model("ollama:llama3.2").base_url == "http://localhost:11434/v1"
    model = get_model("anthropic:claude-x", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert isinstance(model, AnthropicModel) and model.base_url == "http://127.0.0.1:9"
    assert isinstance(get_model("script:examples/kitchen/fries.yaml"), ScriptedModel)
    from dagtools import ConfigError

    for bad in ("gpt-4o", "mystery:model", "openai:"):
        with pytest.raises(ConfigError):
            get_model(bad)
