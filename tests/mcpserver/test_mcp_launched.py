"""`dagtools mcp` as clients launch it: the command line of each setup in examples/clients (tests/clients.py),
started twice on one cache directory, with requests arriving at once.

The first start compiles the catalogue and keeps the first tool list beside it; every later start answers
its first `tools/list` from there and warms up behind it (imports, catalogue, schema) in a thread. What
a client does right after its first list (call a tool, list again, open a second session, or hang up)
must meet either the finished warm-up or wait for it: never a half-imported module or a half-built
catalogue. Each test runs a cold start and then warm ones, with the official clients (the Python SDK's,
the TypeScript SDK's from tests/js) over stdio and streamable HTTP, and raw JSON-RPC lines where a
client hangs up at once, as a health check does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from tests.clients import guarded_kitchen, launch_line, measured  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.mcpserver.test_mcp import ERAS, http_client, names  # noqa: E402
from tests.servers import free_port, wait_for_port  # noqa: E402

#: The setups that start an installed dagtools: the published ones run the same arguments through uvx
#: (tests/mcpserver/test_mcp_clients.py checks that), which cannot install anything here.
SETUPS = ["installed/claude-code.sh", "installed/claude_desktop_config.json", "installed/cursor-mcp.json", "installed/vscode-mcp.json"]
STARTS = ("cold", "warm", "warm again")
JS = ROOT / "tests" / "js"


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    with guarded_kitchen() as (url, _):
        yield url


def compiled(cache: Path) -> list[Path]:
    """The compiled forms the cold start left for the warm ones."""
    return sorted((cache / "compiled").glob("*.json"))


#: The first tools fixed mode lists (describeTools runs by its name but is not listed).
FIXED_TOOLS = ["selectTools", "callTool", "callChain"]


def has_first_listing(cache: Path) -> bool:
    return any(json.loads(path.read_text()).get("listings") for path in compiled(cache))


async def list_then_call_at_once(client: Client) -> None:
    """What a desktop client does on connecting: list, then call at once, then list while calling."""
    listed = names(await client.list_tools())
    assert listed[:3] == FIXED_TOOLS
    selected = await client.call_tool("selectTools", {"tools": ["Query_potato"]})
    assert not selected.is_error, selected.content[0].text
    results: dict[str, Any] = {}

    async def call() -> None:
        results["call"] = await client.call_tool("callTool", {"tool": "Query_potato", "arguments": {}})

    async def relist() -> None:
        results["list"] = names(await client.list_tools())

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        tg.start_soon(relist)
    assert not results["call"].is_error, results["call"].content[0].text
    assert json.loads(results["call"].content[0].text)["result"] == "Potato#1"
    assert results["list"] == listed


# -- over stdio, with the Python SDK's client ------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("setup", SETUPS)
async def test_each_setup_lists_and_calls_at_once_cold_then_warm(setup: str, era: str, api: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    line, env = launch_line(setup, api)
    params = StdioServerParameters(
        command=line[0], args=line[1:], env=measured({**env, "DAGTOOLS_CACHE_DIR": str(cache)}), cwd=str(tmp_path)
    )
    for start in STARTS:
        async with Client(params, mode=era) as client:
            await list_then_call_at_once(client)
        assert has_first_listing(cache), f"the {start} start left no first tool list for the next one"


async def test_two_clients_started_at_once_on_one_cache_cold_then_warm(api: str, tmp_path: Path) -> None:
    """Two desktop clients launching the same setup together: both compile at once on the cold start,
    both answer from the cache on the warm one."""
    cache = tmp_path / "cache"
    line, env = launch_line("installed/cursor-mcp.json", api)
    params = StdioServerParameters(
        command=line[0], args=line[1:], env=measured({**env, "DAGTOOLS_CACHE_DIR": str(cache)}), cwd=str(tmp_path)
    )

    async def one(era: str) -> None:
        async with Client(params, mode=era) as client:
            await list_then_call_at_once(client)

    for _ in STARTS[:2]:
        async with anyio.create_task_group() as tg:
            for era in ERAS:
                tg.start_soon(one, era)
    assert has_first_listing(cache)


# -- a client that lists and hangs up at once ---------------------------------------------------------

_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "health-check", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: What a health check (or `inspector --cli --method tools/list`) sends before closing stdin, in each era.
LIST_AND_HANG_UP = {
    "legacy": [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "health-check", "version": "1"}},
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ],
    "auto": [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": _META}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": _META}},
    ],
}


def _sources(api: str) -> dict[str, tuple[list[str], dict[str, str]]]:
    """A setup's API by URL, and a schema file (the project's own Relay example: SDL with no resolvers)."""
    line, env = launch_line("installed/vscode-mcp.json", api)
    schema = str(ROOT / "schemas" / "relay.graphql")
    return {"url": (line, env), "schema file": ([line[0], "mcp", schema], {})}


def list_and_hang_up(line: list[str], env: dict[str, str], cwd: Path, era: str) -> tuple[int, list[str], str]:
    """Start the server, send LIST_AND_HANG_UP's lines, close stdin as soon as the list is answered; the
    exit status, the tools listed and what the server said on stderr."""
    process = subprocess.Popen(line, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    assert process.stdin is not None and process.stdout is not None
    timer = threading.Timer(60, process.kill)
    timer.start()
    try:
        process.stdin.write("".join(json.dumps(message) + "\n" for message in LIST_AND_HANG_UP[era]))
        process.stdin.flush()
        tools: list[str] = []
        for answer in map(json.loads, process.stdout):
            if answer.get("id") == 2:
                tools = [t["name"] for t in answer.get("result", {}).get("tools", [])]
                break
        process.stdin.close()  # at once, as a health check does
        status = process.wait()
        return status, tools, process.stderr.read() if process.stderr else ""
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("source", ["url", "schema file"])
def test_a_client_that_lists_and_hangs_up_at_once_exits_zero(source: str, era: str, api: str, tmp_path: Path) -> None:
    line, env = _sources(api)[source]
    environment = measured({**os.environ, **env, "DAGTOOLS_CACHE_DIR": str(tmp_path / "cache")})
    for start in STARTS:
        status, tools, said = list_and_hang_up(line, environment, tmp_path, era)
        assert tools[:3] == FIXED_TOOLS, f"{start} start:\n{said}"
        assert status == 0 and "Traceback" not in said, f"{start} start exited {status}:\n{said}"
    assert has_first_listing(tmp_path / "cache")


# -- over streamable HTTP ---------------------------------------------------------------------------------


class LaunchedHttp:
    """`dagtools mcp ... --transport http` started as a user does, on a free loopback port."""

    def __init__(self, line: list[str], env: dict[str, str], cwd: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        command = [*line, "--transport", "http", "--port", str(self.port)]
        self.process = subprocess.Popen(
            command, env=measured({**os.environ, **env}), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )

    def wait_until_listening(self) -> None:
        try:
            wait_for_port(self.port, timeout=30, alive=lambda: self.process.poll() is None)
        except (RuntimeError, TimeoutError):
            self.stop()
            raise RuntimeError(f"dagtools mcp did not start:\n{self.stderr}") from None

    def stop(self) -> int:
        """Stop it as a service manager does (SIGTERM); its exit status. uvicorn shuts down gracefully,
        then raises the signal again, so a clean stop ends with -SIGTERM."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.stderr = self.process.stderr.read() if self.process.stderr else ""
        return self.process.returncode

    stderr = ""


