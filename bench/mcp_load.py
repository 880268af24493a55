"""`dagtools mcp --transport http` under load, against a floor server, with the same clients in one run.

The floor is the official SDK's `MCPServer` with one trivial tool (`_floor_http.py`), served by uvicorn
over streamable HTTP on loopback as dagtools is. dagtools serves the kitchen example (fixed tools, its
API in process), once per store: memory, SQLite, and a real redis-server started here. For each count
of concurrent sessions, every server meets the same clients: that many official MCP clients (their
default mode, the 2026-07-28 protocol; dagtools' sessions named by a key each), each opening its
session with one call, then all together making `--calls` calls, one after another. dagtools' call
reads a field of an object of the session (`Potato_peeled` of Potato#1, a GraphQL execution); the
floor's says its text back.

One process cannot drive 200 clients without becoming the bottleneck itself, so the sessions are
spread over `--processes` client processes (this file run with `--worker`), each running its share of
official clients under anyio: each opens its sessions and says `ready`, the parent starts them all
together with a line on their stdin, and each returns its latencies as JSON, from which the parent
computes the figures. Floor and dagtools meet the same processes and clients. Each client process
prints its peak memory: about 80 MiB for 13 official clients and 300 MiB for 250, so 1,000 sessions
need no lighter client than the official one.

    python bench/mcp_load.py [--sessions 50,200,1000] [--calls 10] [--stores memory,sqlite,redis] [--processes 4]

Per server and count: calls/s (calls that succeeded over the time from the start signal to the
last answer), p50 and p99 of one call's latency, and errors (a refused or failed call, or a session
that could not open). Targets, dagtools against the floor at the same count: 0 errors, calls/s
>= 0.5x, p99 <= 2x. Exits 1 when one is missed.
"""

from __future__ import annotations

import argparse
import os
import secrets
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
from tests.redis_cluster import start_redis_server  # noqa: E402
from tests.servers import free_port, wait_for_port  # noqa: E402

KITCHEN = ROOT / "examples" / "kitchen" / "mcp.yaml"
DAGTOOLS_CALL = ("callTool", {"tool": "Potato_peeled", "arguments": {"Potato": "Potato#1"}})
FLOOR_CALL = ("echo", {"text": "hello"})
WORKER_TIMEOUT = 600


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    seconds: float = 0.0
    max_rss_kb: int = 0

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
        self.log = tempfile.TemporaryFile()  # a file, not a pipe: a server that logs much never blocks on it
        self.process = subprocess.Popen(
            [*command, str(self.port)] if name == "floor" else [*command, "--port", str(self.port)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        try:
            wait_for_port(self.port, timeout=60, alive=lambda: self.process.poll() is None)
        except (RuntimeError, TimeoutError):
            said = self.tail()
            self.stop()
            raise RuntimeError(f"{name} did not start: {said}") from None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]


def dagtools_server(store: str) -> Server:
    script = Path(sys.executable).with_name("dagtools")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "dagtools.cli"]
    options = ["mcp", "--config", str(KITCHEN), "--transport", "http"] + (["--store", store] if store else [])
    return Server("dagtools", [*command, *options], {"DAGTOOLS_CACHE_DIR": tempfile.mkdtemp(prefix="dagtools-load-")})


