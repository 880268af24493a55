"""Keyed (2026-07-28) sessions of a launched `dagtools mcp` that move: a client that changes address, a
session that leaves memory or outlives its process in a store, a store that forgets. Driven by the
official MCP client over streamable HTTP and stdio, with SQLite and a real redis-server as stores."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from dagtools.mcpserver.sessions import SESSION_HEADER  # noqa: E402
from tests.mcpserver.test_mcp import DAGTOOLS, KITCHEN, ROOT, value  # noqa: E402
from tests.mcpserver.test_mcp_security import ALICE, TOKENS  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, McpHttp  # noqa: E402
from tests.redis_cluster import start_redis_server
from tests.servers import free_port  # noqa: E402


def config(tmp_path: Path, **options: Any) -> str:
    """The kitchen with the fries task's inputs (Potato#1 and the rest), and `options`."""
    path = tmp_path / "mcp.yaml"
    path.write_text(yaml.safe_dump({**yaml.safe_load(Path(MCP_YAML).read_text()), "source": KITCHEN, "tools": "fixed", **options}))
    return str(path)


def from_address(url: str, address: str, **headers: str) -> Client:
    """A stateless-era client whose connections come from `address` (any of 127.0.0.0/8 reaches loopback)."""
    http = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(local_address=address), headers=headers, timeout=httpx2.Timeout(30, read=300)
    )
    return Client(streamable_http_client(url, http_client=http), mode="auto")


async def call(c: Client, tool: str, **arguments: Any) -> Any:
    return await c.call_tool("callTool", {"tool": tool, "arguments": arguments})


def ok(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return value(result)["result"]


@contextmanager
def redis_server(port: int | None = None) -> Iterator[str]:
    """A redis-server of this test's own on loopback, without persistence: a restart starts it empty."""
    started = start_redis_server(port)
    if started is None:
        pytest.skip("redis-server is not installed (.ci/run installs it with apt-get): the Redis store is not tested here")
    url, process = started
    try:
        yield url
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | None]:
    if request.param == "memory":
        yield None
    elif request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        with redis_server() as url:
            yield url


# -- a client that changes address keeps its session ----------------------------------------------------


async def test_a_session_opened_from_one_address_is_used_from_another(tmp_path: Path, store: str | None) -> None:
    key = secrets.token_hex(16)
    extra = ("--store", store) if store else ()
    with McpHttp(KITCHEN, tmp_path, "--config", config(tmp_path), *extra) as server:
        async with from_address(server.url, "127.0.0.2", **{SESSION_HEADER: key}) as home:
            assert ok(await call(home, "Potato_peel", Potato="Potato#1")) == "Potato#2"
        async with from_address(server.url, "127.0.0.3", **{SESSION_HEADER: key}) as away:
            assert ok(await call(away, "Potato_slice", Potato="Potato#2", shape="STICKS")) == "Potato#3"
        async with from_address(server.url, "127.0.0.2", **{SESSION_HEADER: key}) as back:
            assert ok(await call(back, "Potato_cut")) == "STICKS"
    if store is None:
        return
    with McpHttp(KITCHEN, tmp_path, "--config", config(tmp_path), *extra) as restarted:  # restored from the store, elsewhere
        async with from_address(restarted.url, "127.0.0.4", **{SESSION_HEADER: key}) as elsewhere:
            assert ok(await call(elsewhere, "Potato_peeled", Potato="Potato#2")) is True
            assert ok(await call(elsewhere, "Potato_cut", Potato="Potato#3")) == "STICKS"


async def test_an_authenticated_callers_session_follows_it_to_another_address(tmp_path: Path) -> None:
    options = ("--config", config(tmp_path), "--auth-token-env", "MCP_TOKENS")
    with McpHttp(KITCHEN, tmp_path, *options, env={"MCP_TOKENS": TOKENS}) as server:
        async with from_address(server.url, "127.0.0.2", Authorization=f"Bearer {ALICE}") as home:
            assert ok(await call(home, "Potato_peel", Potato="Potato#1")) == "Potato#2"
        async with from_address(server.url, "127.0.0.3", Authorization=f"Bearer {ALICE}") as away:
            assert ok(await call(away, "Potato_slice", Potato="Potato#2", shape="STICKS")) == "Potato#3"


