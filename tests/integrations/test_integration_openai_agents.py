"""The OpenAI Agents SDK runs the fries task on a session's tools, with the SDK's own ScriptedModel."""

from __future__ import annotations

import pytest

pytest.importorskip("agents", reason='openai-agents is not installed: pip install -e ".[openai-agents]"')

from agents import Agent, RunConfig, Runner  # noqa: E402
from agents.items import ToolCallOutputItem  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from dagtools import ToolCall  # noqa: E402
from dagtools.integrations.openai_agents import DagtoolsTools  # noqa: E402
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

OFFLINE = RunConfig(tracing_disabled=True)


def scripted(turns) -> ScriptedModel:
    steps = [[function_call(tool, arguments, call_id=call_id)] for call_id, tool, arguments, _ in turns]
    return ScriptedModel([*steps, [assistant_message("Your fries are on Plate#2.")]])


def outputs(result) -> list[str]:
    return [str(item.output) for item in result.new_items if isinstance(item, ToolCallOutputItem)]


async def test_the_fries_task_runs_and_the_tools_grow_after_select_tools():
    async with await kitchen_session() as session:
        model = scripted(CALLS)
        tools = DagtoolsTools(session)
        agent = Agent(name="cook", model=model, tools=tools, instructions=tools.instructions)
        result = await Runner.run(agent, PROMPT, run_config=OFFLINE, max_turns=20)
        assert result.final_output == "Your fries are on Plate#2."
        check_offered([[t.name for t in call.tools] for call in model.calls])
        check_results(outputs(result))
        assert session.saved == {"fries": "Plate#2"} and session.done
        assert "Oven#1: An oven you can use for cooking." in (model.calls[0].system_instructions or "")
        recorded = [c.id for m in session.context for c in m.tool_calls]
        assert recorded == [call_id for call_id, *_ in CALLS]


async def test_a_mistake_is_a_result_the_model_reads_and_changes_nothing():
    async with await kitchen_session() as session:
        await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}))
        before = state(session)
        model = scripted([("wrong", "Potato_peel", '{"Potato": "Potato#9"', None)])  # cut-off JSON
        result = await Runner.run(Agent(name="cook", model=model, tools=DagtoolsTools(session)), PROMPT, run_config=OFFLINE)
        assert "not valid JSON" in outputs(result)[0]
        assert state(session) == before


async def test_tools_the_host_selects_between_runs_are_offered_at_the_next_run():
    async with await kitchen_session() as session:
        tools = DagtoolsTools(session)
        session.select(["Potato_peel"])
        model = ScriptedModel([[assistant_message("ok")]])
        await Runner.run(Agent(name="cook", model=model, tools=tools), PROMPT, run_config=OFFLINE)
        assert "Potato_peel" in [t.name for t in model.calls[0].tools]


async def test_calls_of_one_turn_take_effect_in_the_order_the_model_made_them(transport):
    async with await chain_session(transport) as session:
        turn = [function_call(tool, arguments, call_id=call_id) for call_id, tool, arguments in CHAIN]
        model = ScriptedModel([turn, [assistant_message("sliced")]])
        result = await Runner.run(Agent(name="cook", model=model, tools=DagtoolsTools(session)), PROMPT, run_config=OFFLINE)
        check_chain(session, outputs(result))
