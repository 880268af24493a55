"""What a warm start defers is done once: the warm-up thread and the requests that need it first share
one preparation under a lock (`WarmUp`), and a catalogue asked for by two threads at once is compiled
once. In process, with the SDK's in-memory client; tests/mcpserver/test_mcp_launched.py does the same
with the console script."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from dagtools.load._warm_start import load_cached  # noqa: E402
from dagtools.mcpserver import (
    McpConfig,  # noqa: E402
    McpToolServer,  # noqa: E402
)
from dagtools.mcpserver.listing import WarmUp  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

SCHEMA = str(ROOT / "schemas" / "kitchen.graphql")


class Slow:
    """A preparation that takes a while and counts how often it ran, failing the first `fails` times."""

    def __init__(self, seconds: float = 0.2, fails: int = 0) -> None:
        self.seconds, self.fails, self.runs, self.started = seconds, fails, 0, threading.Event()

    def __call__(self) -> None:
        self.runs += 1
        self.started.set()
        time.sleep(self.seconds)
        if self.runs <= self.fails:
            raise RuntimeError("the schema is not there yet")


async def test_the_thread_and_the_requests_prepare_once_and_none_goes_on_before_it_is_done() -> None:
    prepare = Slow()
    warm = WarmUp(prepare)
    then = threading.Event()
    warm.start(then.set)
    assert prepare.started.wait(5)
    seen: list[bool] = []

    def in_a_thread() -> None:
        warm.run()
        seen.append(warm.done)

    threads = [threading.Thread(target=in_a_thread) for _ in range(4)]
    for thread in threads:
        thread.start()
    async with anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(warm.ready)
    assert warm.done
    for thread in threads:
        thread.join(5)
    assert prepare.runs == 1 and seen == [True] * 4
    assert then.wait(5), "the thread goes on to what comes after (the schema)"


async def test_a_failed_warm_up_is_tried_again_by_the_request_that_needs_it() -> None:
    prepare = Slow(seconds=0.01, fails=1)
    warm = WarmUp(prepare)
    then = threading.Event()
    warm.start(then.set)  # fails in the thread: logged, not raised
    assert prepare.started.wait(5)
    deadline = time.monotonic() + 5
    while prepare.runs < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    await warm.ready()  # the request runs it again, and this time it works
    assert warm.done and prepare.runs == 2 and not then.is_set()


async def warm_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: str) -> McpToolServer:
    """A server started on a cache an earlier start filled: its first list comes from there."""
    monkeypatch.setenv("DAGTOOLS_CACHE_DIR", str(tmp_path))
    config = McpConfig(source=SCHEMA, tools=tools)
    async with Client(McpToolServer(config).server) as cold:
        await cold.list_tools()
    server = McpToolServer(config)
    assert server._first_listing is not None and server._catalogue is None, "a warm start defers the catalogue"
    return server


@pytest.mark.parametrize("tools", ["fixed", "dynamic"])
async def test_a_warm_start_lists_from_the_cache_then_calls_and_lists_at_once(
    tools: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = await warm_server(tmp_path, monkeypatch, tools)
    async with Client(server.server) as first, Client(server.server) as second:
        listed = [t.name for t in (await first.list_tools()).tools]
        results: dict[str, Any] = {}

        async def call() -> None:
            results["call"] = await first.call_tool("selectTools", {"tools": ["Query_potato"]})

        async def relist() -> None:
            results["list"] = [t.name for t in (await second.list_tools()).tools]

        async with anyio.create_task_group() as tg:  # right after the first list, as the warm-up runs
            tg.start_soon(call)
            tg.start_soon(relist)
        assert not results["call"].is_error, results["call"].content[0].text
        assert results["list"][: len(listed)] == listed  # dynamic: with the tools the call selected, when it came first
    assert server._warm.done


def test_a_catalogue_asked_for_by_two_threads_at_once_is_compiled_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagtools.catalogue import _catalogue
    from dagtools.session._open import catalogue_for

    monkeypatch.setenv("DAGTOOLS_CACHE_DIR", str(tmp_path))
    loaded = load_cached(SCHEMA)
    compiled: list[int] = []
    real = _catalogue.compile_catalogue

    def counted(*args: Any, **kwargs: Any) -> Any:
        compiled.append(1)
        time.sleep(0.1)  # long enough for the other thread to ask meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr("dagtools.catalogue._compiled.compile_catalogue", counted)
    found: list[Any] = []
    threads = [threading.Thread(target=lambda: found.append(catalogue_for(loaded, mutations=True))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(found) == 3 and found[0] is found[1] is found[2]
    assert len(compiled) == 1
