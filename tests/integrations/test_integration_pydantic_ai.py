"""pydantic-ai runs the fries task on a session's toolset, with pydantic-ai's own test models."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai", reason='pydantic-ai is not installed: pip install -e ".[pydantic-ai]"')

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

from dagtools import ToolCall  # noqa: E402
from dagtools.integrations.pydantic_ai import DagtoolsToolset  # noqa: E402
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


def scripted(turns):
    """A FunctionModel that makes one call per turn, then says it is done; it notes the tools it was offered."""
    offered: list[list[str]] = []

    def respond(messages, info: AgentInfo) -> ModelResponse:
        offered.append([t.name for t in info.function_tools])
        step = len(offered) - 1
        if step < len(turns):
            call_id, tool, arguments, _ = turns[step]
            return ModelResponse(parts=[ToolCallPart(tool, arguments, tool_call_id=call_id)])
        return ModelResponse(parts=[TextPart("Your fries are on Plate#2.")])

    return FunctionModel(respond), offered


def returns(result) -> list[ToolReturnPart]:
    return [p for m in result.all_messages() for p in m.parts if p.part_kind in ("tool-return", "retry-prompt")]


async def test_the_fries_task_runs_and_the_tools_grow_after_select_tools():
    async with await kitchen_session() as session:
        model, offered = scripted(CALLS)
        agent = Agent(model, toolsets=[DagtoolsToolset(session)])
        result = await agent.run(PROMPT)
        assert result.output == "Your fries are on Plate#2."
        check_offered(offered)
        check_results([p.model_response_str() for p in returns(result)])
        assert session.saved == {"fries": "Plate#2"} and session.done
        # The session recorded the run under the model's own call ids (seed 001).
        recorded = [c.id for m in session.context for c in m.tool_calls]
        assert recorded == [call_id for call_id, *_ in CALLS]


async def test_the_instructions_carry_the_rules_inputs_and_outputs():
    async with await kitchen_session() as session:
        seen = []

        def respond(messages, info: AgentInfo) -> ModelResponse:
            seen.append(info.instructions or "")
            return ModelResponse(parts=[TextPart("ok")])

        await Agent(FunctionModel(respond), toolsets=[DagtoolsToolset(session)]).run(PROMPT)
        assert "Oven#1: An oven you can use for cooking." in seen[0] and "selectTools" in seen[0]
        assert "fries (Plate)" in seen[0]


async def test_a_mistake_is_a_failed_result_the_model_reads_and_changes_nothing():
    async with await kitchen_session() as session:
        await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}))
        before = state(session)
        model, _ = scripted([("wrong", "Potato_peel", {"Potato": "Potato#9"}, None)])
        result = await Agent(model, toolsets=[DagtoolsToolset(session)]).run(PROMPT)
        failed = returns(result)[0]
        assert failed.outcome == "failed" and "Potato#9" in failed.model_response_str()
        assert state(session) == before


async def test_a_tool_not_offered_yet_is_refused_by_pydantic_ai_with_the_tools_offered():
    async with await kitchen_session() as session:
        before = state(session)
        model, _ = scripted([("early", "Potato_peel", {"Potato": "Potato#1"}, None)])
        result = await Agent(model, toolsets=[DagtoolsToolset(session)]).run(PROMPT)
        refused = returns(result)[0].model_response_str()
        assert "Potato_peel" in refused and "selectTools" in refused
        assert state(session) == before


async def test_pydantic_ai_test_model_calling_every_tool_ends_cleanly():
    # TestModel calls each offered tool once with arguments made from its schema: nonsense for a
    # Type#N parameter, so every mistake must come back as a result, never raise.
    async with await kitchen_session() as session:
        result = await Agent(TestModel(), toolsets=[DagtoolsToolset(session)]).run(PROMPT)
        names = {p.tool_name for p in returns(result)}
        assert {"selectTools", "save"} <= names
        assert not session.done


async def test_calls_of_one_turn_take_effect_in_the_order_the_model_made_them(transport):
    async with await chain_session(transport) as session:
        turn = ModelResponse(parts=[ToolCallPart(tool, arguments, tool_call_id=call_id) for call_id, tool, arguments in CHAIN])
        replies = iter([turn, ModelResponse(parts=[TextPart("sliced")])])
        result = await Agent(FunctionModel(lambda messages, info: next(replies)), toolsets=[DagtoolsToolset(session)]).run(PROMPT)
        check_chain(session, [p.model_response_str() for p in returns(result)])


# -- deferred: the same tool list all run long, tools revealed by selectTools ------------------------


class RecordingToolset(DagtoolsToolset):
    """The toolset's definitions at every step, as pydantic-ai asked for them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.listed: list[list[tuple]] = []

    async def get_tools(self, ctx):
        tools = await super().get_tools(ctx)
        self.listed.append(
            [(n, t.tool_def.description, t.tool_def.parameters_json_schema, t.tool_def.defer_loading) for n, t in tools.items()]
        )
        return tools


async def test_deferred_the_fries_task_runs_on_one_unchanging_tool_list_with_tools_revealed_by_select_tools():
    async with await kitchen_session() as session:
        model, offered = scripted(CALLS)
        toolset = RecordingToolset(session, deferred=True)
        result = await Agent(model, toolsets=[toolset]).run(PROMPT)
        assert result.output == "Your fries are on Plate#2." and session.saved == {"fries": "Plate#2"}
        # The toolset's definitions never changed, while the session's active set grew twice.
        assert len(toolset.listed) >= len(CALLS) and all(step == toolset.listed[0] for step in toolset.listed)
        deferred = {name for name, *_, defer in toolset.listed[0] if defer}
        assert {"Potato_rinse", "Fries_plate"} <= deferred and "selectTools" not in deferred
        # pydantic-ai revealed each selected tool from selectTools' result: this test model cannot hide
        # a declared tool, so it is offered the tools revealed so far (the tool list grows for it).
        check_offered(offered)
        deltas = [p.tools_added for m in result.all_messages() for p in m.parts if p.part_kind == "tool-availability-delta"]
        assert deltas == [["Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake"], ["Fries_plate"]]
        check_results([p.model_response_str() for p in returns(result)])


async def test_deferred_a_tool_not_revealed_yet_is_refused_and_changes_nothing():
    async with await kitchen_session() as session:
        before = state(session)
        model, _ = scripted([("early", "Potato_peel", {"Potato": "Potato#1"}, None)])
        result = await Agent(model, toolsets=[DagtoolsToolset(session, deferred=True)]).run(PROMPT)
        refused = returns(result)[0]
        # pydantic-ai refuses it before the session sees it (its text speaks of searching: selectTools here)
        assert refused.outcome == "retried" and "Potato_peel" in refused.model_response_str()
        assert state(session) == before
