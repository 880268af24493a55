"""Fewer round trips in the fixed MCP toolset, driven by the official `mcp` client: `callTool` selects
a tool it runs, `selectTools` takes tools of types the model will reach before it holds one, and a
SWAPI task ("the titles of all films", "Luke's homeworld") takes three calls."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from dagtools import ToolCall, load_schema  # noqa: E402
from dagtools.mcpserver import (
    McpConfig,  # noqa: E402
    McpToolServer,  # noqa: E402
)
from tests.conftest import shared_schema_path  # noqa: E402
from tests.kitchen import kitchen_session, state  # noqa: E402
from tests.mcpserver.test_mcp import ERAS, kitchen, names, value  # noqa: E402
from tests.previews import rows
from tests.swapi import make_swapi_schema  # noqa: E402

pytestmark = pytest.mark.public_schemas  # about the public APIs themselves (tests/conftest.py)


def swapi_server() -> McpToolServer:
    schema = make_swapi_schema(shared_schema_path("swapi.schema.graphql"))
    return McpToolServer(McpConfig(source="swapi", tools="fixed"), loaded=load_schema(schema))


class Counted:
    """A fixed-mode client's calls, counted, each result parsed; errors fail the test."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.calls = 0
        self.bytes_read = 0

    async def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
        self.calls += 1
        result = await self.client.call_tool(name, arguments)
        self.bytes_read += len(result.content[0].text.encode())
        assert not result.is_error, result.content[0].text
        return value(result)


@pytest.mark.parametrize("era", ERAS)
async def test_swapi_titles_and_homeworld_in_three_fixed_mode_calls(era: str) -> None:
    async with Client(swapi_server().server, mode=era) as client:
        listed = names(await client.list_tools())
        call = Counted(client)
        films = await call("callTool", {"tool": "Query_allFilms", "arguments": {}})
        assert "Query_allFilms" in films["selected"]
        titles = {film["title"] for film in rows(films).values()}
        assert "A New Hope" in titles and "Revenge of the Sith" in titles and len(titles) == 6
        luke = await call("callTool", {"tool": "Query_person", "arguments": {"personID": "1"}})
        assert luke["result"] == "Person#1" and luke["preview"]["name"] == "Luke Skywalker"
        home = await call("callTool", {"tool": "Person_homeworld", "arguments": {"Person": "Person#1"}})
        assert home["result"] == "Planet#1" and home["preview"]["name"] == "Tatooine"
        assert call.calls == 3
        # 3,091 bytes before previews led with names; 1,9xx with a fixed room per object; ~2,900 now
        # that 6 films, a person and a planet each show every short scalar read (director, release
        # date, height...), which a model then reads without one more call per field; ~1,700 with the
        # films as a table, each column named once.
        assert call.bytes_read <= 2000
        assert names(await client.list_tools()) == listed  # the fixed toolset never changed
        print(f"SWAPI task in fixed mode: {call.calls} calls, {call.bytes_read} bytes read")


async def test_select_tools_plans_ahead_for_types_not_held_yet() -> None:
    async with Client(swapi_server().server, mode="legacy") as client:
        select = next(t for t in (await client.list_tools()).tools if t.name == "selectTools")
        assert "before you hold such an object: Film_*, Person_*, Planet_*" in (select.description or "")
        call = Counted(client)
        planned = await call("selectTools", {"tools": ["Query_person", "Person_homeworld", "Planet_name"]})
        assert planned["result"] == "ok"
        assert [t["name"] for t in planned["tools"]] == ["Query_person", "Person_homeworld", "Planet_name"]
        await call("callTool", {"tool": "Query_person", "arguments": {"personID": "5"}})
        home = await call("callTool", {"tool": "Person_homeworld", "arguments": {}})
        assert home["preview"]["name"] == "Alderaan" and "selected" not in home  # selected already


@pytest.mark.parametrize("era", ERAS)
async def test_call_tool_selects_the_tool_it_runs_and_says_so(era: str) -> None:
    async with Client(kitchen("fixed").server, mode=era) as client:
        call = Counted(client)
        peeled = await call("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}})
        assert peeled["result"] == "Potato#2"
        assert peeled["selected"].startswith("Potato_peel was not selected yet, so this call selected it")
        again = await call("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}})
        assert again == {"result": "Potato#2"}  # selected already: nothing to say


async def test_a_failed_call_selects_nothing() -> None:
    async with Client(kitchen("fixed").server, mode="legacy") as client:
        bad = await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#9"}})
        assert bad.is_error and "Potato#9" in bad.content[0].text
        good = value(await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}}))
        assert "selected" in good  # the failed call had not selected it
    session = await kitchen_session()
    before = state(session)
    failed = await session.call_tool(ToolCall(name="Potato_peel", arguments={"Potato": "Sink#1"}), select=True)
    assert failed.is_error and "Potato" in failed.value["error"]
    assert state(session) == before
    unknown = await session.call_tool(ToolCall(name="Potato_peal", arguments={}), select=True)
    assert unknown.is_error and "Did you mean Potato_peel" in unknown.value["error"]


async def test_call_tool_keeps_within_the_cap_and_names_what_it_dropped() -> None:
    session = await kitchen_session(max_active_tools=2)
    session.select(["Potato_rinse", "Potato_slice"])
    result = await session.call_tool(ToolCall(name="Potato_peel", arguments={}), select=True)
    assert not result.is_error, result.value
    assert "dropped: Potato_rinse" in result.value["selected"]
    assert set(session.active_tools) == {"Potato_slice", "Potato_peel"}
    assert json.loads(result.content)["result"] == "Potato#2"


async def test_a_catalogue_tool_called_by_name_in_fixed_mode_is_pointed_at_call_tool() -> None:
    # A model that read a tool's name in selectTools' answer often calls it directly; in the fixed
    # mode it exists but runs through callTool, so "there is no tool" would send it looking elsewhere.
    async with Client(kitchen("fixed").server, mode="legacy") as client:
        direct = await client.call_tool("Potato_peel", {"Potato": "Potato#1"})
        text = value(direct)["error"]
        assert direct.is_error and "There is no tool" not in text
        assert 'callTool(tool: "Potato_peel", arguments: {...})' in text
        typo = await client.call_tool("Potato_peal", {})
        assert typo.is_error and "Did you mean Potato_peel" in typo.content[0].text
        good = value(await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}}))
        assert good["result"] == "Potato#2"  # the direct call changed nothing: the first peel is Potato#2


async def test_selected_schemas_say_what_fields_does_once() -> None:
    """Three tools that take `fields` answer one sentence about it, not three; each schema keeps the
    parameter, and the catalogue's own schemas are untouched (a single tool's answer still has it)."""
    async with Client(swapi_server().server, mode="legacy") as client:
        call = Counted(client)
        many = await call("selectTools", {"tools": ["Query_starship", "Starship_pilotConnection", "Person_homeworld"]})
        described = [t["inputSchema"]["properties"]["fields"].get("description") for t in many["tools"]]
        assert described == [None, None, None] and many["next"].count("Just these fields") == 1
        one = await call("selectTools", {"tools": ["Person_homeworld"]})
        assert one["tools"][0]["inputSchema"]["properties"]["fields"]["description"].startswith("Just these fields")
