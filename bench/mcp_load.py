"""`dagtools mcp --transport http` under load, against a floor server, with the same clients in one run.

The floor is the official SDK's `MCPServer` with one trivial tool (`_floor_http.py`), served by uvicorn
over streamable HTTP on loopback as dagtools is. dagtools serves the kitchen example (fixed tools, its
API in process), once per store: memory, SQLite, and a real redis-server started here. For each count
of concurrent sessions, every server meets the same clients: that many official MCP clients (their
default mode, the 2026-07-28 protocol; dagtools' sessions named by a key each), each opening its
session with one call, then all together making `--calls` calls, one after another. dagtools' call
reads a field of an object of the session (`Potato_peeled` of Potato#1, a GraphQL execution); the
floor's says its text back.

    python bench/mcp_load.py [--sessions 50,200,1000] [--calls 10] [--stores memory,sqlite,redis]

Per server and count: calls/s (calls that succeeded over the time from the start signal to the
last answer), p50 and p99 of one call's latency, and errors (a refused or failed call, or a session
that could not open). Targets, dagtools against the floor at the same count: 0 errors, calls/s
>= 0.5x, p99 <= 2x. Exits 1 when one is missed.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # not bench/, whose mcp.py would hide the MCP SDK

from bench._figures import exit_status, figure, unmeasured  # noqa: E402
from tests.servers import free_port, wait_for_port  # noqa: E402

KITCHEN = ROOT / "examples" / "kitchen" / "mcp.yaml"
DAGTOOLS_CALL = ("callTool", {"tool": "Potato_peeled", "arguments": {"Potato": "Potato#1"}})
FLOOR_CALL = ("echo", {"text": "hello"})


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    seconds: float = 0.0

    def failed(self, what: str) -> None:
        self.errors += 1
        self.first_error = self.first_error or what[:300]

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


class Server:
    """A server process on a free loopback port; `.url` is its MCP endpoint."""

    def __init__(self, name: str, command: list[str], env: dict[str, str] | None = None) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [*command, str(self.port)] if name == "floor" else [*command, "--port", str(self.port)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            wait_for_port(self.port, timeout=60, alive=lambda: self.process.poll() is None)
        except (RuntimeError, TimeoutError):
            self.stop()
            raise RuntimeError(
                f"{name} did not start: {self.process.stderr.read().decode()[-2000:] if self.process.stderr else ''}"
            ) from None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


def dagtools_server(store: str) -> Server:
    script = Path(sys.executable).with_name("dagtools")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "dagtools.cli"]
    options = ["mcp", "--config", str(KITCHEN), "--transport", "http"] + (["--store", store] if store else [])
    return Server("dagtools", [*command, *options], {"DAGTOOLS_CACHE_DIR": tempfile.mkdtemp(prefix="dagtools-load-")})


async def drive(url: str, sessions: int, calls: int, call: tuple[str, dict[str, Any]], keyed: bool) -> Outcome:
    """`sessions` official clients at once, each opening its session, then all making `calls` calls."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    outcome = Outcome()
    ready = 0
    go = anyio.Event()
    opening = anyio.Semaphore(50)  # sessions open 50 at a time, before the clock starts
    name, arguments = call

    async def one() -> None:
        nonlocal ready
        headers = {"Dagtools-Session": secrets.token_hex(16)} if keyed else None
        client = Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)), mode="auto")
        try:
            async with opening:
                await client.__aenter__()
                opened = await client.call_tool(name, arguments)  # the session opens with its first call
                if opened.is_error:
                    raise RuntimeError(opened.content[0].text)  # type: ignore[union-attr]
        except Exception as error:
            outcome.failed(f"opening: {error!r}")
            ready += 1
            if ready == sessions:
                go.set()
            return
        try:
            ready += 1
            if ready == sessions:
                go.set()
            await go.wait()
            for _ in range(calls):
                started = time.perf_counter()
                try:
                    result = await client.call_tool(name, arguments)
                except Exception as error:
                    outcome.failed(repr(error))
                    continue
                if result.is_error:
                    outcome.failed(result.content[0].text)  # type: ignore[union-attr]
                else:
                    outcome.latencies.append(time.perf_counter() - started)
        finally:
            try:
                await client.__aexit__(None, None, None)
            except Exception:  # closing a client that met errors: its errors are counted already
                pass

    async with anyio.create_task_group() as group:
        for _ in range(sessions):
            group.start_soon(one)
        await go.wait()
        began = time.perf_counter()
    outcome.seconds = time.perf_counter() - began
    return outcome


def redis_store() -> tuple[str, subprocess.Popen[bytes]] | None:
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, alive=lambda: process.poll() is None)
    return f"redis://127.0.0.1:{port}/0", process


def report(label: str, outcome: Outcome, floor: Outcome | None) -> None:
    done = len(outcome.latencies)
    rate = done / outcome.seconds if outcome.seconds else 0.0
    p50, p99 = outcome.percentile(0.5) * 1000, outcome.percentile(0.99) * 1000
    figure(f"mcp_load_calls_per_s[{label}]", rate)
    figure(f"mcp_load_p50_ms[{label}]", p50)
    figure(f"mcp_load_p99_ms[{label}]", p99)
    if floor is None:
        figure(f"mcp_load_errors[{label}]", outcome.errors)
        return
    figure(f"mcp_load_errors[{label}]", outcome.errors, "== 0")
    if outcome.first_error:
        print(f"#   first error: {outcome.first_error}", flush=True)
    floor_rate = len(floor.latencies) / floor.seconds if floor.seconds else 0.0
    if floor_rate and floor.latencies:
        figure(f"mcp_load_calls_ratio[{label}]", rate / floor_rate, ">= 0.5")
        figure(f"mcp_load_p99_ratio[{label}]", p99 / (floor.percentile(0.99) * 1000), "<= 2")
    else:
        unmeasured(f"mcp_load_calls_ratio[{label}]", "the floor made no call")


async def run(counts: list[int], calls: int, stores: list[str]) -> None:
    started: list[Server] = []
    redis: subprocess.Popen[bytes] | None = None
    try:
        floor = Server("floor", [sys.executable, "-P", str(ROOT / "bench" / "_floor_http.py")])
        started.append(floor)
        servers: dict[str, Server] = {}
        for store in stores:
            url = ""
            if store == "sqlite":
                url = f"sqlite:///{tempfile.mkdtemp(prefix='dagtools-load-')}/sessions.sqlite3"
            elif store == "redis":
                found = redis_store()
                if found is None:
                    for count in counts:
                        unmeasured(f"mcp_load_calls_ratio[redis,{count}]", "redis-server is not installed (apt-get install redis-server)")
                    continue
                url, redis = found
            servers[store] = dagtools_server(url)
            started.append(servers[store])
        for count in counts:
            base = await drive(floor.url, count, calls, FLOOR_CALL, keyed=False)
            report(f"floor,{count}", base, None)
            for store, server in servers.items():
                report(f"{store},{count}", await drive(server.url, count, calls, DAGTOOLS_CALL, keyed=True), base)
    finally:
        for server in started:
            server.stop()
        if redis is not None:
            redis.terminate()
            redis.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="50,200,1000", help="counts of concurrent sessions (default 50,200,1000)")
    parser.add_argument("--calls", type=int, default=10, help="calls each session makes once all are open (default 10)")
    parser.add_argument("--stores", default="memory,sqlite,redis", help="dagtools' stores (default memory,sqlite,redis)")
    options = parser.parse_args()
    counts = [int(n) for n in options.sessions.split(",")]
    anyio.run(run, counts, options.calls, [s.strip() for s in options.stores.split(",")])
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
