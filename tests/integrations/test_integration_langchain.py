"""LangChain's agent (a LangGraph graph) runs the fries task with DagtoolsMiddleware, on
langchain-core's GenericFakeChatModel taught to bind tools."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason='langchain is not installed: pip install -e ".[langchain]"')

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402

from dagtools.integrations.langchain import DagtoolsMiddleware, langchain_tools  # noqa: E402
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


class ToolCallingFakeModel(GenericFakeChatModel):
    """GenericFakeChatModel that accepts bound tools and notes the tool names of every call."""

    offered: list[list[str]] = []
    system: list[str] = []

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        self.offered.append([t["function"]["name"] for t in kwargs.get("tools", [])])
        self.system.append(messages[0].text if messages and messages[0].type == "system" else "")
        return super()._generate(messages, stop=stop, run_manager=run_manager)


def scripted(turns) -> ToolCallingFakeModel:
    replies = [
        AIMessage(content="", tool_calls=[{"name": tool, "args": arguments, "id": call_id}]) for call_id, tool, arguments, _ in turns
    ]
    return ToolCallingFakeModel(messages=iter([*replies, AIMessage(content="Your fries are on Plate#2.")]), offered=[], system=[])


def tool_messages(result) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


async def test_the_fries_task_runs_and_the_tools_grow_after_select_tools():
    async with await kitchen_session() as session:
        model = scripted(CALLS)
        agent = create_agent(model, tools=[], system_prompt="You cook.", middleware=[DagtoolsMiddleware(session)])
        result = await agent.ainvoke({"messages": [{"role": "user", "content": PROMPT}]})
        assert result["messages"][-1].content == "Your fries are on Plate#2."
        check_offered(model.offered)
        check_results([m.text for m in tool_messages(result)])
        assert session.saved == {"fries": "Plate#2"} and session.done
        assert model.system[0].startswith("You cook.") and "Oven#1: An oven you can use for cooking." in model.system[0]
        recorded = [c.id for m in session.context for c in m.tool_calls]
        assert recorded == [call_id for call_id, *_ in CALLS]


async def test_mistakes_are_error_messages_and_change_nothing():
    async with await kitchen_session() as session:
        before = state(session)
        model = scripted([("early", "Potato_peel", {"Potato": "Potato#1"}, None), ("typo", "Potato_peal", {}, None)])
        result = await create_agent(model, tools=[], middleware=[DagtoolsMiddleware(session)]).ainvoke({"messages": [("user", PROMPT)]})
        early, typo = tool_messages(result)
        assert early.status == "error" and "not selected yet" in early.text and "Call selectTools" in early.text
        assert typo.status == "error" and "Did you mean Potato_peel" in typo.text
        assert state(session) == before


async def test_langchain_tools_run_through_the_session():
    async with await kitchen_session() as session:
        tools = {t.name: t for t in langchain_tools(session)}
        assert "Potato_peel" not in tools
        await tools["selectTools"].ainvoke({"tools": ["Potato_peel"]})
        grown = {t.name: t for t in langchain_tools(session)}
        assert await grown["Potato_peel"].ainvoke({"Potato": "Potato#1"}) == '{"result": "Potato#2"}'
        message = await grown["Potato_peel"].ainvoke(
            {"type": "tool_call", "name": "Potato_peel", "args": {"Potato": "Potato#7"}, "id": "c1"}
        )
        assert message.status == "error" and "Potato#7" in message.text
        assert session.object("Potato#2").expression == "Potato#1.peel"


async def test_a_tool_the_agent_was_created_with_still_runs():
    async with await kitchen_session() as session:
        from langchain_core.tools import tool

        @tool
        def taste(what: str) -> str:
            """Taste something."""
            return f"{what} tastes fine."

        model = scripted([("t1", "taste", {"what": "salt"}, None)])
        result = await create_agent(model, tools=[taste], middleware=[DagtoolsMiddleware(session)]).ainvoke(
            {"messages": [("user", PROMPT)]}
        )
        assert tool_messages(result)[0].text == "salt tastes fine."
        assert "taste" in model.offered[0] and "selectTools" in model.offered[0]
        assert len(session.context) == 0


async def test_calls_of_one_turn_take_effect_in_the_order_the_model_made_them(transport):
    async with await chain_session(transport) as session:
        turn = AIMessage(content="", tool_calls=[{"name": tool, "args": arguments, "id": call_id} for call_id, tool, arguments in CHAIN])
        model = ToolCallingFakeModel(messages=iter([turn, AIMessage(content="sliced")]), offered=[], system=[])
        result = await create_agent(model, tools=[], middleware=[DagtoolsMiddleware(session)]).ainvoke({"messages": [("user", PROMPT)]})
        check_chain(session, [m.text for m in tool_messages(result)])
