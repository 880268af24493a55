"""Speed and size figures, as ratios measured in one run on this machine, each against its target.

    python bench/run.py            # core figures (catalogue, toolset, documents, calls, registry, cli) and the rest
                                   # (bench/lean.py: first tool lists, SWAPI tasks against a raw-query baseline)
    python bench/run.py --core     # core figures only

Prints `figure: value  # target ...: met` lines (see bench/_figures.py) and exits 1 when a target is
missed. Token figures are counted with OpenAI's o200k_base table (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import asyncio
import gc
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from inspect import isawaitable

from _figures import exit_status, figure, schema_path, tokens_o200k, unmeasured
from graphql import build_schema, execute, graphql, parse

from dagtools import Handle, Registry, Step, ToolCall, compile_catalogue, load_schema, open_session
from dagtools.calls._documents import QueryBuilder
from dagtools.catalogue._render import render_tool
from dagtools.executors._base import SchemaOnlyExecutor
from dagtools.session._session import Session


def best_of(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def catalogue_figures() -> None:
    path = schema_path("github.schema.graphql")
    if path is None:
        for name in ("catalogue_compile_ratio", "initial_toolset_tokens_o200k"):
            unmeasured(name, "GitHub's schema is not here")
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
    figure("catalogue_compile_ratio", compile_time / build, "<= 0.25")
    figure("catalogue_all_tool_schemas_ratio", full / build)
    catalogue = compile_catalogue(schema)
    figure("github_tools", len(catalogue))
    every = [json.dumps({"name": t.name, "description": t.description, "parameters": t.parameters}) for t in catalogue.tools()]
    figure("github_all_tools_bytes", sum(len(text.encode()) for text in every))
    counts = [tokens_o200k(text) for text in every]  # one by one: the tokenizer takes under 1 MB at a time
    figure("github_all_tools_tokens_o200k", None if None in counts else sum(c or 0 for c in counts))
    # What a model is sent before its first turn: the session's tools in OpenAI's format.
    initial = json.dumps(Session(catalogue, SchemaOnlyExecutor()).render_tools("openai"))
    figure("initial_toolset_bytes", len(initial.encode()))
    figure("initial_toolset_tokens_o200k", tokens_o200k(initial), "<= 400")


def tool_size_figures() -> None:
    """The biggest tool a model is likely to select: Linear's Query_issues with its filter input types."""
    path = schema_path("linear.schema.graphql")
    if path is None:
        unmeasured("linear_query_issues_tool_tokens_o200k", "Linear's schema is not here")
        return
    catalogue = compile_catalogue(load_schema(path).schema)
    text = json.dumps(render_tool(catalogue.tool("Query_issues"), "openai"))
    figure("linear_query_issues_tool_bytes", len(text.encode()))
    figure("linear_query_issues_tool_tokens_o200k", tokens_o200k(text), "<= 1000")


def document_figures() -> None:
    """`max_read_document_bytes[SCHEMA]`: the largest document any single read sends on each public
    schema (bench/documents.py says which reads, and how they are built), and
    `max_chain_document_bytes[SCHEMA]`: the largest a callChain sends, and `unprepared_chains[SCHEMA]`: the
    chains measured that the session refused (bench/chain_documents.py)."""
    from chain_documents import run_chain_document_bench
    from documents import run_document_bench

    run_document_bench()
    run_chain_document_bench()