async def _hang_up_after_listing(url: str, era: str) -> list[str]:
    async with http_client(url, era, key=f"health-{era}") as client:
        return names(await client.list_tools())


@pytest.mark.parametrize("era", ERAS)
async def test_over_http_a_second_client_lists_while_the_first_calls_cold_then_warm(era: str, api: str, tmp_path: Path) -> None:
    line, env = launch_line("installed/claude_desktop_config.json", api)
    env["DAGTOOLS_CACHE_DIR"] = str(tmp_path / "cache")
    # The race this catches is one of timing: over HTTP a warm start gives it one chance, so there are more.
    for start in (*STARTS, "warm 3", "warm 4"):
        server = LaunchedHttp(line, env, tmp_path)
        try:
            server.wait_until_listening()
            seen: dict[str, Any] = {}
            async with http_client(server.url, era, key=f"first-{era}") as first:

                async def second() -> None:
                    async with http_client(server.url, era, key=f"second-{era}") as client:
                        seen["second"] = names(await client.list_tools())

                async def health() -> None:
                    seen["health"] = await _hang_up_after_listing(server.url, era)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(list_then_call_at_once, first)
                    tg.start_soon(second)
                    tg.start_soon(health)
                called = await first.call_tool("callTool", {"tool": "Query_potato", "arguments": {}})
                assert json.loads(called.content[0].text)["result"] == "Potato#1", f"{start} start: {called.content[0].text}"
            assert seen["second"][:3] == seen["health"][:3] == FIXED_TOOLS
        finally:
            status = server.stop()
        assert "Traceback" not in server.stderr and "partially initialized" not in server.stderr, f"{start} start:\n{server.stderr}"
        assert status in (0, -signal.SIGTERM), f"{start} start exited {status}:\n{server.stderr}"
    assert has_first_listing(tmp_path / "cache")


