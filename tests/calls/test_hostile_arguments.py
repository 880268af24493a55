"""Arguments no model should send still get an error result that says what to fix, and change nothing.

Each case once crashed a call with an exception instead: IDs whose digits are not ASCII or too many
for `int`, argument text nested past Python's recursion limit, integers too long to print, NaN, and
strings with a lone surrogate (which cannot be encoded as UTF-8, so they cannot go over HTTP).
"""

from __future__ import annotations

import pytest

from dagtools import ToolCall
from tests.kitchen import kitchen_session, state


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


CASES = {
    "superscript digit as a bare ID": ("Potato_peel", {"Potato": "²"}, "object ID"),
    "hash and superscript digit": ("Potato_peel", {"Potato": "#³"}, "object ID"),
    "bare ID of 5000 digits": ("Potato_peel", {"Potato": "1" * 5000}, "object ID"),
    "hash and 5000 digits": ("Potato_peel", {"Potato": "#" + "1" * 5000}, "object ID"),
    "Potato# and 5000 digits": ("Potato_peel", {"Potato": "Potato#" + "1" * 5000}, "object ID"),
    "Arabic-Indic digits": ("Potato_peel", {"Potato": "Potato#١"}, "object ID"),
    "reference argument with fullwidth digits": ("Oven_bake", {"item": "Potato#１"}, "object ID"),
    "deep list in a dict": ("Potato_slice", {"shape": _deep(5000)}, "nests deeper"),
    "deep list as text": ("Potato_slice", '{"shape": ' + "[" * 100_000 + "]" * 100_000 + "}", "nest deeper"),
    "deep object as text": ("Potato_slice", '{"a": ' * 50_000 + "1" + "}" * 50_000, "nest deeper"),
    "huge int as text": ("Oven_bake", '{"settings": {"minutes": 1' + "0" * 5000 + "}}", "too long"),
    "huge int in a dict": ("Oven_bake", {"settings": {"minutes": 10**5000}}, "digits"),
    "NaN as text": ("Oven_bake", '{"settings": {"minutes": NaN}}', "not a JSON number"),
    "infinity in a dict": ("Oven_bake", {"settings": {"minutes": float("inf")}}, "not a JSON number"),
    "lone surrogate in a value": ("Query_potato", {"variety": "Rus\udc80set"}, "lone surrogate"),
    "lone surrogate in a key": ("Query_potato", {"vari\ud800ety": "Russet"}, "lone surrogate"),
    "not JSON at all": ("Query_potato", {"variety": {1, 2}}, "not a JSON value"),
    "surrogate in an ID": ("Potato_peel", {"Potato": "Potato#\udc801"}, "lone surrogate"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_hostile_arguments_give_an_error_and_change_nothing(case, transport):
    from examples.kitchen.api import schema

    name, arguments, expected = CASES[case]
    session = await kitchen_session(executor=transport.executor(schema))
    session.select(["Potato_peel", "Potato_slice", "Oven_bake", "Query_potato"])
    before = state(session)
    for run in (session.call_tool, session.execute):  # through a turn, and the nothing-fancy path
        result = await run(ToolCall(name=name, arguments=arguments))
        assert result.is_error, result.value
        assert expected in result.value["error"], result.value["error"]
        assert state(session) == before


async def test_a_good_call_after_hostile_ones_still_runs(transport):
    from examples.kitchen.api import schema

    session = await kitchen_session(executor=transport.executor(schema))
    session.select(["Potato_peel"])
    for arguments in ({"Potato": "²"}, {"Potato": "#" + "9" * 5000}):
        assert (await session.call_tool(ToolCall(name="Potato_peel", arguments=arguments))).is_error
    result = await session.call_tool(ToolCall(name="Potato_peel", arguments={"Potato": "1"}))
    assert not result.is_error and result.value["result"] == "Potato#2"


@pytest.mark.parametrize("name", [None, 3, "Potato_\ud800peel"], ids=["None", "a number", "a lone surrogate"])
async def test_a_tool_name_that_is_not_text_gives_an_error(name):
    session = await kitchen_session()
    before = state(session)
    result = await session.call_tool(ToolCall(name=name, arguments={}))
    assert result.is_error and "tool name is" in result.value["error"]
    result.value["error"].encode("utf-8")
    assert state(session) == before


def test_the_size_of_any_arguments_is_counted_even_where_json_gives_up():
    """A session's held bytes and the MCP server's argument limit count every call, hostile ones too:
    nesting past the JSON encoder's recursion and integers of thousands of digits are counted by a walk."""
    from dagtools._values import json_size
    from dagtools.mcpserver.transport import argument_bytes

    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert json_size({"a": 1}) == len('{"a": 1}')
    assert json_size(deep) >= 10_000 and argument_bytes({"x": deep}) >= 10_000
    assert 5_000 <= json_size({"n": 10**5000}) <= 5_020