async def call_figures() -> None:
    """A kitchen tool call in process against graphql-core running the same document, in the same run.

    The floor is `execute()` of the document the session sends, parsed once (and valid, as dagtools
    builds it): what a hand-written client with a cached document pays. `graphql()`, which parses and
    validates on every call, is printed beside it without a target. Times are this process's CPU
    time, so what other processes do on a shared machine counts on neither side.

    Both sides run the same resolvers through the same graphql-core executor class. The call is
    repeated with the same arguments, so dagtools' in-process executor finds the operation and the
    coerced variables of its first run again (executors/_local.py), where `execute()` finds the
    operation and coerces the variables on every call: that reuse is part of what is measured.
    """
    from examples.kitchen.api import schema

    session = await open_session(schema, inputs={"potato": {"field": "potato"}, "sink": {"field": "sink"}})
    session.select(["Potato_rinse", "Potato_variety"])
    gql = schema._schema
    for tool, arguments in (("Potato_rinse", {"Potato": "Potato#1", "sink": "Sink#1"}), ("Potato_variety", {"Potato": "Potato#1"})):
        call = ToolCall(name=tool, arguments=arguments)
        result = await session.execute(call)
        assert not result.is_error, result.content
        entry = session.object("Potato#1")
        field = "rinse" if tool == "Potato_rinse" else "variety"
        args = {"sink": session.object("Sink#1").identity} if field == "rinse" else {}
        document = QueryBuilder.of(session.catalogue).build(entry.handle.steps + (Step.of(field, args, on="Potato"),))
        parsed = parse(document.text)
        n = 300

        async def by_execute(count: int = n) -> None:
            for _ in range(count):
                answer = execute(gql, parsed, variable_values=document.variables)
                if isawaitable(answer):
                    answer = await answer
                assert not answer.errors

        async def by_tool(count: int = n) -> None:
            for _ in range(count):
                await session.execute(call)

        async def by_graphql(count: int = n // 10) -> None:
            for _ in range(count):
                answer = await graphql(gql, document.text, variable_values=document.variables)
                assert not answer.errors

        floor, tooled, whole = [], [], []
        for _ in range(9):  # interleaved, so a busy moment of the machine hits both sides alike
            for runner, times, count in ((by_execute, floor, n), (by_tool, tooled, n), (by_graphql, whole, n // 10)):
                gc.collect()
                start = time.process_time()
                await runner(count)
                times.append((time.process_time() - start) / count)
        label = "call_overhead" if tool == "Potato_rinse" else "scalar_call_overhead"
        figure(f"{label}_vs_execute_ratio", median(tooled) / median(floor), "<= 1.2")
        figure(f"{label}_vs_graphql_ratio", median(tooled) / median(whole))
        figure(f"{label}_microseconds_per_call", median(tooled) * 1e6)
        figure(f"{label}_execute_microseconds_per_call", median(floor) * 1e6)


def registry_figures() -> None:
    def mint(count: int) -> float:
        registry = Registry()
        handles = [Handle((Step.of("node", {"id": f"Issue{i}"}),)) for i in range(count)]
        start = time.process_time()
        for handle in handles:
            registry.mint("Issue", handle, expression="x")
        for i in range(1, count + 1):
            registry.find("Issue", i)
        return (time.process_time() - start) / count

    small = min(mint(1_000) for _ in range(5))
    large = min(mint(100_000) for _ in range(3))
    figure("registry_objects", 100_000)
    figure("registry_mint_and_lookup_microseconds", large * 1e6)
    # O(1) per mint and lookup: a cost that grew with the registry would read about 100 here; dicts
    # of 100,000 entries no longer fit the CPU's caches, which alone reads 1.5 to 2.5 on these machines.
    figure("registry_mint_growth", large / small, "<= 3")


def cli_figures() -> None:
    """`dagtools --help` from spawn to exit: what every shell command pays before it does anything."""
    script = Path(sys.executable).with_name("dagtools")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "dagtools.cli"]
    times, cpu = [], []
    for _ in range(5):
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([*command, "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
    figure("cli_help_seconds", min(times), "<= 0.3")
    figure("cli_help_cpu_seconds", min(cpu))  # the same start without the wait for a busy machine's cores


def main() -> int:
    catalogue_figures()
    tool_size_figures()
    document_figures()
    asyncio.run(call_figures())
    registry_figures()
    cli_figures()
    if "--core" in sys.argv:
        return exit_status()
    for module, function in (
        ("turns", "run_http_bench"),
        ("handles", "run_handles_bench"),
        ("mcp", "run_mcp_bench"),
        ("previews", "run_previews_bench"),
        ("search", "run_search_bench"),
        ("chains", "run_chains_bench"),
        ("lean", "run_lean_bench"),  # the first tool list per schema; the SWAPI tasks against a raw-query baseline
    ):
        path = ROOT / "bench" / f"{module}.py"
        if not path.exists():
            continue
        try:
            loaded = __import__(module)
            getattr(loaded, function)()
        except Exception as error:  # one failing extra bench must not hide the others' figures
            unmeasured(f"{module}_bench", f"it failed: {error}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
