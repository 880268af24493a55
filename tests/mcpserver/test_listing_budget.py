"""The first tool list a client reads stays within its token budget: o200k tokens of the JSON of the
tools the official Python client's `list_tools()` returns (every field, as a client passes them on),
fixed mode <= 600 and dynamic mode <= 400, on the APIs the tests start and on every public schema.
The list still says what to do: a model reaches a root tool it names, a dotted path's part, and a
root tool it does not name (found by search), in fixed mode through the official client."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from dagtools.mcpserver import (
    McpConfig,  # noqa: E402
    McpToolServer,  # noqa: E402
)
from tests.conftest import shared_schema_names, shared_schema_path  # noqa: E402

LIMITS = {"fixed": 600, "dynamic": 400}


def _encoding() -> Any:
    bpe_openai = pytest.importorskip("bpe_openai", reason="bpe-openai counts o200k tokens: pip install -e '.[bench]'")
    return bpe_openai.get_encoding("o200k_base")


async def _listed(source: str, mode: str) -> list[dict[str, Any]]:
    async with Client(McpToolServer(McpConfig(source=source, tools=mode, cache=False)).server) as client:
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await client.list_tools()).tools]


def _tokens(tools: list[dict[str, Any]]) -> int:
    return len(_encoding().encode(json.dumps(tools)))


@pytest.mark.parametrize("mode", ["fixed", "dynamic"])
async def test_swapi_and_media_first_lists_fit_the_budget(mode: str, swapi_url: str, media_url: str) -> None:
    for url in (swapi_url, media_url):
        tools = await _listed(url, mode)
        assert _tokens(tools) <= LIMITS[mode], (url, mode, _tokens(tools))
        select = next(t for t in tools if t["name"] == "selectTools")
        assert "- Query_*: " in select["description"] and "search" in select["description"]


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in shared_schema_names() if "introspection" not in n])
async def test_every_public_schema_first_list_fits_the_budget(name: str) -> None:
    for mode, limit in LIMITS.items():
        tools = await _listed(str(shared_schema_path(name)), mode)
        assert _tokens(tools) <= limit, (name, mode, _tokens(tools))
        described = " ".join(t.get("description", "") for t in tools)
        assert "+" not in described or "search" in described  # what is cut is counted, and search finds it


@pytest.mark.slow
@pytest.mark.public_schemas
async def test_a_fixed_client_reaches_listed_and_unlisted_root_tools_of_linear() -> None:
    path = shared_schema_path("linear.schema.graphql")
    async with Client(McpToolServer(McpConfig(source=str(path), tools="fixed", cache=False)).server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"selectTools", "callTool", "callChain"}
        listed = (tools["selectTools"].description or "").split("- Query_*: ", 1)[1].split("\n", 1)[0]
        assert "issues" in listed.split(", ") and "+" in listed  # the most-used objects' tools named, the rest counted
        assert "Query_issueImportJqlCheck" not in listed
        found = await client.call_tool("selectTools", {"search": "check a Jira import query"})
        assert not found.is_error
        selected = json.loads((await client.call_tool("selectTools", {"tools": ["Query_issues", "Query_issues.filter"]})).content[0].text)
        assert selected["tools"][0]["name"] == "Query_issues" and selected["parts"][0]["path"] == "Query_issues.filter"
