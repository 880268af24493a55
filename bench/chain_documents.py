"""The largest document a callChain sends, per public schema, built by the session's own chain code.

    python bench/chain_documents.py

A chain reads up to `MAX_STEPS` fields in one request, each nested in the selection of the objects
the step before returns, so its document grows with its steps where a single field call's does not.
For each schema the longest chains are found by their selections' sizes (the selection a step reads
for the objects it returns, as the session's QueryBuilder writes it), over fields that take no
required argument (passing `first` where a step takes it, as a model pages), starting from a held
object of every type with an identity; the heaviest few of
each length are prepared by `prepare_chain` exactly as a model's callChain is (every step checked and
bound), and the figure is the largest prepared document in UTF-8 bytes:
`max_chain_document_bytes[SCHEMA]`, target <= 4,000 on GitHub (DESIGN.md: the budget holds for every
single request, chains too). The chain that made it is printed under it. Every chain measured is one a
model may send, so one the session refuses to prepare is a failure, not a chain left out:
`unprepared_chains[SCHEMA]`, target == 0 on every schema, each printed with the session's reason.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "bench") not in sys.path:
    sys.path.append(str(ROOT / "bench"))

from _figures import exit_status, figure, schema_path  # noqa: E402
from graphql import GraphQLInterfaceType, GraphQLObjectType, get_named_type, is_composite_type, is_required_argument  # noqa: E402

from dagtools import Handle, Step, compile_catalogue, load_schema  # noqa: E402
from dagtools.calls._chain_calls import MAX_STEPS, on_the_way, prepare_chain  # noqa: E402
from dagtools.catalogue._catalogue import Catalogue  # noqa: E402
from dagtools.executors._base import SchemaOnlyExecutor  # noqa: E402
from dagtools.session._session import Session  # noqa: E402

__all__ = ["CHAIN_TARGETS", "largest_chain_document", "run_chain_document_bench"]

CHAIN_TARGETS = {"github.schema.graphql": "<= 4000", "github.schema.json": "<= 4000"}
#: How many of the heaviest chains of each length are prepared and measured.
_MEASURED = 5


def _links(catalogue: Catalogue) -> dict[str, list[tuple[str, str | None, int, int]]]:
    """Per type, the chain steps that can be read on it: (tool, the type the next step reads on, or
    None for a value, and the bytes the step adds to the document as the last step and on the way)."""
    calls = Session(catalogue, SchemaOnlyExecutor()).fields.calls
    out: dict[str, list[tuple[str, str | None, int, int]]] = {}
    for name in catalogue.names():
        ref = catalogue.ref(name)
        if catalogue.is_root(ref.type_name) or not catalogue.tool(name).read_only:
            continue
        field = catalogue.field(ref)
        if any(is_required_argument(arg) for arg in field.args.values()):
            continue
        named = get_named_type(field.type)
        if not is_composite_type(named):
            out.setdefault(ref.type_name, []).append((name, None, len(ref.field_name) + 1, 0))
            continue
        connection = catalogue.connection(named.name)
        end = connection.node_type if connection is not None else named.name
        last = len(ref.field_name) + len(calls.queries.selection(named.name)) + 8
        way = len(ref.field_name) + len(on_the_way(calls, end)) + (56 if connection else 8)
        out.setdefault(ref.type_name, []).append((name, end, last, way))
    return out


def _heaviest(links: dict[str, list[tuple[str, str | None, int, int]]], start: str, length: int) -> list[list[str]]:
    """The heaviest chains of `length` steps from an object of type `start`, by their steps' bytes."""
    # best[k][type]: the heaviest k-step chain read on an object of `type` (weight, tools); its last
    # step reads the full selection, the others what a chain reads on the way
    best: list[dict[str, tuple[int, list[str]]]] = [{}]
    types = set(links)
    for k in range(1, length + 1):
        level: dict[str, tuple[int, list[str]]] = {}
        for type_name in types:
            for tool, end, last, way in links.get(type_name, ()):
                if k == 1:
                    candidate = (last, [tool])
                elif end is None or end not in best[k - 1]:
                    continue
                else:
                    rest = best[k - 1][end]
                    candidate = (way + rest[0], [tool, *rest[1]])
                if candidate[0] > level.get(type_name, (-1, []))[0]:
                    level[type_name] = candidate
        best.append(level)
    found = [(best[length][start][0], best[length][start][1])] if start in best[length] else []
    # the heaviest from every first step too, so one chain's failure to bind leaves others measured
    for tool, end, _, way in links.get(start, ()):
        if end is not None and length > 1 and end in best[length - 1]:
            rest = best[length - 1][end]
            found.append((way + rest[0], [tool, *rest[1]]))
    found.sort(key=lambda item: -item[0])
    return [tools for _, tools in found[:_MEASURED]]


def _paged(catalogue: Catalogue, tool: str) -> dict[str, Any]:
    """A page size where the step takes one, as a model asks for a few items of each list."""
    return {"first": 10} if "first" in catalogue.field(catalogue.ref(tool)).args else {}


def largest_chain_document(catalogue: Catalogue) -> tuple[int, str, list[str]]:
    """The largest chain document's bytes, the chain that sent it, and each chain the session could
    not prepare with its reason."""
    links = _links(catalogue)
    session = Session(catalogue, SchemaOnlyExecutor())
    calls = session.fields.calls
    starts: list[tuple[str, str]] = []
    for type_name in links:
        type_ = catalogue.schema.get_type(type_name)
        identity = catalogue.identity(type_name) if isinstance(type_, (GraphQLObjectType, GraphQLInterfaceType)) else None
        if identity is None or not isinstance(type_, GraphQLObjectType):
            continue
        entry = session.registry.mint(
            type_name, Handle((Step.of(identity.root_field, {identity.argument: "x"}),)), expression="x", identity="x"
        )
        starts.append((type_name, entry.id))
    largest = (0, "")
    unprepared: list[str] = []
    for length in range(1, MAX_STEPS + 1):
        for type_name, held in starts:
            for tools in _heaviest(links, type_name, length):
                steps: list[dict[str, Any]] = [{"tool": tool, "arguments": _paged(catalogue, tool)} for tool in tools]
                steps[0]["arguments"][catalogue.tool(tools[0]).object_parameter] = held
                try:
                    prepared = prepare_chain(calls, steps)
                except Exception as error:  # noqa: BLE001 - any refusal is a chain a model could not run
                    unprepared.append(f"{held}: {' -> '.join(tools)}: {type(error).__name__}: {error}")
                    continue
                size = len(prepared.text.encode())
                if size > largest[0]:
                    largest = (size, f"{held}: " + " -> ".join(tools))
    return (*largest, unprepared)


def run_chain_document_bench() -> None:
    found = schema_path("github.schema.graphql")
    if found is None:
        for name, target in CHAIN_TARGETS.items():
            figure(f"max_chain_document_bytes[{name}]", None, target)
            figure(f"unprepared_chains[{name}]", None, "== 0")
        return
    for path in sorted(p for p in found.parent.iterdir() if p.suffix in (".graphql", ".graphqls", ".json")):
        catalogue = compile_catalogue(load_schema(path).schema, relay_ids=True)
        size, chain, unprepared = largest_chain_document(catalogue)
        figure(f"max_chain_document_bytes[{path.name}]", size, CHAIN_TARGETS.get(path.name))
        print(f"#   the largest chain: {chain}", flush=True)
        figure(f"unprepared_chains[{path.name}]", len(unprepared), "== 0")
        for why in unprepared:
            print(f"#   not prepared: {why}", flush=True)


if __name__ == "__main__":
    run_chain_document_bench()
    sys.exit(exit_status())
