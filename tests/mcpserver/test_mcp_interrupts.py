"""`dagtools mcp --transport http` launched as a user starts it: `--port 0` announces the port it bound,
and Ctrl-C (SIGINT) with a tool call in flight on a slow API stops it within a second or two, the call
cut off and said so, without a traceback; a second Ctrl-C stops it at once. Exit code 130. SIGTERM stays
a graceful shutdown."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from dagtools.cli._serve import graphql_app  # noqa: E402
from dagtools.executors import LocalExecutor  # noqa: E402
from dagtools.load._sources import load_schema  # noqa: E402
from tests.cli.test_interrupts import SLOW_API, STOPS_AT_ONCE, STOPS_WITHIN, Launched  # noqa: E402
from tests.mcpserver.test_mcp import http_client  # noqa: E402
from tests.servers import serve_asgi  # noqa: E402


@pytest.fixture
def slow_api_url(tmp_path) -> Iterator[str]:
    """A GraphQL API on loopback whose `slow` field answers after a minute."""
    path = tmp_path / "slow_api.py"
    path.write_text(SLOW_API)
    loaded = load_schema(f"{path}:schema")
    with serve_asgi(graphql_app(LocalExecutor(loaded.schema))) as url:
        yield url + "/graphql"


def mcp_on_port_0(api: str) -> tuple[Launched, str]:
    server = Launched("mcp", api, "--transport", "http", "--port", "0")
    server.wait_for(lambda: any("transport: streamable HTTP at" in line for line in server.lines), "the transport line")
    line = next(line for line in server.lines if "transport: streamable HTTP at" in line)
    return server, line.split(" at ", 1)[1].split(",", 1)[0].strip()


async def call_slow(url: str, outcome: dict[str, Any]) -> None:
    """Select Query_slow, then call it (it hangs in the API); `outcome` gets what the client ends with."""
    try:
        async with http_client(url, "legacy") as client:
            await client.call_tool("selectTools", {"tools": ["Query_slow"]})
            outcome["calling"] = time.monotonic()
            outcome["result"] = await client.call_tool("callTool", {"tool": "Query_slow", "arguments": {}})
    except Exception as error:  # the server went away under the call: any clean error will do
        outcome["error"] = error


def test_mcp_on_port_0_announces_the_port_it_bound(slow_api_url):
    server, url = mcp_on_port_0(slow_api_url)
    try:
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        assert port > 0 and url == f"http://127.0.0.1:{port}/mcp", url

        async def list_tools() -> list[str]:
            async with http_client(url, "legacy") as client:
                return [t.name for t in (await client.list_tools()).tools]

        assert "selectTools" in anyio.run(list_tools)  # the announced address is the one serving
    finally:
        server.kill()


@pytest.mark.parametrize("presses", [1, 2])
def test_mcp_over_http_stops_on_sigint_with_a_call_in_flight(slow_api_url, presses):
    server, url = mcp_on_port_0(slow_api_url)
    outcome: dict[str, Any] = {}
    try:

        async def scenario() -> float:
            async with anyio.create_task_group() as group:
                group.start_soon(call_slow, url, outcome)
                while "calling" not in outcome and "error" not in outcome:
                    await anyio.sleep(0.05)
                await anyio.sleep(1)  # the call is in the API's slow resolver
                seconds = await anyio.to_thread.run_sync(lambda: server.interrupt(times=presses))
                with anyio.fail_after(30):  # the client is not left hanging either
                    while "result" not in outcome and "error" not in outcome:
                        await anyio.sleep(0.05)
                return seconds

        seconds = anyio.run(scenario)
        _, err = server.finish()
    finally:
        server.kill()
    assert server.process.returncode == 130, err
    assert "Traceback" not in err and "ERROR" not in err, err
    if presses == 1:
        assert seconds < STOPS_WITHIN, (seconds, err)
        assert "dagtools: a request under way (POST /mcp) was cut off by the stop" in err
        assert "dagtools mcp: stopped (Ctrl-C)" in err
        assert "gave up" not in err
    else:
        assert seconds < STOPS_AT_ONCE, (seconds, err)
        assert "dagtools: stopped at once (Ctrl-C twice)" in err
    assert "result" not in outcome or outcome["result"].is_error, outcome  # never an answer the API did not give


def test_sigterm_stays_a_graceful_shutdown(slow_api_url):
    """A service manager's SIGTERM is not Ctrl-C: uvicorn's graceful shutdown, exit 0, nothing said of Ctrl-C."""
    server, url = mcp_on_port_0(slow_api_url)
    try:

        async def list_tools() -> list[str]:
            async with http_client(url, "legacy") as client:
                return [t.name for t in (await client.list_tools()).tools]

        assert "selectTools" in anyio.run(list_tools)
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)
        _, err = server.finish()
    finally:
        server.kill()
    assert server.process.returncode == 0, err
    assert "Traceback" not in err and "Ctrl-C" not in err, err
