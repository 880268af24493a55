"""`dagtools mcp --store`: keyed (2026-07-28) sessions that outlive the process and are shared by workers.

Driven by the official MCP SDK client over streamable HTTP, against `dagtools mcp` subprocesses on the
kitchen API served over loopback HTTP, with SQLite and a real redis-server as the store.
"""

from __future__ import annotations

import secrets
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from dagtools._errors import ConfigError  # noqa: E402
from dagtools.mcpserver import McpConfig, load_mcp_config  # noqa: E402
from dagtools.mcpserver.sessions import SESSION_HEADER  # noqa: E402
from tests.mcpserver.test_mcp import http_client, value  # noqa: E402
from tests.mcpserver.test_mcp_url import FRIES_OPTIONS, McpHttp, cache_dir  # noqa: E402, F401
from tests.stores.test_store import redis_url  # noqa: E402, F401


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.sqlite3'}"
    return str(request.getfixturevalue("redis_url"))


def keyed(url: str, key: str) -> Client:
    """A client in the stateless era (server/discover picks 2026-07-28) whose session is named by `key`."""
    return http_client(url, "auto", **{SESSION_HEADER: key})


async def call(url: str, key: str, tool: str, **arguments: Any) -> Any:
    """One fixed-mode `callTool` through a fresh client of the server at `url`, as a load balancer would route it."""
    async with keyed(url, key) as client:
        result = await client.call_tool("callTool", {"tool": tool, "arguments": arguments})
        assert not result.is_error, result.content[0].text
        return value(result)


async def test_restart_after_sigkill_keeps_the_ids(kitchen_url: str, cache_dir: Path, store_url: str) -> None:  # noqa: F811
    key = secrets.token_hex(16)
    options = ("--tools", "fixed", "--store", store_url, *FRIES_OPTIONS)
    with McpHttp(kitchen_url, cache_dir, *options) as first:
        assert (await call(first.url, key, "Potato_peel", Potato="Potato#1"))["result"] == "Potato#2"
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(10)
    with McpHttp(kitchen_url, cache_dir, *options) as second:
        peeled = await call(second.url, key, "Potato_peeled", Potato="Potato#2")
        assert peeled["result"] is True, "Potato#2 no longer means the peeled potato"
        assert (await call(second.url, key, "Potato_slice", Potato="Potato#2", shape="STICKS"))["result"] == "Potato#3"


async def test_without_a_store_a_restart_loses_the_session(kitchen_url: str, cache_dir: Path) -> None:  # noqa: F811
    key = secrets.token_hex(16)
    with McpHttp(kitchen_url, cache_dir, "--tools", "fixed", *FRIES_OPTIONS) as first:
        assert (await call(first.url, key, "Potato_peel", Potato="Potato#1"))["result"] == "Potato#2"
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(10)
    with McpHttp(kitchen_url, cache_dir, "--tools", "fixed", *FRIES_OPTIONS) as second:
        async with keyed(second.url, key) as client:
            result = await client.call_tool("callTool", {"tool": "Potato_slice", "arguments": {"Potato": "Potato#2", "shape": "STICKS"}})
        assert result.is_error and "Potato#2" in result.content[0].text


async def test_two_workers_serve_one_client_alternately(kitchen_url: str, cache_dir: Path, store_url: str) -> None:  # noqa: F811
    key = secrets.token_hex(16)
    options = ("--tools", "fixed", "--store", store_url, *FRIES_OPTIONS)
    with McpHttp(kitchen_url, cache_dir, *options) as a, McpHttp(kitchen_url, cache_dir, *options) as b:
        assert (await call(a.url, key, "Potato_peel", Potato="Potato#1"))["result"] == "Potato#2"
        assert (await call(b.url, key, "Potato_slice", Potato="Potato#2", shape="STICKS"))["result"] == "Potato#3"
        assert (await call(a.url, key, "Potato_cut"))["result"] == "STICKS", "the most recent Potato is not Potato#3 on both"
        assert (await call(b.url, key, "Query_potato", variety="Yukon"))["result"] == "Potato#4"
        async with keyed(a.url, key) as client:  # what a selected on b's calls, a lists too
            listed = await client.call_tool("selectTools", {})
        assert "Potato#4" in listed.content[0].text


async def test_calls_racing_on_two_workers_lose_no_update(kitchen_url: str, cache_dir: Path, store_url: str) -> None:  # noqa: F811
    key = secrets.token_hex(16)
    options = ("--tools", "fixed", "--store", store_url)
    with McpHttp(kitchen_url, cache_dir, *options) as a, McpHttp(kitchen_url, cache_dir, *options) as b:
        made: dict[str, str] = {}

        async def potato(url: str, variety: str) -> None:
            made[variety] = (await call(url, key, "Query_potato", variety=variety))["result"]

        async with anyio.create_task_group() as group:
            for n in range(6):
                group.start_soon(potato, (a, b)[n % 2].url, f"Variety{n}")
        assert sorted(made.values()) == [f"Potato#{n}" for n in range(1, 7)], made
        for variety, handle in made.items():  # every race's object is kept, on both workers
            for server in (a, b):
                assert (await call(server.url, key, "Potato_variety", Potato=handle))["result"] == variety


