"""The multi-hop SWAPI task ("the homeworlds of a starship's pilots") one hop a call against one
callChain, over real HTTP on swapi-graphql (graphql-js's reference server, started with node).

    python bench/chains.py

Every figure is counted from what ran: both paths run through the official `mcp` client in each tools
mode, each in a conversation of its own, and the requests are the GraphQL requests that reached the
server, counted by a recording proxy in front of it (introspection aside). Both paths learn their
tools the same way and pay for it: one `selectTools` naming the three tools, whose call, answer (the
parameter schemas in fixed mode) and the schemas the tool list grew by (dynamic mode's selected tools
and callChain, listed from then on) count as one call read once, on either side. A path that did not
answer the task (the pilots' homeworlds, as swapi's data has them) counts as missed whatever it cost.
Per tools mode:

- `multi_hop_chained_calls_*` (target <= 3, selectTools included) and `multi_hop_chained_requests_*`
  (target == 1: a chain is one request), with `multi_hop_chained_answered_*` (target == 1);
- the same for one hop a call, without targets, beside them;
- the bytes and o200k tokens the model reads each way, and their ratio (`multi_hop_read_ratio_*`,
  target <= 1: a chain reads no more than the hops did); in fixed mode also with callChain's entry
  in the first list charged to the chain alone (`multi_hop_read_ratio_fixed_with_listing`).
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

CHAIN = [
    {"tool": "Query_starship", "arguments": {"starshipID": "10"}},
    {"tool": "Starship_pilotConnection"},
    {"tool": "Person_homeworld"},
]


class _Folders:
    """What tests/thirdparty.py's `start_node_server` asks of pytest's tmp_path_factory."""

    def mktemp(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-"))


#: The Millennium Falcon's pilots' homeworlds, as swapi-graphql's data has them.
HOMEWORLDS = ("Kashyyyk", "Corellia", "Socorro", "Sullust")


class _Ran:
    """What one path did: the calls the client made, the texts it read, the requests that reached the server."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.start = len(recorder.requests)
        self.texts: list[str] = []

    @property
    def requests(self) -> int:
        return sum(1 for r in self.recorder.requests[self.start :] if not r.is_introspection)

    def figures(self, mode: str, how: str, target: bool) -> tuple[int, int | None]:
        answered = all(name in "".join(self.texts) for name in HOMEWORLDS)
        figure(f"multi_hop_{how}_answered_{mode}", int(answered), "== 1" if target else None)
        figure(f"multi_hop_{how}_calls_{mode}", len(self.texts), "<= 3" if target else None)
        figure(f"multi_hop_{how}_requests_{mode}", self.requests, "== 1" if target else None)
        size = sum(len(t.encode()) for t in self.texts)
        tokens = tokens_o200k("".join(self.texts)) if self.texts else 0
        figure(f"multi_hop_{how}_bytes_{mode}", size)
        figure(f"multi_hop_{how}_tokens_o200k_{mode}", tokens)
        return size, tokens


def _ratios(mode: str, hops: tuple[int, int | None], chained: tuple[int, int | None]) -> None:
    figure(f"multi_hop_read_ratio_{mode}", chained[0] / hops[0] if hops[0] else None, "<= 1")
    if hops[1] and chained[1] is not None:
        figure(f"multi_hop_tokens_ratio_{mode}", chained[1] / hops[1], "<= 1")


def _dumped(tools: list[Any]) -> dict[str, str]:
    return {t.name: json.dumps(t.model_dump(exclude_none=True, by_alias=True), ensure_ascii=False) for t in tools}


async def _path(client: Any, ran: _Ran, chained: bool) -> None:
    """One path through the official client: the tools learnt by selectTools (its call, its answer and
    the schemas the tool list grew by, all read by the model), then the hops or the chain."""
    before = _dumped((await client.list_tools()).tools)
    fixed = "callTool" in before  # fixed mode runs a field tool through callTool, dynamic mode by its name
    learn = {"tools": [step["tool"] for step in CHAIN]}
    answer = await client.call_tool("selectTools", learn)
    assert not answer.is_error, answer.content[0].text
    grown = [text for name, text in _dumped((await client.list_tools()).tools).items() if name not in before]
    ran.texts.append("".join([json.dumps({"name": "selectTools", "arguments": learn}), answer.content[0].text, *grown]))

    async def call(tool: str, arguments: dict[str, Any]) -> Any:
        if fixed and tool != "callChain":
            tool, arguments = "callTool", {"tool": tool, "arguments": arguments}
        answer = await client.call_tool(tool, arguments)
        ran.texts.append(answer.content[0].text)
        return {} if answer.is_error else json.loads(answer.content[0].text)

    if chained:
        await call("callChain", {"steps": CHAIN})
        return
    await call("Query_starship", {"starshipID": "10"})
    for pilot in (await call("Starship_pilotConnection", {})).get("result", []):
        await call("Person_homeworld", {"Person": pilot})


async def both_paths(url: str, recorder: Any, mode: str) -> None:
    """The chain and the hops in `mode`, each in a conversation of its own that learns its tools the same way."""
    from mcp import Client

    from dagtools.mcpserver import McpConfig, McpToolServer

    figures = {}
    listing = 0
    for how, chained in (("chained", True), ("one_hop_a_call", False)):
        async with Client(McpToolServer(McpConfig(source=url, tools=mode, cache=False)).server, mode="legacy") as client:
            ran = _Ran(recorder)
            await _path(client, ran, chained)
            if mode == "fixed" and chained:
                listing = len(_dumped((await client.list_tools()).tools)["callChain"].encode())
        figures[how] = ran.figures(mode, how, chained)
    _ratios(mode, figures["one_hop_a_call"], figures["chained"])
    if mode == "fixed":
        # callChain's entry in the first list, read once per conversation: counted against the chain alone,
        # though the hops' list carries it too
        figure("call_chain_listing_bytes", listing)
        hops, chained_figures = figures["one_hop_a_call"], figures["chained"]
        figure("multi_hop_read_ratio_fixed_with_listing", (chained_figures[0] + listing) / hops[0] if hops[0] else None, "<= 1")


def run_chains_bench() -> None:
    """For bench/run.py: this bench in its own process (bench/ on run.py's path hides the `mcp` SDK
    behind bench/mcp.py), its lines passed on, a missed target there a missed target here."""
    import subprocess

    done = subprocess.run([sys.executable, str(Path(__file__))], capture_output=True, text=True, check=False)
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [""])[-1]
        figure("multi_hop_targets_met", 0, "== 1")
        if tail:
            print(f"# bench/chains.py: {tail}", flush=True)


def main() -> int:
    try:
        from tests.servers import Recorder, forwarding, serve_asgi
        from tests.thirdparty import SERVER_VERSIONS, start_node_server
    except ImportError as error:
        unmeasured("multi_hop_calls_fixed", f"tests/thirdparty.py is not importable: {error}")
        return exit_status()
    try:
        server = start_node_server("swapi.js", "swapi-graphql", _Folders())  # type: ignore[arg-type]
        with server as port:
            print(f"# {SERVER_VERSIONS['swapi-graphql']} on 127.0.0.1:{port}", flush=True)
            recorder = Recorder(forwarding(f"http://127.0.0.1:{port}/graphql"))
            with serve_asgi(recorder) as base:  # the proxy counts every request that reaches the server
                for mode in ("dynamic", "fixed"):
                    asyncio.run(both_paths(f"{base}/graphql", recorder, mode))
    except BaseException as error:  # pytest.skip raises a BaseException where node or the package is absent
        if type(error).__name__ != "Skipped":
            raise
        unmeasured("multi_hop_calls_fixed", str(error))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
