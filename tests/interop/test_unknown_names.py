"""A name that is no tool is answered by what its words mean, not only by its spelling: a model that
guesses `Starship_pilots` is pointed at `Starship_pilotConnection`, the tool that serves those words,
before spelling neighbours such as `Starship_MGLT`; a typo (`Potato_peal`) still gets its neighbour
first. Both a call and a selectTools selection say so, and neither changes anything. On the kitchen
(in process), swapi-graphql and the media app on GraphQL Yoga (both on loopback)."""

from __future__ import annotations

import re

import pytest

from dagtools import ToolCall
from tests.kitchen import kitchen_session, state
from tests.thirdparty import Open


def _offered(text: str) -> list[str]:
    """The names a message offers after "did you mean", in its order."""
    found = re.search(r"[Dd]id you mean ([A-Za-z0-9_, ]+)\?", text)
    assert found, text
    return [name.strip() for name in found.group(1).split(",")]


async def _call_offers(session, name: str) -> list[str]:
    before = state(session)
    result = await session.call_tool(ToolCall(name=name, arguments={}))
    assert result.is_error, result.content
    assert state(session) == before
    return _offered(result.value["error"])


async def _select_offers(session, name: str) -> list[str]:
    before = state(session)
    result = await session.call_tool(ToolCall(name="selectTools", arguments={"tools": [name]}))
    assert state(session) == before, "an unknown name selects nothing"
    text = result.value if isinstance(result.value, str) else result.value["error"]
    return _offered(text)


async def test_kitchen_unknown_names_offer_the_tool_their_words_mean():
    session = await kitchen_session()
    # spelling alone offers Potato_dice and Potato_slice for "clean", Potato_slice for "skin"
    assert (await _call_offers(session, "Potato_clean"))[0] == "Potato_rinse"
    assert (await _select_offers(session, "Potato_skin"))[0] == "Potato_peel"
    # a typo is still answered by its neighbour first
    assert (await _call_offers(session, "Potato_peal"))[0] == "Potato_peel"


async def test_swapi_a_guessed_relation_offers_its_connection_tool(swapi_url: str, opened: Open) -> None:
    session = await opened(swapi_url)
    offered = await _call_offers(session, "Starship_pilots")
    assert offered[0] == "Starship_pilotConnection", offered
    assert (await _call_offers(session, "Planet_people"))[0] == "Planet_residentConnection"
    assert (await _call_offers(session, "Film_titel"))[0] == "Film_title"


async def test_swapi_selecting_a_guessed_name_offers_the_tool_that_serves_it(swapi_url: str) -> None:
    from dagtools import open_session

    session = await open_session(swapi_url, cache=False)
    try:
        offered = await _select_offers(session, "Person_films")
        assert offered[0] == "Person_filmConnection", offered
    finally:
        await session.aclose()


async def test_media_a_guessed_field_offers_the_field_that_returns_it(media_url: str, opened: Open) -> None:
    session = await opened(media_url)
    offered = await _call_offers(session, "Album_person")
    assert offered[0] == "Album_artist", offered


async def test_swapi_fixed_mode_over_the_official_client_offers_by_meaning(swapi_url: str) -> None:
    """The fixed toolset as an MCP client meets it: callTool and describeTools with a guessed name."""
    pytest.importorskip("mcp", reason="the MCP tests need the official mcp SDK (pip install -e '.[mcp]')")
    from mcp import Client

    from dagtools.mcpserver import McpConfig, McpToolServer

    server = McpToolServer(McpConfig(source=swapi_url, tools="fixed", cache=False))
    async with Client(server.server, mode="legacy") as client:
        called = await client.call_tool("callTool", {"tool": "Starship_pilots", "arguments": {}})
        assert called.is_error, called.content[0].text
        assert _offered(called.content[0].text)[0] == "Starship_pilotConnection"
        described = await client.call_tool("describeTools", {"tools": ["Starship_pilots"]})
        assert _offered(described.content[0].text)[0] == "Starship_pilotConnection"
