"""The deferred rendering: one tool list for the whole run, with selected tools revealed in place, so
the provider's cached prompt prefix survives each selectTools."""

from __future__ import annotations

import json

import pytest

from dagtools import ToolCall
from dagtools.catalogue._render import render_tool
from tests.frameworks import CALLS
from tests.kitchen import call, kitchen_session, state

FORMATS = ["anthropic", "openai-responses"]


async def run_fries(session, format):
    """The fries task, one call per turn; the deferred list as rendered before each turn, and each
    selectTools answer."""
    listed = session.deferred_tools()
    rendered, answers = [], []
    for call_id, tool, arguments, _ in CALLS:
        rendered.append(json.dumps(listed.render(format)))
        made = ToolCall(name=tool, arguments=arguments, id=call_id)
        result = (await session.call_tools([made]))[0]
        assert not result.is_error, result.content
        if listed.selects(tool):
            answers.append(listed.answer(made, result, format))
    rendered.append(json.dumps(listed.render(format)))
    return rendered, answers


@pytest.mark.parametrize("format", FORMATS)
async def test_the_deferred_tool_list_is_byte_identical_across_a_run_where_tools_get_selected(format):
    async with await kitchen_session() as session:
        dynamic_before = session.render_tools("anthropic")
        rendered, _ = await run_fries(session, format)
        assert session.saved == {"fries": "Plate#2"}
        assert len(set(rendered)) == 1  # every turn: the same bytes
        assert session.render_tools("anthropic") != dynamic_before  # where the dynamic list grew
        tools = json.loads(rendered[0])
        deferred = [t["name"] for t in tools if t.get("defer_loading")]
        assert {"Potato_rinse", "Oven_bake", "Fries_plate", "Query_potatoes"} <= set(deferred)
        assert len(deferred) == len(session.catalogue)  # the whole kitchen is listed


async def test_on_anthropic_select_tools_answers_with_tool_references_to_the_tools_it_selected():
    async with await kitchen_session() as session:
        _, answers = await run_fries(session, "anthropic")
        first, second = answers
        assert first == [
            {
                "type": "tool_result",
                "tool_use_id": "initialToolsCall",
                "content": [
                    {"type": "tool_reference", "tool_name": n} for n in ("Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake")
                ],
            }
        ]
        assert second[0]["content"] == [{"type": "tool_reference", "tool_name": "Fries_plate"}]


async def test_on_openai_responses_select_tools_is_the_client_tool_search_and_its_output_carries_the_definitions():
    async with await kitchen_session() as session:
        listed = session.deferred_tools()
        tools = listed.render("openai-responses")
        search = [t for t in tools if t["type"] == "tool_search"]
        assert len(search) == 1 and search[0]["execution"] == "client"
        assert "Potato#1" in search[0]["description"] and set(search[0]["parameters"]["properties"]) == {"tools", "search"}
        assert not any(t.get("name") == "selectTools" for t in tools)
        _, answers = await run_fries(session, "openai-responses")
        output = answers[1][0]
        assert output["type"] == "tool_search_output" and output["call_id"] == "moreToolsCall"
        plate = next(t for t in tools if t.get("name") == "Fries_plate")
        assert output["tools"] == [plate]  # the very definition the list holds, flag included
        assert plate["defer_loading"] is True and plate["strict"] is False


async def test_type_star_reveals_every_tool_of_the_type():
    async with await kitchen_session() as session:
        listed = session.deferred_tools()
        made = ToolCall(name="selectTools", arguments={"tools": ["Potato_*"]}, id="all")
        result = (await session.call_tools([made]))[0]
        assert listed.reveals(made, result) == session.catalogue.tools_for_type("Potato")


async def test_a_partial_selection_reveals_what_was_selected_and_says_what_was_not():
    async with await kitchen_session() as session:
        listed = session.deferred_tools()
        made = ToolCall(name="selectTools", arguments={"tools": ["Potato_peel", "Potato_pel"]}, id="partial")
        result = (await session.call_tools([made]))[0]
        blocks = listed.answer(made, result, "anthropic")
        assert blocks[0]["content"] == [{"type": "tool_reference", "tool_name": "Potato_peel"}]
        assert blocks[1]["type"] == "text" and "Potato_pel" in blocks[1]["text"] and "did you mean" in blocks[1]["text"]
        items = listed.answer(made, result, "openai-responses")
        assert [t["name"] for t in items[0]["tools"]] == ["Potato_peel"]
        assert items[1]["role"] == "user" and "Potato_pel" in items[1]["content"][0]["text"]


async def test_a_failed_selection_reveals_nothing_and_is_an_error_result_that_changes_nothing():
    async with await kitchen_session() as session:
        listed = session.deferred_tools()
        before, tools = state(session), json.dumps(listed.render("anthropic"))
        made = ToolCall(name="selectTools", arguments={"tools": ["Potato_pel"]}, id="typo")
        result = (await session.call_tools([made]))[0]
        assert result.is_error
        [block] = listed.answer(made, result, "anthropic")
        assert block["is_error"] is True and "did you mean Potato_peel" in block["content"][0]["text"]
        assert not any(b["type"] == "tool_reference" for b in block["content"])
        assert state(session) == before and json.dumps(listed.render("anthropic")) == tools


async def test_a_call_of_another_tool_reveals_nothing():
    async with await kitchen_session() as session:
        session.select(["Potato_peel"])
        listed = session.deferred_tools()
        made = ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}, id="peel")
        result = (await session.call_tools([made]))[0]
        assert listed.reveals(made, result) == []
        # selected before the list was made: shown from the start, not deferred
        assert not listed.is_deferred("Potato_peel") and "Potato_peel" in [t.name for t in listed.shown]


@pytest.mark.parametrize("format", ["openai", "openai-strict", "gemini", "mcp"])
async def test_formats_that_cannot_defer_say_to_use_the_fixed_tools(format):
    async with await kitchen_session() as session:
        with pytest.raises(ValueError, match="fixed mode"):
            session.deferred_tools().render(format)


async def test_a_selected_tool_beyond_the_byte_cap_is_appended_after_the_unchanged_list():
    async with await kitchen_session() as session:
        listed = session.deferred_tools(max_bytes=3000)
        assert 0 < len(listed.deferred) < len(session.catalogue)
        assert [t.name for t in listed.deferred][0].startswith("Query_")  # reachable types first
        before = listed.render("anthropic")
        missing = next(name for name in session.catalogue.names() if not listed.is_deferred(name))
        result = await call(session, "selectTools", tools=[missing])
        assert not result.is_error
        after = listed.render("anthropic")
        assert after[: len(before)] == before  # the cached prefix holds
        assert after[len(before) :] == [render_tool(session.catalogue.tool(missing), "anthropic")]  # shown, not deferred


async def test_the_session_keeps_one_list_for_the_run():
    async with await kitchen_session() as session:
        assert session.deferred_tools() is session.deferred_tools()
        listed = session.deferred_tools()
        made = await session.call_tool(ToolCall(name="Potato_rinse", arguments={"sink": "Sink#1"}), select=True)
        assert made.value["result"] == "Potato#2"  # a new object: the dynamic selectTools text changes, the frozen one not
        assert json.dumps(session.deferred_tools().render("anthropic")) == json.dumps(listed.render("anthropic"))
        assert "named in the results" in listed.search.description