def worker_main(spec: str) -> int:
    """One client process: its share of the sessions, opened, then driven on the parent's start signal.

    Prints `ready` once its sessions are open, waits for a line on stdin, makes the calls, and prints
    one JSON line: latencies, errors, the first error, when its last call answered (wall clock, the
    parent's clock too) and its peak memory."""
    import json
    import resource

    given = json.loads(spec)
    outcome = anyio.run(drive, given["url"], given["sessions"], given["calls"], tuple(given["call"]), given["keyed"])
    print(
        json.dumps(
            {
                "latencies": outcome.latencies,
                "errors": outcome.errors,
                "first_error": outcome.first_error,
                "ended": outcome.seconds,
                "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            }
        ),
        flush=True,
    )
    return 0


async def drive(url: str, sessions: int, calls: int, call: tuple[str, dict[str, Any]], keyed: bool) -> Outcome:
    """In a client process: `sessions` official clients, each opening its session with one call; then,
    on the parent's signal, all making `calls` calls. `.seconds` is the wall-clock time the last answered."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    outcome = Outcome()
    ready = 0
    opened_all = anyio.Event()
    go = anyio.Event()
    opening = anyio.Semaphore(20)  # sessions open 20 at a time per process, before the clock starts
    name, arguments = call
    last = 0.0

    def counted() -> None:
        nonlocal ready
        ready += 1
        if ready == sessions:
            opened_all.set()

    async def one() -> None:
        nonlocal last
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
            counted()
            return
        try:
            counted()
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
                last = time.time()
        finally:
            try:
                await client.__aexit__(None, None, None)
            except Exception:  # closing a client that met errors: its errors are counted already
                pass

    async def signalled() -> None:
        await opened_all.wait()
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)
        go.set()

    with anyio.move_on_after(WORKER_TIMEOUT) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(signalled)
            for _ in range(sessions):
                group.start_soon(one)
    if scope.cancelled_caught:
        outcome.failed(f"the client process gave up after {WORKER_TIMEOUT} s")
    outcome.seconds = last
    return outcome


def measure(url: str, sessions: int, calls: int, call: tuple[str, dict[str, Any]], keyed: bool, processes: int) -> Outcome:
    """The sessions spread over client processes, which open theirs, wait for all to be ready, and are
    started together; the figures are computed here from the latencies each returns."""
    import json

    shares = [sessions // processes + (1 if i < sessions % processes else 0) for i in range(processes)]
    specs = [json.dumps({"url": url, "sessions": n, "calls": calls, "call": list(call), "keyed": keyed}) for n in shares if n]
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", spec],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for spec in specs
    ]
    outcome = Outcome()
    try:
        live = [w for w in workers if w.stdout and w.stdout.readline().strip() == "ready"]
        outcome.errors += 0 if len(live) == len(workers) else 1
        began = time.time()
        for worker in live:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        ended = began
        for worker in workers:
            line = worker.stdout.readline() if worker.stdout else ""
            if not line:
                outcome.failed(f"a client process ended with no figures (exit {worker.wait()})")
                continue
            got = json.loads(line)
            outcome.latencies += got["latencies"]
            outcome.errors += got["errors"]
            outcome.first_error = outcome.first_error or got["first_error"]
            ended = max(ended, got["ended"])
            outcome.max_rss_kb = max(outcome.max_rss_kb, got["max_rss_kb"])
        outcome.seconds = ended - began
    finally:
        for worker in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
    return outcome


def report(label: str, outcome: Outcome, floor: Outcome | None) -> None:
    done = len(outcome.latencies)
    rate = done / outcome.seconds if outcome.seconds else 0.0
    p50, p99 = outcome.percentile(0.5) * 1000, outcome.percentile(0.99) * 1000
    figure(f"mcp_load_calls_per_s[{label}]", rate)
    figure(f"mcp_load_p50_ms[{label}]", p50)
    figure(f"mcp_load_p99_ms[{label}]", p99)
    print(f"#   peak memory of one client process: {outcome.max_rss_kb / 1024:.0f} MiB", flush=True)
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


def run(counts: list[int], calls: int, stores: list[str], processes: int) -> None:
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
                found = start_redis_server()
                if found is None:
                    for count in counts:
                        unmeasured(f"mcp_load_calls_ratio[redis,{count}]", "redis-server is not installed (apt-get install redis-server)")
                    continue
                url, redis = found
            servers[store] = dagtools_server(url)
            started.append(servers[store])
        for count in counts:
            base = measure(floor.url, count, calls, FLOOR_CALL, False, processes)
            report(f"floor,{count}", base, None)
            for store, server in servers.items():
                report(f"{store},{count}", measure(server.url, count, calls, DAGTOOLS_CALL, True, processes), base)
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
    parser.add_argument("--processes", type=int, default=4, help="client processes the sessions are spread over (default 4)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        return worker_main(options.worker)
    counts = [int(n) for n in options.sessions.split(",")]
    run(counts, options.calls, [s.strip() for s in options.stores.split(",")], max(1, options.processes))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
