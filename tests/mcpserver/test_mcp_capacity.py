"""`dagtools mcp` at capacity, as many clients behind one address see it: no live session is ever pushed
out to make room; a new one is refused with 503, `Retry-After` and a message; idle sessions expire; a
session kept in a store leaves memory and comes back from the store. Driven by the official MCP client
over streamable HTTP against `dagtools mcp` subprocesses."""

from __future__ import annotations

import gc
import json
import secrets
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml

pytest.importorskip("mcp")

from dagtools.mcpserver.sessions import SESSION_HEADER  # noqa: E402
from tests.mcpserver.test_mcp import KITCHEN, value  # noqa: E402
from tests.mcpserver.test_mcp_security import client, peel, slice_  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, McpHttp  # noqa: E402


def limits(tmp_path: Path, **options: Any) -> str:
    path = tmp_path / "limits.yaml"
    kitchen = yaml.safe_load(Path(MCP_YAML).read_text())  # the fries task's inputs: Potato#1 and the rest
    path.write_text(yaml.safe_dump({**kitchen, "source": KITCHEN, **options}))
    return str(path)


def keys(count: int) -> list[str]:
    return [secrets.token_hex(16) for _ in range(count)]


async def peel_as(url: str, key: str) -> Any:
    async with client(url, **{SESSION_HEADER: key}) as c:
        return value(await peel(c))


async def slice_as(url: str, key: str) -> Any:
    async with client(url, **{SESSION_HEADER: key}) as c:
        result = await slice_(c)
        return result.content[0].text if result.is_error else value(result)


async def refusal(url: str, key: str) -> httpx.Response:
    """The HTTP answer to a stateless-era request that would open a new session under `key`."""
    answers: list[httpx.Response] = []

    async def keep(response: httpx.Response) -> None:
        await response.aread()
        answers.append(response)

    async with client(url, **{SESSION_HEADER: key}) as c:
        c.http.event_hooks["response"].append(keep)  # type: ignore[attr-defined]
        with pytest.raises(Exception):  # noqa: B017  (the client raises on a 503; what it says is checked below)
            await c.call_tool("selectTools", {"tools": ["Potato_peel"]})
    return answers[-1]


async def test_forty_clients_behind_one_address_keep_every_session(tmp_path: Path) -> None:
    # More clients than the old per-address quota (32), all from 127.0.0.1 as behind a proxy.
    with McpHttp(KITCHEN, tmp_path, "--config", limits(tmp_path)) as server:
        clients = keys(40)
        peeled: dict[str, Any] = {}
        sliced: dict[str, Any] = {}

        async def first(key: str) -> None:
            peeled[key] = await peel_as(server.url, key)

        async def second(key: str) -> None:
            sliced[key] = await slice_as(server.url, key)

        async with anyio.create_task_group() as group:
            for key in clients:
                group.start_soon(first, key)
        async with anyio.create_task_group() as group:
            for key in clients:
                group.start_soon(second, key)
    assert all(v == {"result": "Potato#2"} for v in peeled.values()), peeled
    lost = {k: v for k, v in sliced.items() if v != {"result": "Potato#3"}}
    assert not lost, f"{len(lost)} of 40 sessions lost their objects: {next(iter(lost.values()))}"


async def test_at_capacity_a_new_session_is_refused_with_503_and_no_live_one_is_closed(tmp_path: Path) -> None:
    with McpHttp(KITCHEN, tmp_path, "--config", limits(tmp_path, max_sessions=3)) as server:
        held = keys(3)
        for key in held:
            assert await peel_as(server.url, key) == {"result": "Potato#2"}
        refused = await refusal(server.url, secrets.token_hex(16))
        assert refused.status_code == 503
        assert 1 <= int(refused.headers["retry-after"]) <= 3600
        message = json.loads(refused.text)["error"]["message"]
        assert "3 sessions" in message and "max_sessions" in message and "no live session is closed" in message, message
        for key in held:  # every held session kept its objects
            assert await slice_as(server.url, key) == {"result": "Potato#3"}


async def test_idle_sessions_expire_and_make_room(tmp_path: Path) -> None:
    with McpHttp(KITCHEN, tmp_path, "--config", limits(tmp_path, max_sessions=2, session_ttl=1)) as server:
        old = keys(2)
        for key in old:
            assert await peel_as(server.url, key) == {"result": "Potato#2"}
        await anyio.sleep(1.5)
        assert await peel_as(server.url, secrets.token_hex(16)) == {"result": "Potato#2"}  # admitted: the old ones idled out
        assert "Potato#2" in await slice_as(server.url, old[0])  # an expired session starts afresh: its objects are gone


async def test_a_stored_session_leaves_memory_at_capacity_and_comes_back_from_the_store(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'sessions.sqlite3'}"
    with McpHttp(KITCHEN, tmp_path, "--config", limits(tmp_path, max_sessions=2), "--store", store) as server:
        clients = keys(5)
        for key in clients:  # more sessions than memory holds: none is refused
            assert await peel_as(server.url, key) == {"result": "Potato#2"}
        for key in clients:  # and each one, back from the store, still has its Potato#2
            assert await slice_as(server.url, key) == {"result": "Potato#3"}


# -- closing sessions stalls no one ---------------------------------------------------------------------------


async def test_closing_sessions_runs_no_collection_while_calls_are_in_flight() -> None:
    from dagtools.mcpserver import McpToolServer, load_mcp_config
    from tests.mcpserver.test_mcp_security import serve

    config = load_mcp_config(MCP_YAML).with_options(transport="http")
    server = McpToolServer(config)
    full_collections: list[float] = []

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            full_collections.append(time.monotonic())

    with serve(server) as url:
        busy = True

        async def keep_calling() -> None:
            async with client(url, **{SESSION_HEADER: secrets.token_hex(16)}) as c:
                while busy:
                    assert not (await c.call_tool("selectTools", {})).is_error

        async def open_and_close() -> None:
            async with client(url, "legacy") as c:
                assert value(await peel(c)) == {"result": "Potato#2"}

        gc.callbacks.append(count)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(keep_calling)
                await anyio.sleep(0.3)
                for _ in range(4):
                    async with anyio.create_task_group() as closing:
                        for _ in range(5):
                            closing.start_soon(open_and_close)
                during = (len(full_collections), server.memory.collections)
                busy = False
        finally:
            gc.callbacks.remove(count)
        # 20 sessions closed while calls kept coming: none of them ran a collection of its own.
        assert server.memory.collections == 0 and during[1] == 0
        assert during[0] <= 2, f"{during[0]} full collections while 20 sessions closed"
        # Once quiet, what they held is given back.
        deadline = time.monotonic() + 5
        while server.memory.collections == 0 and time.monotonic() < deadline:
            await anyio.sleep(0.1)
        assert server.memory.collections >= 1, "no collection once the server was quiet"