# -- with the TypeScript SDK's client (tests/js) ------------------------------------------------------------


def _node_client() -> list[str]:
    installed = ROOT / "tests" / "conformance" / "node_modules" / ".bin" / "node"  # the Node 22 the conformance suite pins
    node = shutil.which("node") or (str(installed) if installed.exists() else None)
    if node is None:
        pytest.skip("the TypeScript SDK's client needs Node.js: node is not on PATH (nor in tests/conformance)")
    if not (JS / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.skip(
            f"@modelcontextprotocol/sdk is not installed in {JS / 'node_modules'}: run `npm ci --prefix tests/js` (as .ci/run does)"
        )
    return [node, str(JS / "mcp_client.mjs")]


def run_node_client(options: dict[str, Any]) -> dict[str, Any]:
    options = {
        **options,
        "select": {"name": "selectTools", "arguments": {"tools": ["Query_potato"]}},
        "call": {"name": "callTool", "arguments": {"tool": "Query_potato", "arguments": {}}},
    }
    run = subprocess.run(
        [*_node_client(), json.dumps(options)], capture_output=True, text=True, timeout=120, env=measured(dict(os.environ))
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def _assert_listed_and_called(out: dict[str, Any], start: str) -> None:
    assert out["first"][:3] == FIXED_TOOLS, start
    assert not out["selected"]["isError"], f"{start} start: {out['selected']['text']}"
    assert out["second"] == out["first"], start
    assert not out["called"]["isError"], f"{start} start: {out['called']['text']}"
    assert json.loads(out["called"]["text"])["result"] == "Potato#1"


@pytest.mark.parametrize("setup", ["installed/cursor-mcp.json", "installed/vscode-mcp.json"])
def test_the_typescript_sdk_client_lists_and_calls_at_once_over_stdio_cold_then_warm(setup: str, api: str, tmp_path: Path) -> None:
    _node_client()
    line, env = launch_line(setup, api)
    for start in STARTS:
        options = {
            "command": line[0],
            "args": line[1:],
            "env": measured({**env, "DAGTOOLS_CACHE_DIR": str(tmp_path / "cache")}),
            "cwd": str(tmp_path),
        }
        _assert_listed_and_called(run_node_client(options), start)
    assert has_first_listing(tmp_path / "cache")


def test_the_typescript_sdk_client_lists_and_calls_at_once_over_http_cold_then_warm(api: str, tmp_path: Path) -> None:
    _node_client()
    line, env = launch_line("installed/claude-code.sh", api)
    env["DAGTOOLS_CACHE_DIR"] = str(tmp_path / "cache")
    for start in STARTS:
        server = LaunchedHttp(line, env, tmp_path)
        try:
            server.wait_until_listening()
            _assert_listed_and_called(run_node_client({"url": server.url}), start)
        finally:
            status = server.stop()
        assert status in (0, -signal.SIGTERM) and "Traceback" not in server.stderr, f"{start} start exited {status}:\n{server.stderr}"
    assert has_first_listing(tmp_path / "cache")
