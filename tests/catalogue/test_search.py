"""Catalogue search: ranking on GitHub's public schema, `dagtools tools --search`, and
selectTools(search:) in a session and over MCP with the official client."""

from __future__ import annotations

import json

import pytest

from dagtools import ToolCall
from dagtools.catalogue._search import catalogue_search, search_words
from dagtools.cli._main import main
from tests.conftest import shared_catalogue, shared_schema_path
from tests.kitchen import kitchen_session

pytest.importorskip("mcp", reason="the MCP tests need the official mcp SDK (pip install -e '.[mcp]')")

from mcp import Client  # noqa: E402

from tests.mcpserver.test_mcp import kitchen, value  # noqa: E402


@pytest.fixture(scope="module")
def github():
    return shared_catalogue("github.schema.graphql", mutations=True)


def top(catalogue, words: str, count: int = 5) -> list[str]:
    return [hit.name for hit in catalogue_search(catalogue).search(words, limit=count)]


def test_words_split_names_and_fold_forms():
    assert search_words("viewerHasStarred") == search_words("viewer has starred") == ["viewer", "has", "star"]
    assert search_words("created_at") == search_words("createdAt")
    assert search_words("issues") == search_words("issue")


@pytest.mark.parametrize(
    ("need", "tool"),
    [
        ("who starred a repository", "Repository_stargazers"),
        ("close an issue", "Mutation_closeIssue"),
        ("the releases of a repository", "Repository_releases"),
        ("people a user follows", "User_following"),
        ("files changed in a pull request", "PullRequest_files"),
        ("the signed-in user", "Query_viewer"),
    ],
)
@pytest.mark.public_schemas
def test_github_needs_find_their_tool_among_the_first_five(github, need, tool):
    assert tool in top(github, need)


@pytest.mark.public_schemas
def test_a_tool_named_whole_by_the_query_ranks_above_one_named_in_part(github):
    found = top(github, "forks of a repository", 10)
    assert found.index("Repository_forks") < found.index("Repository_forkingAllowed")


@pytest.mark.public_schemas
def test_mutations_the_host_did_not_allow_are_never_found():
    catalogue = shared_catalogue("github.schema.graphql")
    found = top(catalogue, "close an issue", 20)
    assert found and not any(name.startswith("Mutation_") for name in found)


@pytest.mark.public_schemas
def test_the_index_is_built_once_per_catalogue(github):
    assert catalogue_search(github) is catalogue_search(github)