def test_store_option_and_config_key(tmp_path: Path) -> None:
    config = tmp_path / "mcp.yaml"
    config.write_text("source: api.graphql\nstore: sqlite:///sessions.db\n")
    assert load_mcp_config(config).store == "sqlite:///sessions.db"
    with pytest.raises(ConfigError, match="store must be memory:, sqlite:///PATH, redis://HOST:PORT/DB or redis[+]cluster://"):
        McpConfig(source="api.graphql", store="postgres://db")


# -- store faults: named, with what to do, and noticed at start ---------------------------------------------


def immutable(*paths: Path) -> None:
    """Make files unwritable even for root (chattr +i), or skip saying why this system cannot."""
    import shutil
    import subprocess

    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed: a store file cannot be made unwritable here")
    for path in paths:
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip(f"chattr +i is refused on {path} (not root, or the file system has no immutable flag)")


def writable(*paths: Path) -> None:
    import subprocess

    for path in paths:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)


async def test_a_store_that_cannot_be_written_stops_the_server_at_start(kitchen_url: str, tmp_path: Path, cache_dir: Path) -> None:  # noqa: F811
    import subprocess

    from dagtools.stores._open import open_store
    from tests.mcpserver.test_mcp import DAGTOOLS, ROOT
    from tests.mcpserver.test_mcp_url import subprocess_env

    db = tmp_path / "sessions.sqlite3"
    store = open_store(f"sqlite:///{db}")
    await store.check()  # creates the file
    await store.aclose()
    files = [p for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")) if p.exists()]
    immutable(*files)
    try:
        for url, says in [(f"sqlite:///{db}", str(db)), ("redis://127.0.0.1:1/0", "Check that it is running")]:
            started = subprocess.run(
                [DAGTOOLS, "mcp", kitchen_url, "--transport", "http", "--port", "0", "--store", url],
                cwd=str(ROOT),
                env=subprocess_env(cache_dir),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert started.returncode != 0, started.stderr
            assert says in started.stderr and "Traceback" not in started.stderr, started.stderr[-2000:]
    finally:
        writable(*files)


async def test_a_store_that_fails_while_serving_says_which_and_what_to_do(kitchen_url: str, tmp_path: Path, cache_dir: Path) -> None:  # noqa: F811
    db = tmp_path / "sessions.sqlite3"
    with McpHttp(kitchen_url, cache_dir, "--tools", "fixed", "--store", f"sqlite:///{db}", *FRIES_OPTIONS) as server:
        key = secrets.token_hex(16)
        assert (await call(server.url, key, "Potato_peel", Potato="Potato#1"))["result"] == "Potato#2"
        files = [p for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")) if p.exists()]
        immutable(*files)
        try:
            async with keyed(server.url, secrets.token_hex(16)) as fresh:  # opening a session writes to the store
                opened = await fresh.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}})
            text = opened.content[0].text
            assert opened.is_error and str(db) in text and "writable" in text, text
            assert "Internal server error" not in text and "could not be reached" not in text, text  # the store, not the API
        finally:
            writable(*files)
        # The store is writable again: the same server goes on, and the first session kept its objects.
        assert (await call(server.url, key, "Potato_slice", Potato="Potato#2", shape="STICKS"))["result"] == "Potato#3"


async def test_a_redis_server_that_goes_away_is_named_never_the_api(kitchen_url: str, cache_dir: Path) -> None:  # noqa: F811
    """Redis killed under a live session: the call says the store failed and that nothing ran; back
    with no data (no persistence), the session is said to be gone, with what to do."""
    from tests.redis_cluster import start_redis_server
    from tests.stores.test_store import redis_server

    url, server = redis_server()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    try:
        with McpHttp(kitchen_url, cache_dir, "--tools", "fixed", "--store", url, *FRIES_OPTIONS) as mcp:
            async with keyed(mcp.url, secrets.token_hex(16)) as client:
                peeled = await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}})
                assert not peeled.is_error, peeled.content[0].text
                server.send_signal(signal.SIGKILL)
                server.wait(10)
                down = await client.call_tool("callTool", {"tool": "Potato_peeled", "arguments": {"Potato": "Potato#2"}})
                text = down.content[0].text
                assert down.is_error and "did not run" in text and "Nothing was run" in text, text
                assert "Redis session store" in text and "Check that it is running" in text and "The API" not in text, text
                again = start_redis_server(port)
                assert again is not None
                server = again[1]
                back = await client.call_tool("callTool", {"tool": "Potato_peeled", "arguments": {"Potato": "Potato#2"}})
                text = back.content[0].text
                assert back.is_error and "no longer has session" in text and "open a new session" in text, text
    finally:
        server.terminate()
        server.wait(10)
