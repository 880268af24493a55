"""Every mistake a model can make comes back as an error result that says what to do next, and
changes nothing: registry, most-recent objects, active tools and outputs stay as they were."""

from __future__ import annotations

import pytest

from dagtools import ToolCall
from tests.kitchen import call, kitchen_session, state


@pytest.fixture
async def session():
    s = await kitchen_session()
    s.select(["Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake", "Sink_rinse", "Plate_fries", "Fries_plate"])
    await call(s, "Potato_rinse", Potato="Potato#1", sink="Sink#1")  # Potato#2
    return s


async def check(session, name, arguments, *fragments):
    before = state(session)
    result = await session.call_tool(ToolCall(name=name, arguments=arguments))
    assert result.is_error, result.content
    for fragment in fragments:
        assert fragment in result.value["error"], result.value["error"]
    assert state(session) == before
    return result.value["error"]


async def test_unknown_tool_suggests(session):
    await check(session, "Potato_peal", {}, "There is no tool Potato_peal", "Did you mean Potato_peel")


async def test_tool_not_selected_yet(session):
    await check(session, "Potato_dice", {}, "Potato_dice is not selected yet", 'selectTools(tools: ["Potato_dice"])')


async def test_unknown_id(session):
    await check(session, "Potato_peel", {"Potato": "Potato#9"}, "There is no object Potato#9", "Potato#1 to Potato#2")


async def test_id_of_the_wrong_type(session):
    await check(session, "Potato_peel", {"Potato": "Sink#1"}, "Sink#1 is a Sink", "takes a Potato", "Potato#2")


async def test_wrong_type_in_object_argument(session):
    await check(session, "Potato_rinse", {"sink": "Oven#1"}, "Oven#1 is an Oven", "takes a Sink", "Sink#1")


async def test_bare_number_where_the_type_is_unknown(session):
    # Sink.rinse takes any Food (a Potato or Fries), so "2" does not say which.
    await check(session, "Sink_rinse", {"item": "2"}, "needs the full object ID", "Potato#2", "Type#N")


async def test_bare_number_where_the_type_is_known_means_that_type(session):
    result = await call(session, "Potato_peel", Potato="2")
    assert not result.is_error
    assert session.registry.get(result.value["result"]).expression == "Potato#2.peel"


async def test_no_object_yet_for_a_defaulted_parameter(session):
    await check(session, "Fries_plate", {"plate": "Plate#1"}, "There is no Fries object yet", "Oven_bake")


async def test_missing_argument(session):
    await check(session, "Potato_slice", {}, "missing the required argument shape", "Potato_slice(")


async def test_extra_argument(session):
    await check(session, "Potato_slice", {"shape": "STICKS", "shap": 1}, "has no parameter 'shap'", "did you mean 'shape'")


async def test_mistyped_argument(session):
    await check(session, "Oven_bake", {"item": "Potato#2", "settings": {"minutes": "long"}}, "settings.minutes", "Int cannot represent")


async def test_an_unknown_field_of_an_input_object_names_the_fields_it_takes(session):
    unknown = "settings: Expected value of type 'BakeSettings' not to include unknown field 'temp'"
    takes = "BakeSettings takes minutes, temperature, fan"
    await check(session, "Oven_bake", {"item": "Potato#2", "settings": {"temp": 200}}, unknown, takes)
    nested = await session.call_tool(ToolCall(name="Oven_bake", arguments={"item": "Potato#2", "settings": {"minutez": 3, "fan": True}}))
    assert takes in nested.value["error"]


async def test_a_suggestion_ends_its_sentence_once(session):
    result = await session.call_tool(ToolCall(name="Potato_slice", arguments={"shape": "sticks"}))
    message = result.value["error"]
    assert "Did you mean the enum value 'STICKS' or 'SLICES'? Its parameters: Potato_slice(" in message and "?." not in message


async def test_bad_enum_value(session):
    await check(session, "Potato_slice", {"shape": "STIX"}, "shape", "SliceShape", "STICKS|SLICES")


async def test_non_json_arguments(session):
    await check(session, "Potato_peel", '{"Potato": "Potato#2"', "not valid JSON", "JSON object")
    await check(session, "Potato_peel", '["Potato#2"]', "must be a JSON object")


async def test_graphql_error_from_a_resolver(session):
    await call(session, "Potato_peel")  # Potato#3, peeled
    await check(session, "Potato_peel", {"Potato": "Potato#3"}, "This potato is already peeled", "Nothing was created")


async def test_null_object_is_an_answer_not_an_error(session):
    before = state(session)
    result = await session.call_tool(ToolCall(name="Plate_fries", arguments={}))
    assert not result.is_error
    assert result.value == {"result": None, "note": "Plate#1.fries is null: the API has no Fries there."}
    assert state(session) == before


async def test_save_with_missing_outputs(session):
    await check(session, "save", {}, "missing fries")


async def test_save_with_an_unknown_output(session):
    await check(session, "save", {"fries": "Plate#1", "chips": "Plate#1"}, "no output named chips")


async def test_save_with_the_wrong_type(session):
    await check(session, "save", {"fries": "Potato#2"}, "Potato#2 is a Potato", "takes a Plate")


async def test_save_messages_end_in_one_full_stop(session):
    error = await check(session, "save", {"fries": "Potato#2"}, "Use one of: Plate#1")
    assert ".." not in error


async def test_save_with_an_unknown_object(session):
    await check(session, "save", {"fries": "Plate#7"}, "There is no object Plate#7")


async def test_select_unknown_tools_selects_nothing(session):
    error = await check(session, "selectTools", {"tools": ["Potato_dise", "Potato_slise"]}, "Potato_slise (did you mean Potato_slice")
    assert "Nothing was selected" in error and "Potato_dise (did you mean Potato_dice" in error


async def test_select_takes_the_good_names_and_names_the_bad(session):
    result = await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_dice", "Potato_slise"]}))
    assert not result.is_error
    assert result.value.startswith("Selected Potato_dice. Not selected: No tool named Potato_slise (did you mean Potato_slice")
    assert "Potato_dice" in session.active_tools and "Potato_slise" not in session.active_tools


async def test_select_with_bad_arguments(session):
    await check(session, "selectTools", {"tools": 3}, "takes a list of tool names")
    await check(session, "selectTools", {"names": ["Potato_dice"]}, "has no parameter names")


async def test_read_result_without_a_cut_value(session):
    await check(session, "readResult", {"ref": "x", "offset": 0}, "There is no tool readResult")


async def test_the_session_still_works_after_errors(session):
    await check(session, "Potato_peel", {"Potato": "Potato#9"}, "There is no object")
    result = await call(session, "Potato_peel")
    assert result.value == {"result": "Potato#3"}


async def test_save_in_a_session_without_outputs_says_none_were_asked_for():
    bare = await kitchen_session(outputs=None)
    said = await check(bare, "save", {"fries": "Potato#1"}, "no outputs were asked for", "answer in plain text", "--output NAME:TYPE")
    assert "There is no tool save" not in said
