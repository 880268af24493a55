"""Times one start as a client meets it: the official MCP client spawns a stdio server and lists its tools.

    python -P bench/_start_client.py ERA CACHE_DIR COMMAND...   # prints {"seconds": ..., "tools": [...]} as JSON

ERA is `legacy` (the initialize handshake) or `auto` (the client's default: 2026-07-28 when the server
speaks it). The client is imported before the clock starts, so only the server's start is timed.
Run with -P: the bench directory holds mcp.py, which must not stand in for the SDK's package.
"""

from __future__ import annotations

import json
import os
import sys
import time

import anyio
from mcp import Client, StdioServerParameters


async def main(era: str, cache: str, command: list[str]) -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {"DAGTOOLS_CACHE_DIR": cache, "PYTHONPATH": root}
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=root, env=env)
    start = time.perf_counter()
    async with Client(params, mode=era) as client:  # type: ignore[arg-type]
        tools = (await client.list_tools()).tools
        seconds = time.perf_counter() - start
        version = client.protocol_version
    dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    print(json.dumps({"seconds": seconds, "tools": dumped, "version": version}))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3:])
