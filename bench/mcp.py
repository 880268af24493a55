"""`dagtools mcp` as a client meets it: time from spawning the stdio server to its first tools/list
answer, with the official MCP client, against an official-SDK server that lists one tool (the floor),
spawned in the same run.

    python bench/mcp.py [--schemas github,swapi] [--runs 3]   # prints `figure: value` lines; exits 1 on a miss

For every schema in ../shared/schemas and both protocol eras the client speaks (`auto`, its default,
which is 2026-07-28 here; `legacy`, the initialize handshake), on a cache of its own: one filling
start (the compiled cache is empty; `mcp_first_start_s`), then starts each paired with a floor start
made just before it in the same era, so both meet the same load. `mcp_start_ratio[schema,era]` is
the best of those starts over the best floor start: what a client restarting the server pays, after
whichever era's client came first.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _figures import ROOT, _schemas_dir, exit_status, figure, schema_path, tokens_o200k, unmeasured

__all__ = ["run_mcp_bench"]

LISTED = ("github.schema.graphql", "linear.schema.graphql")  # whose listings' sizes are figures too
ERAS = ("auto", "legacy")
HERE = Path(__file__).resolve().parent
FLOOR = HERE / "_floor_server.py"
CLIENT = HERE / "_start_client.py"


def _dagtools() -> list[str]:
    script = Path(sys.executable).with_name("dagtools")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dagtools.cli"]


def start(era: str, cache: str, command: list[str]) -> tuple[float, list[dict]]:
    """Seconds from the official client spawning `command` to its tools/list answer, and the tools listed."""
    done = subprocess.run([sys.executable, "-P", str(CLIENT), era, cache, *command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{command[-1]} did not start: {done.stderr[-1000:]}")
    answer = json.loads(done.stdout)
    return answer["seconds"], answer["tools"]


def floor_seconds(era: str, cache: str) -> float:
    return start(era, cache, [sys.executable, "-P", str(FLOOR)])[0]


def _label(name: str) -> str:
    """`github` for github.schema.graphql, `dagger-v0.19.11` for dagger-v0.19.11.graphqls; JSON keeps its name."""
    return re.sub(r"(\.schema)?\.graphqls?$", "", name)


def all_schemas() -> list[str]:
    found = _schemas_dir()
    if found is None:
        return list(LISTED)
    return sorted(p.name for p in found.iterdir() if p.suffix in (".graphql", ".graphqls", ".json") and "introspection" not in p.name)


def run_mcp_bench(runs: int = 3, names: list[str] | None = None) -> None:
    """Print the figures; a schema that is not here is reported as not measured."""
    floors: list[float] = []
    for name in names or all_schemas():
        label = _label(name)
        path = schema_path(name)
        if path is None:
            unmeasured(f"mcp_start_ratio[{label}]", f"{name} is not here")
            continue
        for era in ERAS:
            with tempfile.TemporaryDirectory(prefix="dagtools-bench-") as cache:
                try:
                    first, tools = start(era, cache, [*_dagtools(), "mcp", str(path)])
                    paired, times = [], []
                    for _ in range(runs):
                        paired.append(floor_seconds(era, cache))
                        seconds, tools = start(era, cache, [*_dagtools(), "mcp", str(path)])
                        times.append(seconds)
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    unmeasured(f"mcp_start_ratio[{label},{era}]", str(error)[:300])
                    continue
            floors += paired
            figure(f"mcp_first_start_s[{label},{era}]", first)
            figure(f"mcp_start_to_tools_list_s[{label},{era}]", min(times))
            figure(f"mcp_start_ratio[{label},{era}]", min(times) / min(paired), "<= 1.3")
        if name in LISTED:
            listing(label, path, tools)
    if floors:
        figure("mcp_start_floor_s", min(floors))


def listing(label: str, path: Path, fixed: list[dict]) -> None:
    """Sizes of what a client lists at start, in both tool modes."""
    with tempfile.TemporaryDirectory(prefix="dagtools-bench-") as cache:
        dynamic = start("auto", cache, [*_dagtools(), "mcp", str(path), "--tools", "dynamic"])[1]
    for mode, tools in (("fixed", fixed), ("dynamic", dynamic)):
        listed = json.dumps(tools)
        figure(f"mcp_listed_tools[{label},{mode}]", len(tools))
        figure(f"mcp_listed_bytes[{label},{mode}]", len(listed.encode()))
        figure(f"mcp_listed_tokens_o200k[{label},{mode}]", tokens_o200k(listed))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", help="comma-separated schema names (github,swapi); default: every one in ../shared/schemas")
    parser.add_argument("--runs", type=int, default=3, help="paired starts per schema and era (default 3)")
    options = parser.parse_args()
    chosen = None
    if options.schemas:
        available = all_schemas()
        chosen = [next((n for n in available if _label(n) == s.strip()), s.strip()) for s in options.schemas.split(",")]
    run_mcp_bench(options.runs, chosen)
    sys.exit(exit_status())
