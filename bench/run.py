"""Speed and size figures, as ratios measured in one run on this machine. Prints `figure: value` lines.

    python bench/run.py            # core figures (catalogue, toolset, calls, registry) and the rest
    python bench/run.py --core     # core figures only

Targets: catalogue_compile_ratio <= 0.25, initial_toolset_tokens <= 2000, call_overhead_ratio <= 1.2,
registry_mint_growth (per-mint cost at 100,000 objects over that at 1,000) close to 1.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
SHARED = ROOT.parent / "shared" / "schemas"

from inspect import isawaitable  # noqa: E402

from graphql import build_schema, execute, graphql, parse  # noqa: E402

from dagtools import Handle, Registry, Step, ToolCall, compile_catalogue, load_schema, open_session  # noqa: E402
from dagtools.calls._documents import QueryBuilder  # noqa: E402
from dagtools.executors._base import SchemaOnlyExecutor  # noqa: E402
from dagtools.session._metatools import estimate_tokens  # noqa: E402
from dagtools.session._session import Session  # noqa: E402


def figure(name: str, value: float | int | str) -> None:
    if isinstance(value, float):
        value = f"{value:.3f}"
    print(f"{name}: {value}", flush=True)


def best_of(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def catalogue_figures() -> None:
    path = SHARED / "github.schema.graphql"
    if not path.exists():
        print(f"# skipped catalogue figures: {path} is absent")
        return
    sdl = path.read_text()
    # GitHub's SDL defines one field twice, so a strict build refuses it; assume_valid_sdl is how
    # graphql-core itself builds it, and it is the baseline for every ratio here.
    build = best_of(3, lambda: build_schema(sdl, assume_valid_sdl=True))
    schema = load_schema(path).schema
    compile_time = best_of(5, lambda: compile_catalogue(schema))
    full = best_of(3, lambda: compile_catalogue(schema).tools())
    figure("graphql_build_schema_seconds", build)
    figure("catalogue_compile_seconds", compile_time)
    figure("catalogue_compile_ratio", compile_time / build)
    figure("catalogue_all_tool_schemas_ratio", full / build)
    catalogue = compile_catalogue(schema)
    figure("github_tools", len(catalogue))
    every = json.dumps([{"name": t.name, "description": t.description, "parameters": t.parameters} for t in catalogue.tools()])
    figure("github_all_tools_tokens", estimate_tokens(every))
    session = Session(catalogue, SchemaOnlyExecutor())
    initial = json.dumps(session.render_tools("openai"))
    figure("initial_toolset_bytes", len(initial.encode()))
    figure("initial_toolset_tokens", estimate_tokens(initial))


async def call_figures() -> None:
    from examples.kitchen.api import schema

    session = await open_session(schema, inputs={"potato": {"field": "potato"}, "sink": {"field": "sink"}})
    session.select(["Potato_rinse", "Potato_variety"])
    gql = schema._schema
    for tool, arguments in (("Potato_rinse", {"Potato": "Potato#1", "sink": "Sink#1"}), ("Potato_variety", {"Potato": "Potato#1"})):
        call = ToolCall(name=tool, arguments=arguments)
        result = await session.execute(call)
        assert not result.is_error, result.content
        # The document the session sends, handed to graphql() as a user would send it by hand.
        entry = session.object("Potato#1")
        field = "rinse" if tool == "Potato_rinse" else "variety"
        args = {"sink": session.object("Sink#1").identity} if field == "rinse" else {}
        document = QueryBuilder.of(session.catalogue).build(entry.handle.steps + (Step.of(field, args, on="Potato"),))
        n = 2000

        async def by_hand() -> None:
            for _ in range(n):
                answer = await graphql(gql, document.text, variable_values=document.variables)
                assert not answer.errors

        parsed = parse(document.text)

        async def by_execute() -> None:  # the floor: graphql-core running a parsed, validated document
            for _ in range(n):
                answer = execute(gql, parsed, variable_values=document.variables)
                if isawaitable(answer):
                    answer = await answer
                assert not answer.errors

        async def by_tool() -> None:
            for _ in range(n):
                await session.execute(call)

        hand, floor, tooled = [], [], []
        for _ in range(5):
            for runner, times in ((by_hand, hand), (by_execute, floor), (by_tool, tooled)):
                start = time.perf_counter()
                await runner()
                times.append(time.perf_counter() - start)
        label = "call_overhead_ratio" if tool == "Potato_rinse" else "scalar_call_overhead_ratio"
        figure(label, median(tooled) / median(hand))
        figure(label.replace("_ratio", "_vs_execute_ratio"), median(tooled) / median(floor))
        figure(f"{label.removesuffix('_ratio')}_microseconds_per_call", median(tooled) / n * 1e6)


def registry_figures() -> None:
    def mint(count: int) -> float:
        registry = Registry()
        handles = [Handle((Step.of("node", {"id": f"Issue{i}"}),)) for i in range(count)]
        start = time.perf_counter()
        for handle in handles:
            registry.mint("Issue", handle, expression="x")
        for i in range(1, count + 1):
            registry.find("Issue", i)
        return (time.perf_counter() - start) / count

    small = min(mint(1_000) for _ in range(5))
    large = min(mint(100_000) for _ in range(3))
    figure("registry_objects", 100_000)
    figure("registry_mint_and_lookup_microseconds", large * 1e6)
    figure("registry_mint_growth", large / small)


def main() -> None:
    catalogue_figures()
    asyncio.run(call_figures())
    registry_figures()
    if "--core" in sys.argv:
        return
    for module, function in (("turns", "run_http_bench"), ("mcp", "run_mcp_bench")):
        path = ROOT / "bench" / f"{module}.py"
        if not path.exists():
            continue
        try:
            loaded = __import__(module)
            getattr(loaded, function)()
        except Exception as error:  # one failing extra bench must not hide the others' figures
            print(f"# {module} bench failed: {error}")


if __name__ == "__main__":
    main()
