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

With `--sources url` (or `file,url`, the default) each schema is also served over loopback as a
GraphQL API answering the introspection query, and `dagtools mcp http://127.0.0.1:PORT/graphql` is
started the same way (`mcp_start_ratio[schema@url,era]`). An introspection file is served as it is,
whatever it holds that a lenient load must tolerate (GitHub's and Shopify's do), as the live API
serves it; an SDL file is served through the schema it builds.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

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


@contextmanager
def served(path: Path) -> Iterator[str]:
    """The schema at `path` as a GraphQL API on loopback, answering the introspection query; its URL."""
    raw = json.loads(path.read_text(encoding="utf-8-sig")) if path.suffix == ".json" else None
    answers: dict[str, bytes] = {}
    lock = threading.Lock()
    built: list[Any] = []

    def answer(body: dict[str, Any]) -> bytes:
        if raw is not None:  # an introspection answer as the API gave it, warts and all
            return json.dumps(raw if "data" in raw else {"data": raw}).encode()
        query = str(body.get("query", ""))
        with lock:
            if query not in answers:
                from graphql import graphql_sync

                from dagtools.load._sources import load_schema

                if not built:
                    built.append(load_schema(str(path)).schema)
                result = graphql_sync(built[0], query, variable_values=body.get("variables") or {})
                answers[query] = json.dumps(result.formatted).encode()
            return answers[query]

    class Api(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            content = answer(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/graphql"
    finally:
        server.shutdown()
        server.server_close()


def measure(label: str, source: str, runs: int, floors: list[float]) -> list[dict]:
    """The figures of one source in both eras; the tools the last start listed."""
    tools: list[dict] = []
    for era in ERAS:
        with tempfile.TemporaryDirectory(prefix="dagtools-bench-") as cache:
            try:
                first, tools = start(era, cache, [*_dagtools(), "mcp", source])
                paired, times = [], []
                for _ in range(runs):
                    paired.append(floor_seconds(era, cache))
                    seconds, tools = start(era, cache, [*_dagtools(), "mcp", source])
                    times.append(seconds)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                unmeasured(f"mcp_start_ratio[{label},{era}]", str(error)[:300])
                continue
        floors += paired
        figure(f"mcp_first_start_s[{label},{era}]", first)
        figure(f"mcp_start_to_tools_list_s[{label},{era}]", min(times))
        figure(f"mcp_start_ratio[{label},{era}]", min(times) / min(paired), "<= 1.3")
    return tools


def run_mcp_bench(runs: int = 3, names: list[str] | None = None, sources: tuple[str, ...] = ("file", "url")) -> None:
    """Print the figures; a schema that is not here is reported as not measured."""
    floors: list[float] = []
    for name in names or all_schemas():
        label = _label(name)
        path = schema_path(name)
        if path is None:
            unmeasured(f"mcp_start_ratio[{label}]", f"{name} is not here")
            continue
        if "file" in sources:
            tools = measure(label, str(path), runs, floors)
            if name in LISTED and tools:
                listing(label, path, tools)
        if "url" in sources:
            with served(path) as url:
                measure(f"{label}@url", url, runs, floors)
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
    parser.add_argument("--sources", default="file,url", help="file, url or both (default both): a file, or served on loopback")
    options = parser.parse_args()
    chosen = None
    if options.schemas:
        available = all_schemas()
        chosen = [next((n for n in available if _label(n) == s.strip()), s.strip()) for s in options.schemas.split(",")]
    run_mcp_bench(options.runs, chosen, tuple(s.strip() for s in options.sources.split(",")))
    sys.exit(exit_status())
