"""Every document shape dagtools builds is valid by the spec, for every public schema and example API.

For each schema: a document for one field returning each union, each interface and each connection,
and for 200 tools drawn at random (seeded), each reached the way a handle reaches its object (through
its identity where it has one, else by a chain of fields from the root), alone and as one part of a
batch. Each must pass graphql-core's `validate` against the schema. Fields returning an abstract type
whose members disagree on a field's type (GitHub, Saleor, Shopify, swapi's `costInCredits`) are the
shapes that once failed.
"""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from graphql import (
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    get_named_type,
    is_abstract_type,
    is_non_null_type,
    is_required_argument,
)

from dagtools import compile_catalogue, load_schema
from dagtools.calls._batch import merge_documents
from dagtools.calls._connections import connection_of
from dagtools.calls._documents import QueryBuilder
from dagtools.calls._validation import document_errors
from dagtools.registry._handles import Step
from tests.conftest import load_shared, shared_schema_names

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (ROOT / "schemas").glob("*.graphql"))
SAMPLE = 200
BATCHED = 10  # of the sampled calls, also sent as one part of a batch
DEPTH = 6

Steps = tuple[Step, ...]


def _schema(source: str) -> GraphQLSchema:
    if source.startswith("example:"):
        return load_schema(ROOT / "schemas" / source.removeprefix("example:")).schema
    return load_shared(source).schema  # type: ignore[attr-defined]


def _arguments(field: Any, rng: random.Random) -> dict[str, Any]:
    """The required arguments and a few optional ones; their values never reach the text."""
    return {name: 1 for name, arg in field.args.items() if is_required_argument(arg) or rng.random() < 0.3}


class _Reach:
    """How a handle reaches an object of each type: its identity where it has one, else the shortest
    chain of fields from the root (breadth first), narrowed by a type condition where it passes an
    interface or a union."""

    def __init__(self, catalogue: Any, rng: random.Random) -> None:
        self.catalogue = catalogue
        schema = catalogue.schema
        self.chains: dict[str, Steps] = {schema.query_type.name: ()}
        queue: deque[tuple[Any, Steps]] = deque([(schema.query_type, ())])
        while queue:
            type_, chain = queue.popleft()
            if len(chain) >= DEPTH:
                continue
            for name, field in type_.fields.items():
                named = get_named_type(field.type)
                if not isinstance(named, (GraphQLObjectType, GraphQLInterfaceType, GraphQLUnionType)):
                    continue
                step = Step.of(name, _arguments(field, rng), on=type_.name, index=0 if _is_list(field.type) else None)
                reached = chain + (step,)
                members = schema.get_possible_types(named) if is_abstract_type(named) else [named]  # type: ignore[arg-type]
                for member in members:
                    if member.name not in self.chains:
                        self.chains[member.name] = reached
                        queue.append((member, reached))

    def to(self, type_name: str) -> Steps | None:
        identity = self.catalogue.identity(type_name)
        if identity is not None:
            return (Step.of(identity.root_field, {identity.argument: "x"}),)
        return self.chains.get(type_name)


def _is_list(type_: Any) -> bool:
    while is_non_null_type(type_):
        type_ = type_.of_type
    return hasattr(type_, "of_type")


def _documents(source: str) -> list[tuple[str, str]]:
    """(what it reads, document text) for every shape sampled from one schema."""
    schema = _schema(source)
    rng = random.Random(f"dagtools:{source}")
    catalogue = compile_catalogue(schema, mutations=True)
    builder = QueryBuilder(catalogue)
    reach = _Reach(catalogue, rng)
    refs = [catalogue.ref(name) for name in catalogue.names()]
    by_type: dict[str, list[Any]] = {}
    for ref in refs:
        field = catalogue.field(ref)
        by_type.setdefault(get_named_type(field.type).name, []).append(ref)
    chosen = []
    for type_ in schema.type_map.values():  # one field returning each union, interface and connection
        if is_abstract_type(type_) or connection_of(catalogue, type_.name) is not None:
            chosen += by_type.get(type_.name, [])[:1]
    chosen += rng.sample(refs, min(SAMPLE, len(refs)))
    out: dict[str, str] = {}  # document text -> what it reads (shapes repeat)
    batched = 0
    for ref in chosen:
        field = catalogue.field(ref)
        operation = "mutation" if ref.type_name == catalogue.mutation_type else "query"
        chain = () if catalogue.is_root(ref.type_name) else reach.to(ref.type_name)
        if chain is None:
            continue  # no handle can reach the type, so no call on it is ever built
        steps = chain + (Step.of(ref.field_name, _arguments(field, rng), on=ref.type_name),)
        read = f"{ref.type_name}.{ref.field_name}"
        out.setdefault(builder.build(steps, operation=operation).text, read)
        if operation == "query" and batched < BATCHED:  # the same call as one part of a batch
            batched += 1
            parts = [builder.build(steps, alias=f"c{j}") for j in range(2)]
            out.setdefault(merge_documents(parts)[0], f"{read} (batched)")
    return [(read, text) for text, read in out.items()]


SOURCES = shared_schema_names() + [f"example:{name}" for name in EXAMPLES]


@pytest.mark.parametrize("source", SOURCES)
def test_every_document_shape_validates_against_its_schema(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGTOOLS_DEBUG", "0")  # checked here, all of them, rather than raising at the first
    documents = _documents(source)
    schema = _schema(source)
    invalid = [(read, errors, text) for read, text in documents for errors in [document_errors(schema, text)] if errors]
    assert documents
    assert not invalid, f"{len(invalid)} of {len(documents)} invalid:\n\n" + "\n\n".join(
        f"{read}: {errors[:2]}\n{text[:600]}" for read, errors, text in invalid[:5]
    )
