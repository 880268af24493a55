"""Calls/s and per-session memory of `dagtools mcp --transport http` with each store. Prints `figure: value` lines.

    python bench/store_http.py

For each store (`memory:`, `sqlite:///<tmpdir>/s.db`, and `redis://127.0.0.1:<port>/0` on a
redis-server this script starts on a free loopback port when `redis-server` is on PATH):
- `store_http_calls_per_s[<store>,workers=N]` for N = 1 and 2: N `dagtools mcp` processes on the
  kitchen in fixed mode, CLIENTS official-SDK clients at once over streamable HTTP (2026-07-28 era),
  each naming its own session with a strong key in `_meta` and making CALLS `callTool` calls of
  `Query_potato`. Client i talks to worker i mod N (a memory store cannot share a session between
  processes, so every store gets the same split); calls/s = total calls / wall time.
- `store_http_server_rss_mb_per_session[<store>]`: growth of the workers' VmRSS over the run
  (workers=2 run) divided by the number of sessions.
"""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# bench/mcp.py would shadow the MCP SDK: import from the project root, not from bench/.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tests.redis_cluster import start_redis_server  # noqa: E402
from tests.servers import free_port, wait_for_port  # noqa: E402

DAGTOOLS = str(Path(sys.executable).with_name("dagtools"))
KITCHEN = "examples/kitchen/api.py:schema"
CLIENTS = 50
CALLS = 10
POTATO = {"tool": "Query_potato", "arguments": {}}


def figure(name: str, value: float) -> None:
    print(f"{name}: {value:.3f}", flush=True)


def rss_kb(pid: int) -> int:
    """Resident memory of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def start_workers(store: str, count: int, cache_dir: str) -> list[tuple[subprocess.Popen[bytes], str]]:
    """`count` `dagtools mcp` processes on one store, each on its own free port, once they accept connections."""
    workers = []
    for _ in range(count):
        port = free_port()
        process = subprocess.Popen(
            [DAGTOOLS, "mcp", KITCHEN, "--transport", "http", "--port", str(port), "--store", store, "--tools", "fixed"],
            cwd=str(ROOT),
            env={**_env(), "DAGTOOLS_CACHE_DIR": cache_dir},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        workers.append((process, f"http://127.0.0.1:{port}/mcp"))
    for process, url in workers:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        wait_for_port(port, timeout=60, alive=lambda: all(p.poll() is None for p, _ in workers))
    return workers


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("DAGTOOLS_HEADERS", "DAGTOOLS_AUTHORIZATION")}


def stop(workers: list[tuple[subprocess.Popen[bytes], str]]) -> None:
    for process, _ in workers:
        process.terminate()
    for process, _ in workers:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def one_client(url: str, errors: list[str]) -> None:
    meta = {"dagtools/session": secrets.token_urlsafe(30)}  # 40 characters
    async with Client(streamable_http_client(url), mode="auto") as client:
        for _ in range(CALLS):
            result = await client.call_tool("callTool", POTATO, meta=meta)
            if result.is_error:
                errors.append(str(result.content)[:200])


async def run(store: str, count: int, cache_dir: str) -> None:
    workers = start_workers(store, count, cache_dir)
    try:
        # One warm-up call per worker, so imports and the schema load are not counted.
        await asyncio.gather(*(one_warmup(url) for _, url in workers))
        before = sum(rss_kb(p.pid) for p, _ in workers)
        errors: list[str] = []
        start = time.perf_counter()
        await asyncio.gather(*(one_client(workers[i % count][1], errors) for i in range(CLIENTS)))
        elapsed = time.perf_counter() - start
        after = sum(rss_kb(p.pid) for p, _ in workers)
        if errors:
            print(f"# {len(errors)} calls failed, first: {errors[0]}", flush=True)
        figure(f"store_http_calls_per_s[{store},workers={count}]", CLIENTS * CALLS / elapsed)
        if count == 2:
            figure(f"store_http_server_rss_mb_per_session[{store}]", (after - before) / 1024 / CLIENTS)
    finally:
        stop(workers)


async def one_warmup(url: str) -> None:
    async with Client(streamable_http_client(url), mode="auto") as client:
        await client.call_tool("callTool", POTATO, meta={"dagtools/session": secrets.token_urlsafe(30)})


def start_redis() -> tuple[subprocess.Popen[bytes] | None, str | None]:
    started = start_redis_server()
    if started is None:
        print("# redis-server is not on PATH: no Redis figures", flush=True)
        return None, None
    url, server = started
    return server, url


async def main() -> None:
    print(f"# {CLIENTS} clients at once, {CALLS} callTool(Query_potato) each; client i on worker i mod N", flush=True)
    redis, redis_url = start_redis()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            stores = ["memory:", f"sqlite:///{tmp}/s.db"] + ([redis_url] if redis_url else [])
            for store in stores:
                for count in (1, 2):
                    await run(store, count, f"{tmp}/cache")
    finally:
        if redis is not None:
            redis.terminate()
            redis.wait(10)


if __name__ == "__main__":
    asyncio.run(main())
