"""Operations as tools: a folder of named operations (or a persisted-query manifest) served against
third-party servers on loopback (swapi-graphql, the media app on GraphQL Yoga), run through MCP with
the official client, chained from, searched for, and refused with their file and line when bad."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagtools import ConfigError, ToolCall, open_session
from dagtools.cli._main import main

pytest.importorskip("mcp", reason="the MCP tests need the official mcp SDK (pip install -e '.[mcp]')")

from mcp import Client  # noqa: E402

from dagtools.mcpserver import (
    McpConfig,  # noqa: E402
    McpToolServer,  # noqa: E402
)

PILOTS = """\
# The pilots of a starship, with the planet each comes from.
# Give the starship's number, such as 10 for the Millennium Falcon.
query StarshipPilots($starshipID: ID!) {
  starship(starshipID: $starshipID) {
    name
    pilotConnection {
      pilots {
        ...Pilot
      }
    }
  }
}

fragment Pilot on Person {
  name
  homeworld { name }
}
"""

FILMS = """\
# Every film's title, in release order.
query FilmTitles { allFilms { films { title } } }
"""

BAD = """\
# Asks for a field a starship does not have.
query StarshipSpeed($id: ID!) {
  starship(id: $id) {
    warpFactor
  }
}
"""


def value(result) -> object:
    text = result.content[0].text
    try:
        return json.loads(text)
    except ValueError:
        return text


@pytest.fixture
def operations(tmp_path: Path) -> Path:
    folder = tmp_path / "operations"
    (folder / "films").mkdir(parents=True)
    (folder / "pilots.graphql").write_text(PILOTS)
    (folder / "films" / "titles.gql").write_text(FILMS)
    return folder


async def test_an_operation_runs_through_mcp_and_a_field_tool_chains_from_its_handle(swapi_url: str, operations: Path):
    server = McpToolServer(McpConfig(source=swapi_url, tools="fixed", operations=str(operations), cache=False))
    async with Client(server.server, mode="legacy") as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert "StarshipPilots" not in listed  # found on demand, not listed up front
        found = value(await client.call_tool("selectTools", {"search": "pilots of a starship"}))
        assert "- StarshipPilots: The pilots of a starship, with the planet each comes from." in found
        selected = value(await client.call_tool("selectTools", {"tools": ["StarshipPilots"]}))
        assert selected["result"] == "ok" and selected["tools"][0]["inputSchema"]["required"] == ["starshipID"]
        ran = await client.call_tool("callTool", {"tool": "StarshipPilots", "arguments": {"starshipID": "10"}})
        assert not ran.is_error, ran.content[0].text
        starship = value(ran)["result"]["starship"]
        assert starship["object"] == "Starship#1" and starship["name"] == "Millennium Falcon"
        pilots = starship["pilotConnection"]["pilots"]
        chewie = next(p for p in pilots if p["name"] == "Chewbacca")
        assert chewie["object"].startswith("Person#") and chewie["homeworld"]["name"] == "Kashyyyk"
        assert "dagtools_id" not in json.dumps(starship) and "__typename" not in json.dumps(starship)
        born = await client.call_tool("callTool", {"tool": "Person_birthYear", "arguments": {"Person": chewie["object"]}})
        assert value(born)["result"] == "200BBY"
        planet = await client.call_tool("callTool", {"tool": "Planet_climates", "arguments": {"Planet": chewie["homeworld"]["object"]}})
        assert value(planet)["result"] == ["tropical"]


async def test_operations_are_selected_by_name_and_their_variables_checked_before_sending(swapi_url: str, operations: Path):
    async with await open_session(swapi_url, cache=False, operations=str(operations)) as session:
        assert "FilmTitles" not in [tool.name for tool in session.tools()]
        picked = await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["FilmTitles", "StarshipPilots"]}))
        assert picked.value == "ok"
        assert {"FilmTitles", "StarshipPilots"} <= {tool.name for tool in session.tools()}
        films = await session.call_tool(ToolCall(name="FilmTitles", arguments={}))
        assert {"object": "Film#1", "title": "A New Hope"} in films.value["result"]["allFilms"]["films"]
        before = len(session.registry)
        extra = await session.call_tool(ToolCall(name="StarshipPilots", arguments={"starshipID": "10", "speed": 3}))
        assert extra.is_error and "no parameter speed; it takes starshipID" in extra.value["error"]
        mistyped = await session.call_tool(ToolCall(name="StarshipPilots", arguments={"starshipID": {"id": 10}}))
        assert mistyped.is_error and "Nothing was sent" in mistyped.value["error"]
        missing = await session.call_tool(ToolCall(name="StarshipPilots", arguments={}))
        assert missing.is_error and "starshipID" in missing.value["error"]
        assert len(session.registry) == before


async def test_a_held_object_stands_for_its_id_in_an_id_variable(swapi_url: str, tmp_path: Path):
    text = "# A person's planet.\nquery Homeworld($id: ID!) { person(id: $id) { homeworld { name } } }\n"
    (tmp_path / "homeworld.graphql").write_text(text)
    async with await open_session(swapi_url, cache=False, operations=str(tmp_path)) as session:
        luke = await session.call_tool(ToolCall(name="Query_person", arguments={"personID": "1"}), select=True)
        held = luke.value["result"]
        result = await session.call_tool(ToolCall(name="Homeworld", arguments={"id": held}))
        assert result.value["result"]["person"]["homeworld"]["name"] == "Tatooine"
        unknown = await session.call_tool(ToolCall(name="Homeworld", arguments={"id": "Person#99"}))
        assert unknown.is_error and "There is no object Person#99" in unknown.value["error"]


async def test_a_persisted_query_manifest_serves_its_operations(swapi_url: str, tmp_path: Path):
    manifest = tmp_path / "manifest.json"
    body = "query FilmTitles { allFilms { films { title } } }"
    manifest.write_text(
        json.dumps(
            {
                "format": "apollo-persisted-query-manifest",
                "version": 1,
                "operations": [{"id": "f1", "name": "FilmTitles", "type": "query", "body": body}],
            }
        )
    )
    async with await open_session(swapi_url, cache=False, operations=str(manifest)) as session:
        result = await session.call_tool(ToolCall(name="FilmTitles", arguments={}))
        assert len(result.value["result"]["allFilms"]["films"]) == 6


async def test_a_bad_operation_is_refused_at_start_with_its_file_and_line(swapi_url: str, operations: Path, capsys):
    bad = operations / "films" / "speed.graphql"
    bad.write_text(BAD)
    with pytest.raises(ConfigError) as raised:
        await open_session(swapi_url, cache=False, operations=str(operations))
    assert f"{bad}:4: StarshipSpeed: Cannot query field 'warpFactor' on type 'Starship'." in str(raised.value)
    assert main(["mcp", swapi_url, "--operations", str(operations), "--no-cache"]) == 2
    assert f"{bad}:4" in capsys.readouterr().err
    bad.write_text("query {\n  allFilms { films { title } }\n}\n")
    with pytest.raises(ConfigError, match=r"speed.graphql:1: an operation without a name"):
        await open_session(swapi_url, cache=False, operations=str(operations))
    bad.write_text("# Shadows a built-in tool.\nquery save { allFilms { films { title } } }\n")
    with pytest.raises(ConfigError, match=r"speed.graphql:2: save cannot name a tool"):
        await open_session(swapi_url, cache=False, operations=str(operations))
    bad.write_text("query Broken {\n  allFilms { \n")
    with pytest.raises(ConfigError, match=r"speed.graphql:3: Syntax Error"):
        await open_session(swapi_url, cache=False, operations=str(operations))


async def test_a_mutation_operation_obeys_the_mutation_setting(media_url: str, tmp_path: Path):
    (tmp_path / "rate.graphql").write_text(
        "# Rate a movie.\nmutation RateMovie($id: Int!, $rating: Int!) { rateMovie(id: $id, rating: $rating) { title rating } }\n"
    )
    async with await open_session(media_url, cache=False, operations=str(tmp_path)) as session:
        refused = await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["RateMovie"]}))
        assert refused.is_error
        called = await session.call_tool(ToolCall(name="RateMovie", arguments={"id": 1, "rating": 4}))
        assert called.is_error
    async with await open_session(media_url, cache=False, operations=str(tmp_path), mutations=["rateMovie"]) as session:
        rated = await session.call_tool(ToolCall(name="RateMovie", arguments={"id": 1, "rating": 4}))
        assert not rated.is_error, rated.value
        movie = rated.value["result"]["rateMovie"]
        assert movie["rating"] == 4 and movie["object"].startswith("Movie#")


async def test_in_dynamic_mode_a_selected_operation_joins_the_tool_list(swapi_url: str, operations: Path):
    server = McpToolServer(McpConfig(source=swapi_url, tools="dynamic", operations=str(operations), cache=False))
    async with Client(server.server, mode="legacy") as client:
        assert "FilmTitles" not in [tool.name for tool in (await client.list_tools()).tools]
        found = value(await client.call_tool("selectTools", {"search": "titles of every film"}))
        assert "- FilmTitles: Every film's title, in release order." in found
        assert value(await client.call_tool("selectTools", {"tools": ["FilmTitles"]})) == "ok"
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["FilmTitles"].description == "Every film's title, in release order."
        films = value(await client.call_tool("FilmTitles", {}))
        assert len(films["result"]["allFilms"]["films"]) == 6


async def test_an_operation_whose_api_is_down_is_an_error_the_model_reads(tmp_path: Path):
    from dagtools import HttpExecutor

    folder = tmp_path / "operations"
    folder.mkdir()
    (folder / "potato.graphql").write_text("# The potato.\nquery ThePotato { potato { variety } }\n")
    kitchen = str(Path(__file__).resolve().parents[2] / "examples" / "kitchen" / "api.py") + ":schema"
    nowhere = HttpExecutor("http://127.0.0.1:9/graphql", retries=0, timeout=5)  # the discard port: nothing listens
    async with nowhere, await open_session(kitchen, executor=nowhere, operations=str(folder)) as session:
        session.select(["ThePotato"])
        [result] = await session.call_tools([ToolCall(name="ThePotato", arguments={})])
    assert result.is_error and "could not be reached" in result.value["error"] and "ThePotato" in result.value["error"]
