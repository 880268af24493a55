"""`dagtools mcp` as a client meets it: time from spawning the stdio server to its first tools/list
answer, and the size of that list in tokens (bytes / 4 of its JSON), per schema and toolset mode.

    python bench/mcp.py            # prints `figure: value` lines
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = Path(os.environ.get("DAGTOOLS_SCHEMAS", "/work/shared/schemas"))
NAMES = ("github.schema.graphql", "linear.schema.graphql")
MODES = ("fixed", "dynamic")

_OPENING = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def _dagtools() -> list[str]:
    script = Path(sys.executable).with_name("dagtools")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dagtools.cli"]


def first_tools_list(source: str, mode: str) -> tuple[float, list[dict]]:
    """Seconds from spawn to the tools/list answer, and the tools it listed."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [*_dagtools(), "mcp", source, "--tools", mode],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in _OPENING))
        process.stdin.flush()
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                elapsed = time.perf_counter() - start
                if "error" in message:
                    raise RuntimeError(f"tools/list failed: {message['error']}")
                return elapsed, message["result"]["tools"]
        raise RuntimeError("dagtools mcp exited before answering tools/list")
    finally:
        process.stdin.close()
        process.terminate()
        process.wait(timeout=10)


def run_mcp_bench(runs: int = 2) -> dict[str, float]:
    """Print and return `figure: value` lines; schemas that are not here are skipped with a message."""
    figures: dict[str, float] = {}
    for name in NAMES:
        path = SCHEMAS / name
        label = name.split(".")[0]
        if not path.exists():
            print(f"# skipped {label}: {path} is not here")
            continue
        for mode in MODES:
            times = []
            tools: list[dict] = []
            for _ in range(runs):
                seconds, tools = first_tools_list(str(path), mode)
                times.append(seconds)
            figures[f"mcp_start_to_tools_list_s[{label},{mode}]"] = round(min(times), 3)
            figures[f"mcp_listed_tools[{label},{mode}]"] = len(tools)
            figures[f"mcp_listed_tokens[{label},{mode}]"] = math.ceil(len(json.dumps(tools).encode()) / 4)
    for key, value in figures.items():
        print(f"{key}: {value}")
    return figures


if __name__ == "__main__":
    run_mcp_bench()
