"""What one MCP call may send and one session may hold, and that every answer stays within its budget,
however often a name is repeated. Driven by the official MCP client over streamable HTTP against
`dagtools mcp` (a subprocess, or in this process where the test reads the server's own counters)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("mcp")

from dagtools.mcpserver import (
    McpConfig,  # noqa: E402
    McpToolServer,  # noqa: E402
)
from dagtools.mcpserver.sessions import (
    SCHEMAS_BUDGET,  # noqa: E402
    SESSION_HEADER,  # noqa: E402
)
from tests.conftest import FORGE, shared_schema_path  # noqa: E402
from tests.mcpserver.test_mcp import KITCHEN, value  # noqa: E402
from tests.mcpserver.test_mcp_security import client, serve  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, McpHttp  # noqa: E402


def config_file(tmp_path: Path, **options: Any) -> str:
    path = tmp_path / "limits.yaml"
    path.write_text(yaml.safe_dump({**yaml.safe_load(Path(MCP_YAML).read_text()), "source": KITCHEN, **options}))
    return str(path)


def keyed(url: str) -> Any:
    return client(url, **{SESSION_HEADER: secrets.token_hex(16)})


async def call(c: Any, tool: str, **arguments: Any) -> Any:
    return await c.call_tool("callTool", {"tool": tool, "arguments": arguments})


async def test_repeated_names_and_globs_are_expanded_once_and_the_answer_stays_small(tmp_path: Path) -> None:
    with McpHttp(KITCHEN, tmp_path, "--config", config_file(tmp_path)) as server:
        async with keyed(server.url) as c:
            names = ["Potato_*"] * 10_000 + ["Potato_peel"] * 3_000 + ["Potato_nothere"] * 3_000
            answer = await c.call_tool("selectTools", {"tools": names})
            text = answer.content[0].text
            assert not answer.is_error, text[:300]
            assert len(text) < 20_000, f"{len(text)} bytes for a handful of tools"
            listed = [t["name"] for t in json.loads(text)["tools"]]
            assert len(listed) == len(set(listed)) and "Potato_peel" in listed and "Potato_slice" in listed
            assert text.count("Potato_nothere") == 1, "an unknown name given 3,000 times is named more than once"
            described = await c.call_tool("describeTools", {"tools": ["Potato_peel"] * 15_000})
            assert [t["name"] for t in json.loads(described.content[0].text)["tools"]] == ["Potato_peel"]


async def test_too_many_different_names_are_refused_with_the_limit() -> None:
    with serve(McpToolServer(McpConfig(source=KITCHEN))) as url:
        async with keyed(url) as c:
            refused = await c.call_tool("selectTools", {"tools": [f"Potato_x{n}" for n in range(300)]})
            assert refused.is_error and "at most 256" in refused.content[0].text, refused.content[0].text


async def test_a_selection_larger_than_the_budget_names_what_did_not_fit() -> None:
    forge = str(shared_schema_path(FORGE))  # a GitHub-sized schema made here
    server = McpToolServer(McpConfig(source=forge))
    types = ("Repository", "Issue", "PullRequest", "User", "Organization", "Commit")
    many = [t for name in types for t in server.catalogue.tools_for_type(name)][:60]  # within the active set's cap, far beyond the budget
    with serve(server) as url:
        async with keyed(url) as c:
            answer = await c.call_tool("selectTools", {"tools": many * 50})
            text = answer.content[0].text
            assert not answer.is_error, text[:300]
            assert len(text.encode()) < SCHEMAS_BUDGET + 8_000, f"{len(text)} bytes"
            shown = json.loads(text)
            assert shown["tools"] and "describeTools" in shown["not_shown"], shown.get("not_shown")


async def test_a_large_argument_is_refused_with_the_limit_and_changes_nothing(tmp_path: Path) -> None:
    with McpHttp(KITCHEN, tmp_path, "--config", config_file(tmp_path)) as server:
        async with keyed(server.url) as c:
            big = await call(c, "Query_potato", variety="x" * (300 * 1024))
            assert big.is_error and "max_argument_bytes" in big.content[0].text, big.content[0].text
            assert value(await call(c, "Query_potato", variety="Yukon"))["result"] == "Potato#2"  # the refused call minted nothing


async def test_a_session_that_holds_its_most_is_refused_and_a_new_one_goes_on(tmp_path: Path) -> None:
    with McpHttp(KITCHEN, tmp_path, "--config", config_file(tmp_path, max_session_bytes=1024 * 1024)) as server:
        async with keyed(server.url) as c:
            answers = [await call(c, "Query_potato", variety=f"{n}" + "y" * 200_000) for n in range(8)]
            refused = [a for a in answers if a.is_error]
            assert refused and len(answers) - len(refused) <= 5, [a.content[0].text[:100] for a in answers]
            assert "max_session_bytes" in refused[0].content[0].text, refused[0].content[0].text
            assert (await call(c, "Query_potato", variety="z" * 200_000)).is_error  # full stays full
        async with keyed(server.url) as fresh:
            assert value(await call(fresh, "Query_potato", variety="small"))["result"] == "Potato#2"
