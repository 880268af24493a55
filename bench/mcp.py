"""`dagtools mcp` as a client meets it: time from spawning the stdio server to its first tools/list
answer, against an official-SDK server that lists one tool (the floor), spawned in the same run.

    python bench/mcp.py            # prints `figure: value` lines; exits 1 when a target is missed

`mcp_start_ratio[schema]` is a later start over the floor's: the first start of a schema fills the
compiled cache on disk, and every start after it is what a client restarting the server pays. Each
such start is paired with a floor start made just before it, so both meet the same load.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _figures import ROOT, exit_status, figure, schema_path, tokens_o200k, unmeasured

__all__ = ["run_mcp_bench"]

NAMES = ("github.schema.graphql", "linear.schema.graphql")
MODES = ("fixed", "dynamic")
FLOOR = Path(__file__).resolve().with_name("_floor_server.py")

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


def first_tools_list(command: list[str]) -> tuple[float, list[dict]]:
    """Seconds from spawning `command` to its tools/list answer, and the tools it listed."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
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
        raise RuntimeError(f"{command[0]} exited before answering tools/list")
    finally:
        process.stdin.close()
        process.terminate()
        process.wait(timeout=10)


def floor_seconds() -> float:
    # -P: the bench directory holds mcp.py, which must not stand in for the SDK's package.
    return first_tools_list([sys.executable, "-P", str(FLOOR)])[0]


def run_mcp_bench(runs: int = 3) -> None:
    """Print the figures; a schema that is not here is reported as not measured.

    Each start of `dagtools mcp` in the default (fixed) mode is paired with a start of the floor just
    before it, so the ratio compares starts made under the same load (these machines are shared)."""
    floors: list[float] = []
    measured: list[tuple[str, float, str | None]] = []
    for name in NAMES:
        label = name.split(".")[0]
        path = schema_path(name)
        if path is None:
            measured.append((f"mcp_start_ratio[{label}]", float("nan"), f"{name} is not here"))
            continue
        for mode in MODES:
            times, paired = [], []
            tools: list[dict] = []
            for _ in range(runs):
                if mode == "fixed":
                    paired.append(floor_seconds())
                seconds, tools = first_tools_list([*_dagtools(), "mcp", str(path), "--tools", mode])
                times.append(seconds)
            floors += paired
            measured.append((f"mcp_start_to_tools_list_s[{label},{mode}]", min(times[1:]), None))
            if mode == "fixed":  # the default mode, started again: the ratio the design's budget is about
                measured.append((f"mcp_first_start_s[{label}]", times[0], None))
                measured.append((f"mcp_start_ratio[{label}]", min(times[1:]) / min(paired[1:]), "<= 1.3"))
            listed = json.dumps(tools)
            measured.append((f"mcp_listed_tools[{label},{mode}]", len(tools), None))
            measured.append((f"mcp_listed_bytes[{label},{mode}]", len(listed.encode()), None))
            measured.append((f"mcp_listed_tokens_o200k[{label},{mode}]", tokens_o200k(listed), None))
    figure("mcp_start_floor_s", min(floors) if floors else floor_seconds())
    for label, value, target in measured:
        if value != value:  # NaN: not measured, the reason is in `target`
            unmeasured(label, str(target))
        elif target is None:
            figure(label, value)
        else:
            figure(label, value, target)


if __name__ == "__main__":
    run_mcp_bench()
    sys.exit(exit_status())
