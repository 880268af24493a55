"""Memory of `dagtools mcp --transport http` while MCP clients send large arguments, and after they close.

Each client opens a session (handshake era: an `Mcp-Session-Id`), sends `--calls` tool calls whose
arguments are `--megabytes` MB of text each, and closes its session. The server's resident memory
(VmRSS of the process) is read before, at the peak and after every client has closed.

    python bench/mcp_memory.py [--clients 4] [--calls 20] [--megabytes 3]   # prints `figure: value` lines
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # not bench/, whose mcp.py would hide the MCP SDK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def one_client(url: str, calls: int, megabytes: float) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    big = "x" * int(megabytes * 1024 * 1024)
    async with Client(streamable_http_client(url), mode="legacy") as client:
        for n in range(calls):
            # Arguments the server must read whole; the call fails (no such tool) and changes nothing.
            await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1", "note": big + str(n)}})


async def measure(args: argparse.Namespace) -> None:
    from tests.servers import free_port, wait_for_port

    port = free_port()
    script = Path(sys.executable).with_name("dagtools")
    kitchen = f"{ROOT / 'examples' / 'kitchen' / 'mcp.yaml'}"
    process = subprocess.Popen(
        [str(script), "mcp", "--config", kitchen, "--transport", "http", "--port", str(port)],
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        env={**os.environ, "DAGTOOLS_CACHE_DIR": "/tmp/dagtools-bench-cache"},
    )
    try:
        wait_for_port(port, timeout=30, alive=lambda: process.poll() is None)
        url = f"http://127.0.0.1:{port}/mcp"
        await one_client(url, 1, 0.001)  # warm up: imports, the first session
        before = rss_mb(process.pid)
        peak = before
        async with anyio.create_task_group() as outer:

            async def watch() -> None:
                nonlocal peak
                while True:
                    peak = max(peak, rss_mb(process.pid))
                    await anyio.sleep(0.05)

            outer.start_soon(watch)
            async with anyio.create_task_group() as clients:
                for _ in range(args.clients):
                    clients.start_soon(one_client, url, args.calls, args.megabytes)
            outer.cancel_scope.cancel()
        await anyio.sleep(2)  # the SDK ends a closed session's server task shortly after the DELETE
        after = rss_mb(process.pid)
        sent = args.clients * args.calls * args.megabytes
        print(f"sent_mb: {sent:.0f}")
        print(f"rss_before_mb: {before:.0f}")
        print(f"rss_peak_mb: {peak:.0f}")
        print(f"rss_after_close_mb: {after:.0f}")
        print(f"retained_after_close_mb: {after - before:.0f}")
    finally:
        process.terminate()
        process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--megabytes", type=float, default=3.0)
    anyio.run(measure, parser.parse_args())


if __name__ == "__main__":
    main()