@pytest.mark.public_schemas
def test_cli_search_json_lists_the_best_tools_first(capsys):
    path = shared_schema_path("github.schema.graphql")
    assert main(["tools", str(path), "--search", "who starred a repository", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    names = [item["name"] for item in listed]
    assert "Repository_stargazers" in names[:5]
    assert all(set(item) == {"name", "description", "score"} for item in listed)
    scores = [item["score"] for item in listed]
    assert scores == sorted(scores, reverse=True)


def test_cli_search_json_on_a_small_api(capsys):
    """The same listing on the kitchen API, for the fast subset (the GitHub one builds its schema anew)."""
    assert main(["tools", "examples/kitchen/api.py:schema", "--search", "peel a potato", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [item["name"] for item in listed][:2] == ["Potato_peel", "Potato_peeled"]
    assert all(set(item) == {"name", "description", "score"} for item in listed)
    assert [item["score"] for item in listed] == sorted((item["score"] for item in listed), reverse=True)


@pytest.mark.public_schemas
def test_cli_search_text_and_empty_words(capsys):
    path = shared_schema_path("linear.schema.graphql")
    assert main(["tools", str(path), "--search", "list a team's cycles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("Team_cycles: ") for line in lines[:5])
    assert main(["tools", str(path), "--search", "  "]) == 2
    assert "--search takes words" in capsys.readouterr().err


async def test_select_tools_search_in_a_session_lists_without_selecting():
    async with await kitchen_session() as session:
        active = list(session.active_tools)
        result = await session.call_tool(ToolCall(name="selectTools", arguments={"search": "cut a potato into slices"}))
        assert not result.is_error
        lines = result.value.splitlines()
        assert "none selected" in lines[0]
        assert any(line.startswith("- Potato_slice(shape!) -> ") for line in lines[1:4])
        assert session.active_tools == active
        both = await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"], "search": "peel a potato"}))
        assert both.value.startswith("ok") and "Potato_peel" in session.active_tools
        assert any(line.startswith("- Potato_peel -> ") and line.endswith("(selected)") for line in both.value.splitlines())
        empty = await session.call_tool(ToolCall(name="selectTools", arguments={"search": ""}))
        assert empty.is_error and "search takes words" in empty.value["error"]


async def test_select_tools_search_over_mcp_in_fixed_mode():
    server = kitchen("fixed")
    async with Client(server.server, mode="legacy") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "search" in listed["selectTools"].input_schema["properties"]
        found = value(await client.call_tool("selectTools", {"search": "peel a potato"}))
        assert isinstance(found, str) and "- Potato_peel -> " in found
        both = value(await client.call_tool("selectTools", {"tools": ["Potato_peel"], "search": "peel a potato"}))
        assert both["result"].startswith("ok") and "(selected)" in both["result"]
        assert [tool["name"] for tool in both["tools"]] == ["Potato_peel"]


async def test_select_tools_search_in_deferred_mode_answers_text_and_reveals_nothing():
    async with await kitchen_session() as session:
        listed = session.deferred_tools()
        rendered = listed.render("anthropic")
        select = next(t for t in rendered if t["name"] == "selectTools")
        assert "search" in select["input_schema"]["properties"]
        call = ToolCall(name="selectTools", arguments={"search": "peel a potato"}, id="call_1")
        result = (await session.call_tools([call]))[0]
        assert listed.reveals(call, result) == []
        answer = listed.answer(call, result, "anthropic")
        assert answer[0]["type"] == "tool_result" and "- Potato_peel -> " in answer[0]["content"][0]["text"]


def test_operations_in_the_config_file_are_read_beside_it(tmp_path):
    from dagtools.mcpserver import load_mcp_config

    config = tmp_path / "mcp.yaml"
    config.write_text("source: api.graphql\noperations: ops\n")
    loaded = load_mcp_config(config)
    assert loaded.operations == str(tmp_path / "ops") and loaded.session_options["operations"] == str(tmp_path / "ops")


async def test_a_description_that_starts_with_returns_reads_whole_in_a_hit():
    from graphql import build_schema

    from dagtools import LocalExecutor, Session, compile_catalogue

    schema = build_schema(
        'type Query { shelf: Shelf }\ntype Shelf { "Returns a single book by its number." book(number: Int): Book }\n'
        "type Book { title: String }"
    )
    session = Session(compile_catalogue(schema), LocalExecutor(schema))
    found = await session.call_tool(ToolCall(name="selectTools", arguments={"search": "a single book by number"}))
    assert "- Shelf_book(number) -> Book: Returns a single book by its number." in found.value.splitlines()


async def test_a_hit_names_the_arguments_a_call_needs_but_paging():
    """A model calls what it found without reading its schema first: a hit names its tool's
    arguments (`!` where required), leaves out a page's `first`/`after`, and counts no more than four."""
    from graphql import build_schema

    from dagtools import LocalExecutor, Session, compile_catalogue

    schema = build_schema(
        "type Query { starship(id: ID, starshipID: ID): Ship\n"
        "  ships(first: Int, after: String, last: Int, before: String, class: String): [Ship]\n"
        "  search(text: String!, kind: String, limit: Int = 5, offset: Int, order: String, lang: String): [Ship] }\n"
        "type Ship { name: String crew: Int }"
    )
    session = Session(compile_catalogue(schema), LocalExecutor(schema))
    found = await session.call_tool(ToolCall(name="selectTools", arguments={"search": "ship starship search ships"}))
    lines = found.value.splitlines()
    assert "- Query_starship(id, starshipID) -> Ship" in lines
    assert "- Query_ships(class) -> Ship list" in lines
    assert "- Query_search(text!, kind, limit, offset, …) -> Ship list" in lines
    assert "- Ship_crew -> Int" in lines  # no arguments: nothing in brackets


async def test_a_search_for_objects_no_call_lists_says_how_to_reach_one():
    """Looking for "the agencies" where no call lists them: the answer says so, and names the lookup,
    so a model stops searching for a list. Kinds some call lists, or only one per parent, get no note."""
    from graphql import build_schema

    from dagtools import LocalExecutor, Session, compile_catalogue

    schema = build_schema(
        "type Query { employer(id: ID!): Employer\n  companies: [Company]\n  viewer: Account }\n"
        "union Employer = Company | Agency\n"
        "type Company { name: String office(city: String!): Office }\ntype Office { city: String }\n"
        "type Agency { name: String feePercent: Int }\ntype Account { login: String }"
    )
    session = Session(compile_catalogue(schema), LocalExecutor(schema))

    async def search(words: str) -> str:
        return str((await session.call_tool(ToolCall(name="selectTools", arguments={"search": words}))).value)

    said = await search("agencies and their fees")
    assert said.endswith(
        "No tool lists Agency objects: Query_employer(id!) reads them one id at a time, "
        'or several in one call given a list ({"id": ["1", "2"]}).'
    )
    assert (await search("offices")).endswith("No tool lists Office objects: Company_office(city!) reads them one city at a time.")
    assert "No tool lists" not in await search("company names")
    assert "No tool lists" not in await search("account login")  # the viewer's own: no lookup to repeat
