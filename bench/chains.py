"""The multi-hop SWAPI task ("the homeworlds of a starship's pilots") one hop a call against one
callChain, over real HTTP on swapi-graphql (graphql-js's reference server, started with node).

    python bench/chains.py

Figures, per tools mode (fixed through the official `mcp` client, dynamic through a session):
`multi_hop_calls_*` (target <= 3), `multi_hop_chain_requests_*` (target 1: the chain is one request),
and the bytes and o200k tokens the model reads, one hop a call and chained, with their ratio
(`multi_hop_read_ratio_*`, target <= 1: a chain reads no more than the hops did).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # not bench/, whose mcp.py would hide the MCP SDK

from bench._figures import exit_status, figure, tokens_o200k, unmeasured  # noqa: E402
from dagtools import ToolCall, open_session  # noqa: E402

CHAIN = [
    {"tool": "Query_starship", "arguments": {"starshipID": "10"}},
    {"tool": "Starship_pilotConnection"},
    {"tool": "Person_homeworld"},
]


class _Folders:
    """What tests/thirdparty.py's `start_node_server` asks of pytest's tmp_path_factory."""

    def mktemp(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-"))


class _Counting:
    """An executor that counts the documents it sends (introspection aside)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent = 0

    async def execute(self, document: str, variables: dict[str, Any] | None = None, **options: Any) -> Any:
        self.sent += "__schema" not in document
        return await self.inner.execute(document, variables, **options)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _read(texts: list[str], mode: str, how: str) -> tuple[int, int | None]:
    size = sum(len(t.encode()) for t in texts)
    tokens = tokens_o200k("".join(texts)) if texts else 0
    figure(f"multi_hop_{how}_calls_{mode}", len(texts))
    figure(f"multi_hop_{how}_bytes_{mode}", size)
    figure(f"multi_hop_{how}_tokens_o200k_{mode}", tokens)
    return size, tokens


def _ratios(mode: str, hops: tuple[int, int | None], chained: tuple[int, int | None], calls: int) -> None:
    figure(f"multi_hop_calls_{mode}", calls, "<= 3")
    figure(f"multi_hop_read_ratio_{mode}", chained[0] / hops[0], "<= 1")
    if hops[1] and chained[1] is not None:
        figure(f"multi_hop_tokens_ratio_{mode}", chained[1] / hops[1], "<= 1")


async def dynamic(url: str) -> None:
    async with await open_session(url, cache=False) as session:
        counting = session.executor = _Counting(session.executor)
        result = await session.call_tool(ToolCall(name="callChain", arguments={"steps": CHAIN}))
        assert not result.is_error, result.value
        figure("multi_hop_chain_requests_dynamic", counting.sent, "== 1")
        chained = _read([result.content], "dynamic", "chained")
    async with await open_session(url, cache=False) as session:
        texts: list[str] = []

        async def hop(name: str, **arguments: Any) -> Any:
            result = await session.call_tool(ToolCall(name=name, arguments=arguments))
            assert not result.is_error, result.value
            texts.append(result.content)
            return result.value

        await hop("selectTools", tools=["Query_starship", "Starship_pilotConnection", "Person_homeworld"])
        await hop("Query_starship", starshipID="10")
        for pilot in (await hop("Starship_pilotConnection"))["result"]:
            await hop("Person_homeworld", Person=pilot)
        hops = _read(texts, "dynamic", "one_hop_a_call")
    _ratios("dynamic", hops, chained, 1)


async def fixed(url: str) -> None:
    from mcp import Client

    from dagtools.mcpserver._config import McpConfig
    from dagtools.mcpserver._server import McpToolServer

    async def run(calls: list[tuple[str, dict[str, Any]]], client: Any, texts: list[str]) -> list[Any]:
        answers = []
        for name, arguments in calls:
            answer = await client.call_tool(name, arguments)
            assert not answer.is_error, answer.content[0].text
            texts.append(answer.content[0].text)
            answers.append(json.loads(answer.content[0].text))
        return answers

    chained_texts: list[str] = []
    async with Client(McpToolServer(McpConfig(source=url, tools="fixed", cache=False)).server, mode="legacy") as client:
        listed = next(t for t in (await client.list_tools()).tools if t.name == "callChain")
        await run([("callChain", {"steps": CHAIN})], client, chained_texts)
    chained = _read(chained_texts, "fixed", "chained")
    # what the tool list grew by, read once per conversation: counted against the chain, it still reads less
    listing = len(json.dumps(listed.model_dump(exclude_none=True, by_alias=True), ensure_ascii=False).encode())
    figure("call_chain_listing_bytes", listing)
    texts: list[str] = []
    async with Client(McpToolServer(McpConfig(source=url, tools="fixed", cache=False)).server, mode="legacy") as client:
        first = [("callTool", {"tool": "Query_starship", "arguments": {"starshipID": "10"}})]
        first.append(("callTool", {"tool": "Starship_pilotConnection", "arguments": {}}))
        pilots = (await run(first, client, texts))[1]["result"]
        await run([("callTool", {"tool": "Person_homeworld", "arguments": {"Person": p}}) for p in pilots], client, texts)
    hops = _read(texts, "fixed", "one_hop_a_call")
    _ratios("fixed", hops, chained, 1)
    figure("multi_hop_read_ratio_fixed_with_listing", (chained[0] + listing) / hops[0], "<= 1")


def main() -> int:
    try:
        from tests.thirdparty import SERVER_VERSIONS, start_node_server
    except ImportError as error:
        unmeasured("multi_hop_calls_fixed", f"tests/thirdparty.py is not importable: {error}")
        return exit_status()
    try:
        server = start_node_server("swapi.js", "swapi-graphql", _Folders())  # type: ignore[arg-type]
        with server as port:
            print(f"# {SERVER_VERSIONS['swapi-graphql']} on 127.0.0.1:{port}", flush=True)
            url = f"http://127.0.0.1:{port}/graphql"
            asyncio.run(dynamic(url))
            asyncio.run(fixed(url))
    except BaseException as error:  # pytest.skip raises a BaseException where node or the package is absent
        if type(error).__name__ != "Skipped":
            raise
        unmeasured("multi_hop_calls_fixed", str(error))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
