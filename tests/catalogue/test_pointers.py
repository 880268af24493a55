"""What a schema or an error points to exists in that session, in every mode, and examples come from
the API being served: GitHub's real schema (its `createCommitOnBranch` input summarises `fileChanges`)
in process, in the deferred list, over MCP with the official client (dynamic and fixed) and through an
integration (pydantic-ai)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from dagtools import Session, ToolCall
from dagtools.catalogue import Catalogue
from dagtools.executors._base import SchemaOnlyExecutor
from tests.conftest import shared_catalogue, shared_schema_path

pytestmark = pytest.mark.public_schemas  # about the public APIs themselves (tests/conftest.py)

COMMIT = "Mutation_createCommitOnBranch"
BAD_FILE = {
    "input": {
        "branch": {"repositoryNameWithOwner": "octo/hello", "branchName": "main"},
        "expectedHeadOid": "a" * 40,
        "message": {"headline": "Add a file"},
        "fileChanges": {"additions": [{"path": 1}]},
    }
}
_POINTER = re.compile(r"\b(describeTools|readResult|callTool|selectTools) ([A-Za-z0-9_.]+)")


def pointed(text: str) -> list[tuple[str, str]]:
    """(tool, what it is pointed at) for every "describeTools X" in `text`."""
    return _POINTER.findall(text)


@pytest.fixture(scope="module")
def github() -> Catalogue:
    return shared_catalogue("github.schema.graphql", mutations=True)  # type: ignore[return-value]


def github_session(catalogue: Catalogue) -> Session:
    return Session(catalogue, SchemaOnlyExecutor())


def listed(session: Session) -> set[str]:
    return {tool.name for tool in session.tools()}


def check_every_pointer_exists(names: set[str], *texts: str) -> int:
    count = 0
    for text in texts:
        for tool, _target in pointed(text):
            assert tool in names, f"{text!r} points to {tool}, which is not among {sorted(names)}"
            count += 1
    return count


async def test_in_process_describe_tools_is_listed_once_a_schema_points_to_it(github: Catalogue) -> None:
    session = github_session(github)
    assert "describeTools" not in listed(session)  # the initial toolset stays as small as it was
    session.select(["Query_repository", "Mutation_addComment"])
    assert "describeTools" not in listed(session)  # neither schema summarises anything
    session.select([COMMIT])
    names = listed(session)
    assert "describeTools" in names
    texts = [json.dumps(tool.parameters) + tool.description for tool in session.tools()]
    assert check_every_pointer_exists(names, *texts) >= 1
    path = next(target for tool, target in pointed(json.dumps(github.tool(COMMIT).parameters)) if tool == "describeTools")
    described = await session.call_tool(ToolCall(name="describeTools", arguments={"tools": [path]}))
    assert not described.is_error, described.value
    assert "additions" in json.dumps(described.value)


async def test_in_process_argument_errors_point_only_where_the_schema_summarised(github: Catalogue) -> None:
    session = github_session(github)
    session.select([COMMIT, "Mutation_addComment"])
    bad = await session.call_tool(ToolCall(name=COMMIT, arguments=BAD_FILE))
    assert bad.is_error
    error = bad.value["error"]
    assert check_every_pointer_exists(listed(session), error) >= 1
    for _tool, target in pointed(error):  # each path the error names is one describeTools spells out
        spelled = await session.call_tool(ToolCall(name="describeTools", arguments={"tools": [target]}))
        assert not spelled.is_error, spelled.value
    whole = await session.call_tool(ToolCall(name="Mutation_addComment", arguments={"input": {"body": 1, "subjectId": "x"}}))
    assert whole.is_error and "describeTools" not in whole.value["error"]  # its whole schema is in the tool


async def test_a_script_may_call_describe_tools_before_any_tool_is_selected(github: Catalogue) -> None:
    session = github_session(github)
    result = await session.call_tool(ToolCall(name="describeTools", arguments={"tools": [f"{COMMIT}.input.fileChanges", "Query_viewer"]}))
    assert not result.is_error, result.value
    assert result.value["tools"][0]["name"] == "Query_viewer" and result.value["parts"][0]["type"] == "FileChanges"
    unknown = await session.call_tool(ToolCall(name="describeTools", arguments={"tools": ["Query_viewr"]}))
    assert unknown.is_error and "Query_viewer" in unknown.value["error"]
    assert session.active_tools == []  # describing selects nothing


async def test_a_script_follows_the_pointer_an_error_gave(github: Catalogue) -> None:
    from dagtools.scripts._script import load_script, run_script

    script = load_script(
        {
            "calls": [
                {"tool": "selectTools", "arguments": {"tools": [COMMIT]}},
                {"tool": COMMIT, "arguments": BAD_FILE, "expect_error": True},
                {"tool": "describeTools", "arguments": {"tools": [f"{COMMIT}.input.fileChanges.additions"]}},
            ]
        }
    )
    records = [record async for record in run_script(github_session(github), script)]
    assert [r.problem for r in records] == [None, None, None]
    assert f"describeTools {COMMIT}.input.fileChanges.additions" in records[1].result.value["error"]
    assert records[2].result.value["parts"][0]["type"] == "FileAddition"


def test_the_deferred_list_shows_describe_tools_from_the_start(github: Catalogue) -> None:
    session = github_session(github)
    listing = session.deferred_tools()
    shown = {tool.name for tool in listing.shown}
    assert "describeTools" in shown and not listing.is_deferred("describeTools")
    rendered = listing.render("anthropic")
    names = {tool.get("name") for tool in rendered}
    commit = next(tool for tool in rendered if tool.get("name") == COMMIT)
    assert check_every_pointer_exists(names, json.dumps(commit)) >= 1
    session.select([COMMIT])
    assert "describeTools" not in {tool.name for tool in listing.late()}  # the list did not have to grow


# -- MCP, with the official client ----------------------------------------------------------------------

mcp = pytest.importorskip("mcp")


def github_server(tools: str) -> Any:
    from dagtools.mcpserver import McpConfig, McpToolServer

    source = str(shared_schema_path("github.schema.graphql"))
    # Nothing here reaches the API: every call below is refused or answered before anything is sent.
    config = McpConfig(source=source, endpoint="http://127.0.0.1:9/graphql", tools=tools, mutations=True)  # type: ignore[arg-type]
    return McpToolServer(config)


def text(result: Any) -> str:
    return str(result.content[0].text)


async def test_mcp_dynamic_lists_what_its_schemas_and_errors_point_to() -> None:
    from mcp import Client

    async with Client(github_server("dynamic").server, mode="legacy") as client:
        assert "describeTools" not in {t.name for t in (await client.list_tools()).tools}
        selected = await client.call_tool("selectTools", {"tools": [COMMIT]})
        assert not selected.is_error, text(selected)
        tools = (await client.list_tools()).tools
        names = {t.name for t in tools}
        assert check_every_pointer_exists(names, *(json.dumps(t.input_schema) for t in tools)) >= 1
        bad = await client.call_tool(COMMIT, BAD_FILE)
        assert bad.is_error and check_every_pointer_exists(names, text(bad)) >= 1
        target = pointed(text(bad))[0][1]
        described = await client.call_tool("describeTools", {"tools": [target]})
        assert not described.is_error, text(described)


async def test_mcp_fixed_examples_come_from_the_api_and_pointers_resolve() -> None:
    from mcp import Client

    server = github_server("fixed")
    async with Client(server.server, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        # describeTools is served but not listed: selectTools answers a dotted path's part, and callTool runs it too
        assert set(tools) == {"selectTools", "callTool", "callChain"}
        found = re.search(r'(\{"steps": .*?\})\. ', tools["callChain"].description or "")
        assert found is not None, tools["callChain"].description
        chain = json.loads(found.group(1))["steps"]
        assert len(chain) == 2 and all(step["tool"] in server.catalogue for step in chain)  # a chain of this API's tools
        for tool in tools.values():
            assert "Potato" not in (tool.description or "") + json.dumps(tool.input_schema)
        shape = r'callTool\(tool: "([A-Za-z0-9_]+)", arguments: \{"([A-Za-z0-9_]+)": "([A-Za-z0-9_]+)#1"\}\)'
        example = re.search(shape, tools["callTool"].description or "")
        assert example is not None, tools["callTool"].description
        tool_name, parameter, type_name = example.groups()
        assert tool_name in server.catalogue and tool_name.startswith(f"{type_name}_") and parameter == type_name
        assert server.catalogue.schema.get_type(type_name) is not None
        path = re.search(r"dotted path's part \(([A-Za-z0-9_.]+)\)", tools["selectTools"].description or "")
        assert path is not None, tools["selectTools"].description
        part = await client.call_tool("selectTools", {"tools": [path.group(1)]})
        assert not part.is_error and json.loads(text(part))["parts"][0]["path"] == path.group(1), text(part)
        bad = await client.call_tool("callTool", {"tool": COMMIT, "arguments": BAD_FILE})
        served = {*tools, "describeTools"}
        assert bad.is_error and check_every_pointer_exists(served, text(bad)) >= 1
        schema = json.loads(text(await client.call_tool("selectTools", {"tools": [COMMIT]})))["tools"][0]["inputSchema"]
        assert check_every_pointer_exists(served, json.dumps(schema)) >= 1
        target = pointed(text(bad))[0][1]
        for name, arguments in (
            ("describeTools", {"tools": [target]}),
            ("callTool", {"tool": "describeTools", "arguments": {"tools": [target]}}),
            ("selectTools", {"tools": [target]}),
        ):  # every way a fixed-mode client can follow the pointer
            described = await client.call_tool(name, arguments)
            assert not described.is_error and json.loads(text(described))["parts"][0]["path"] == target, (name, text(described))


# -- an integration ---------------------------------------------------------------------------------------


async def test_pydantic_ai_is_offered_describe_tools_when_a_schema_points_to_it(github: Catalogue) -> None:
    pytest.importorskip("pydantic_ai", reason='pydantic-ai is not installed: pip install -e ".[pydantic-ai]"')
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from dagtools.integrations.pydantic_ai import DagtoolsToolset

    offered: list[dict[str, Any]] = []
    turns = [("selectTools", {"tools": [COMMIT]}), (COMMIT, BAD_FILE)]

    def respond(messages: Any, info: AgentInfo) -> ModelResponse:
        offered.append({t.name: t for t in info.function_tools})
        step = len(offered) - 1
        if step < len(turns):
            return ModelResponse(parts=[ToolCallPart(turns[step][0], turns[step][1], tool_call_id=f"c{step}")])
        if step == 2:  # follow the pointer the error gave
            answer = next(p for m in messages for p in m.parts if p.part_kind in ("tool-return", "retry-prompt") and p.tool_call_id == "c1")
            target = pointed(str(answer.content))[0][1]
            return ModelResponse(parts=[ToolCallPart("describeTools", {"tools": [target]}, tool_call_id="c2")])
        return ModelResponse(parts=[TextPart("done")])

    session = github_session(github)
    agent = Agent(FunctionModel(respond), toolsets=[DagtoolsToolset(session)])
    result = await agent.run("Commit a file to octo/hello.")
    assert result.output == "done"
    assert "describeTools" not in offered[0] and "describeTools" in offered[1]
    for tools in offered[1:]:
        texts = [json.dumps(t.parameters_json_schema) + (t.description or "") for t in tools.values()]
        assert check_every_pointer_exists(set(tools), *texts) >= 1
    described = [m for m in session.context if m.role == "tool" and m.tool_call_id == "c2"]
    assert described and "FileAddition" in json.dumps(described[0].content)
