"""Mellea runs the fries task through a dagtools session (seed 001: the session owns the calls and the
context), on Mellea's DummyBackend taught to answer with tool calls as Mellea's real backends do."""

from __future__ import annotations

import pytest

pytest.importorskip("mellea", reason='mellea is not installed: pip install -e ".[mellea]"')

from mellea.backends.dummy import DummyBackend  # noqa: E402
from mellea.backends.model_options import ModelOption  # noqa: E402
from mellea.backends.tools import add_tools_from_model_options, validate_tool_arguments  # noqa: E402
from mellea.core import ModelOutputThunk, ModelToolCall  # noqa: E402
from mellea.stdlib import functional as mfuncs  # noqa: E402
from mellea.stdlib.components import Message  # noqa: E402
from mellea.stdlib.context import ChatContext  # noqa: E402

from dagtools import Tool  # noqa: E402
from dagtools.integrations.mellea import call_tools, mellea_tools, tool_call_result  # noqa: E402
from tests.frameworks import (  # noqa: E402
    CALLS,
    CHAIN,
    PROMPT,
    chain_session,  # noqa: E402
    check_chain,
    check_offered,
    check_results,
)
from tests.kitchen import kitchen_session, state  # noqa: E402


class ToolCallingBackend(DummyBackend):
    """DummyBackend that answers each turn with the next scripted call, made the way Mellea's
    OpenAI-compatible backends make one (arguments checked against the offered tool's schema), and
    notes the tools it was offered."""

    def __init__(self, turns):
        super().__init__(responses=None)
        self.turns = list(turns)
        self.offered: list[list[str]] = []

    async def _generate_from_context(self, action, ctx, *, format=None, model_options=None, tool_calls=False):
        tools: dict = {}
        add_tools_from_model_options(tools, model_options or {})
        self.offered.append(list(tools))
        if not self.turns:
            reply = ModelOutputThunk(value="Your fries are on Plate#2.")
            return reply, ctx.add(action).add(reply)
        call_id, name, arguments, _ = self.turns.pop(0)
        func = tools[name]
        call = ModelToolCall(name, func, validate_tool_arguments(func, arguments, strict=False), tool_call_id=call_id)
        reply = ModelOutputThunk(value="", tool_calls=[call])
        return reply, ctx.add(action).add(reply)


async def run(session, backend, limit=20):
    """The Mellea loop of seed 001: generate with the session's current tools, let the session run the
    calls, add the tool messages to the Mellea context, until the model answers in text."""
    ctx, action, texts = ChatContext(), Message("user", PROMPT), []
    for _ in range(limit):
        options = {ModelOption.TOOLS: mellea_tools(session)}
        result, ctx = await mfuncs.aact(action, ctx, backend, model_options=options, tool_calls=True, silence_context_type_warning=True)
        if not result.tool_calls:
            return result, texts
        messages = await call_tools(session, result)
        texts += [m.content for m in messages]
        for message in messages[:-1]:
            ctx = ctx.add(message)
        action = messages[-1]
    raise AssertionError("the model never answered")


async def test_the_fries_task_runs_and_the_tools_grow_after_select_tools():
    async with await kitchen_session() as session:
        backend = ToolCallingBackend(CALLS)
        result, texts = await run(session, backend)
        assert result.value == "Your fries are on Plate#2."
        check_offered(backend.offered)
        check_results(texts)
        assert session.saved == {"fries": "Plate#2"} and session.done
        recorded = [c.id for m in session.context for c in m.tool_calls]
        assert recorded == [call_id for call_id, *_ in CALLS]


async def test_a_mistake_comes_back_as_a_tool_message_and_changes_nothing():
    async with await kitchen_session() as session:
        session.select(["Potato_peel"])
        before = state(session)
        backend = ToolCallingBackend([("wrong", "Potato_peel", {"Potato": "Potato#9"}, None)])
        _, texts = await run(session, backend)
        assert "Potato#9" in texts[0] and '"error"' in texts[0]
        assert state(session) == before


async def test_a_client_tool_is_reported_back_through_the_session():
    async with await kitchen_session() as session:
        session.add_tool(Tool(name="askChef", description="Ask the chef.", parameters={"type": "object", "properties": {}}))
        result = ModelOutputThunk(value="", tool_calls=[ModelToolCall("askChef", mellea_tools(session)[-1], {})])
        assert await call_tools(session, result) == []  # pending: the client runs it
        call = result.tool_calls[0]
        message = tool_call_result(session, call, "Salt them.")
        assert message.content == "Salt them." and message.name == "askChef"
        assert session.context.has_result(call.tool_call_id)


async def test_mellea_own_call_tools_is_pointed_at_the_session():
    # Mellea's call_tools runs a tool outside any session: the model would read this, and nothing ran.
    async with await kitchen_session() as session:
        select = next(t for t in mellea_tools(session) if t.name == "selectTools")
        result = ModelOutputThunk(value="", tool_calls=[ModelToolCall("selectTools", select, {"tools": ["Potato_peel"]})])
        [message] = await mfuncs.acall_tools(result, ToolCallingBackend([]))
        assert "call_tools(session, result)" in message.content
        assert session.active_tools == [] and len(session.context) == 0


async def test_calls_of_one_turn_take_effect_in_the_order_the_model_made_them(transport):
    async with await chain_session(transport) as session:
        tools = {t.name: t for t in mellea_tools(session)}
        result = ModelOutputThunk(
            value="", tool_calls=[ModelToolCall(tool, tools[tool], arguments, call_id) for call_id, tool, arguments in CHAIN]
        )
        check_chain(session, [m.content for m in await call_tools(session, result)])