# -- the per-session cap counts what the session holds, wherever it has been ------------------------------

BIG = 200_000  # under max_argument_bytes (256 KiB); five of them fill a 1 MiB session
CAP = {"max_session_bytes": 1024 * 1024}


async def test_the_session_cap_holds_when_a_stored_session_leaves_memory_and_the_server_restarts(tmp_path: Path) -> None:
    with redis_server() as redis_url:
        for url in (f"sqlite:///{tmp_path / 'sessions.db'}", redis_url):
            key, other = secrets.token_hex(16), secrets.token_hex(16)
            options = ("--config", config(tmp_path, max_sessions=1, **CAP), "--store", url)
            answers = []
            with McpHttp(KITCHEN, tmp_path, *options) as server:
                for n in range(4):
                    async with from_address(server.url, "127.0.0.1", **{SESSION_HEADER: key}) as c:
                        answers.append(await call(c, "Query_potato", variety=f"{n}" + "y" * BIG))
                    async with from_address(server.url, "127.0.0.1", **{SESSION_HEADER: other}) as c:  # pushes the first out
                        ok(await call(c, "Query_potato", variety="small"))
            with McpHttp(KITCHEN, tmp_path, *options) as restarted:
                for n in range(4):
                    async with from_address(restarted.url, "127.0.0.1", **{SESSION_HEADER: key}) as c:
                        answers.append(await call(c, "Query_potato", variety=f"again{n}" + "y" * BIG))
            kept = [a for a in answers if not a.is_error]
            refused = [a.content[0].text for a in answers if a.is_error]
            assert 4 <= len(kept) <= 5, (url.split(":")[0], len(kept), refused)
            assert refused and all("max_session_bytes" in text for text in refused), refused


async def test_the_session_cap_holds_across_restarts_over_stdio(tmp_path: Path) -> None:
    """Over stdio the one client's session is kept in the store too, and comes back at the next start."""
    params = StdioServerParameters(
        command=DAGTOOLS,
        args=["mcp", "--config", config(tmp_path, **CAP), "--store", f"sqlite:///{tmp_path / 'sessions.db'}"],
        cwd=str(ROOT),
        env={"DAGTOOLS_CACHE_DIR": str(tmp_path / "cache")},
    )
    answers = []
    for start in range(3):
        async with Client(params, mode="auto") as c:
            for n in range(3):
                answers.append(await call(c, "Query_potato", variety=f"{start}.{n}" + "y" * BIG))
    kept = [a for a in answers if not a.is_error]
    assert 4 <= len(kept) <= 5, [a.content[0].text[:120] for a in answers]
    assert "max_session_bytes" in answers[-1].content[0].text


# -- a store that forgets says so ---------------------------------------------------------------------------


async def test_a_session_the_store_lost_is_said_to_be_gone_from_the_store(tmp_path: Path) -> None:
    port, key = free_port(), secrets.token_hex(16)
    first = redis_server(port)
    url = first.__enter__()
    try:
        with McpHttp(KITCHEN, tmp_path, "--config", config(tmp_path), "--store", url) as server:
            async with from_address(server.url, "127.0.0.1", **{SESSION_HEADER: key}) as c:
                assert ok(await call(c, "Potato_peel", Potato="Potato#1")) == "Potato#2"
            first.__exit__(None, None, None)
            first = redis_server(port)  # the same Redis, restarted without its data
            first.__enter__()
            async with from_address(server.url, "127.0.0.1", **{SESSION_HEADER: key}) as c:
                gone = await call(c, "Potato_slice", Potato="Potato#2", shape="STICKS")
                if "failed: Connection closed" in gone.content[0].text:  # a pooled connection to the old Redis: once
                    gone = await call(c, "Potato_slice", Potato="Potato#2", shape="STICKS")
            text = gone.content[0].text
            assert gone.is_error and "store no longer has" in text and "lost its data" in text, text
            assert "idle too long" not in text and "open a new session" in text, text
    finally:
        first.__exit__(None, None, None)
