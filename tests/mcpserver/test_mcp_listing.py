"""The tool list a client caches is what the server would list, until the server says it changed: a
launched `dagtools mcp`, over stdio and streamable HTTP in both protocol eras, driven through the fries
task by the official MCP client, which lists the tools again after every call and compares."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from tests.mcpserver.test_mcp import DAGTOOLS, ERAS, FRIES, KITCHEN, ROOT, Changes, http_client, listening  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, McpHttp  # noqa: E402


def dumped(listing: Any) -> list[dict[str, Any]]:
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listing.tools]


async def fries_relisting(client: Client, heard: Changes, *, dynamic: bool) -> dict[str, int]:
    """Run the fries task, listing the tools after every call; a list that changed unannounced fails."""
    listed = dumped(await client.list_tools())
    seen = {"announced": 0}
    async with listening(client, heard) if dynamic else nullcontext():  # fixed mode offers no listen: its list never changes
        if client.protocol_version == "2026-07-28":
            await anyio.sleep(0.3)  # the listen stream is open before the first call
        for call in FRIES["calls"]:
            if dynamic or call["tool"] in ("selectTools", "save"):
                result = await client.call_tool(call["tool"], call["arguments"])
            else:
                result = await client.call_tool("callTool", {"tool": call["tool"], "arguments": call["arguments"]})
            assert not result.is_error, result.content[0].text
            with anyio.move_on_after(0.5):  # a notice on another stream (the 2026-07-28 listen) may come a moment later
                await heard.event.wait()
            announced, heard.event = heard.event.is_set(), anyio.Event()
            now = dumped(await client.list_tools())
            if announced:
                seen["announced"] += 1
            elif now != listed:
                changed = [t["name"] for t, u in zip(now, listed) if t != u] or "the names"
                pytest.fail(f"after {call['tool']} the tool list changed ({changed}) and the client was not told")
            listed = now
    return seen


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with McpHttp(KITCHEN, tmp_path_factory.mktemp("listing"), "--config", MCP_YAML, "--tools", "dynamic") as server:
        yield server


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("mode", ["dynamic", "fixed"])
async def test_over_stdio_a_cached_tool_list_stays_true_until_a_change_is_announced(era: str, mode: str) -> None:
    heard = Changes()
    params = StdioServerParameters(command=DAGTOOLS, args=["mcp", "--config", MCP_YAML, "--tools", mode], cwd=str(ROOT))
    async with Client(params, mode=era, message_handler=heard.on_message) as client:
        seen = await fries_relisting(client, heard, dynamic=mode == "dynamic")
    assert seen["announced"] >= (2 if mode == "dynamic" else 0), seen


@pytest.mark.parametrize("era", ERAS)
async def test_over_http_a_cached_tool_list_stays_true_until_a_change_is_announced(http_server: McpHttp, era: str) -> None:
    heard = Changes()
    async with http_client(http_server.url, era, key=f"listing-{era}", message_handler=heard.on_message) as client:
        seen = await fries_relisting(client, heard, dynamic=True)
    assert seen["announced"] >= 2, seen
