"""Seed 001's three ways to run tool calls, and who owns the context in each."""

from __future__ import annotations

import json

import pytest

from dagtools import ConfigError, Message, Tool, ToolCall
from dagtools.agent._agent import Agent
from dagtools.models import ScriptedModel
from dagtools.models._openai import parse_openai_response, to_openai_messages
from tests.kitchen import kitchen_session

SELECT = ToolCall(name="selectTools", arguments={"tools": ["Potato_rinse"]}, id="c1")
RINSE = ToolCall(name="Potato_rinse", arguments={"Potato": "Potato#1", "sink": "Sink#1"}, id="c2")


async def test_automatic_path_the_agent_records_everything():
    session = await kitchen_session()
    model = ScriptedModel([[SELECT], [RINSE], [{"tool": "save", "arguments": {"fries": "Plate#1"}}]])
    result = await Agent(session, model).run("Rinse the potato.")
    assert result.reason == "saved"
    roles = [m.role for m in session.context]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    assert session.context.messages[5].content == '{"result": "Potato#2"}'
    assert all(session.context.has_result(call.id) for m in session.context for call in m.tool_calls)
    assert result.transcript == session.context.messages


async def test_protocol_path_call_tool_and_client_results_are_recorded():
    session = await kitchen_session()
    await session.call_tool(SELECT)
    rinsed = await session.call_tool(RINSE)
    assert rinsed.value == {"result": "Potato#2"}
    assert [m.role for m in session.context] == ["assistant", "tool", "assistant", "tool"]
    assert session.context.messages[3].tool_call_id == "c2"

    # A tool the client runs itself: the session hands the call back and waits.
    session.add_tool(
        Tool(
            name="askUser",
            description="Ask the user a question.",
            parameters={"type": "object", "properties": {"question": {"type": "string"}}},
        )
    )
    assert "askUser" in [t.name for t in session.tools()]
    ask = ToolCall(name="askUser", arguments={"question": "Salt?"}, id="c3")
    pending = await session.call_tool(ask)
    assert pending.pending and pending.value is None
    assert session.context.has_call("c3") and not session.context.has_result("c3")
    recorded = session.tool_call_result("c3", "Yes, please.")
    assert recorded.content == "Yes, please."
    assert session.context.messages[-1] == Message(role="tool", content="Yes, please.", tool_call_id="c3", name="askUser")
    with pytest.raises(ConfigError, match="No client tool call 'c3'"):
        session.tool_call_result("c3", "again")


async def test_protocol_path_a_client_tool_result_then_the_agent_goes_on():
    """The host runs the client tool between turns, then hands the same context to an agent."""
    session = await kitchen_session()
    session.add_tool(Tool(name="askUser", description="Ask the user.", parameters={"type": "object"}))
    await session.call_tool(ToolCall(name="askUser", arguments={}, id="ask"))
    session.tool_call_result("ask", "Make it crispy.")
    model = ScriptedModel([[SELECT], [RINSE], [{"tool": "save", "arguments": {"fries": "Plate#1"}}]])
    result = await Agent(session, model).run("Go on.")
    assert result.reason == "saved"
    sent = model.history[0].messages
    assert [m.role for m in sent[:4]] == ["system", "assistant", "tool", "user"]
    assert sent[2].content == "Make it crispy." and sent[3].content == "Go on."


async def test_nothing_fancy_path_the_user_owns_the_context():
    session = await kitchen_session()
    # The user's own conversation, in the OpenAI wire format, and a model answer they parse themselves.
    history: list[Message] = [Message(role="user", content="Rinse the potato.")]
    answer = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "selectTools", "arguments": json.dumps({"tools": ["Potato_rinse"]})},
                        },
                        {
                            "id": "b",
                            "type": "function",
                            "function": {"name": "Potato_rinse", "arguments": '{"Potato": "Potato#1", "sink": "Sink#1"}'},
                        },
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    response = parse_openai_response(answer)
    history.append(Message(role="assistant", tool_calls=response.tool_calls))
    for call in response.tool_calls:
        result = await session.execute(call)
        history.append(Message(role="tool", content=result.content, tool_call_id=result.call_id))
    assert len(session.context) == 0
    assert history[-1].content == '{"result": "Potato#2"}'
    wire = to_openai_messages(history)
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in wire[2:]] == ["a", "b"]
