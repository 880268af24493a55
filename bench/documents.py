"""The largest document any single read sends, per public schema, built by the real QueryBuilder.

    python bench/documents.py

For each schema in the shared schemas directory (see bench/_figures.py), compiled as a host would
(the Relay `ID` arguments taking `Type#N` references, so a held object can be passed to `node`),
every read a model can make is built, and the largest in UTF-8 bytes is the figure
`max_read_document_bytes[SCHEMA]`:

- every field tool of every object type (root `Query_x` tools included, mutations excluded), called
  with every argument it takes, on an object of its type held by the handle the session would keep
  for it: the one-step re-rooting through the type's identity where it has one (`node(id:)`,
  `loadXFromID`, a root lookup such as `country(code:)`), else the shortest chain of fields from the
  query root that reaches the type (required arguments only, item 0 of each list, connections walked
  through `nodes` or `edges.node`);
- for every object type T with an identity: re-reading a held T through that identity (`Query_node`
  with `T#1`, and `Query_nodes` with `[T#1]` where the API has it), prepared by the session's own
  `FieldCalls.prepare` from the registry entry, as a model's call is.

A field's arguments change only the variables' names and types in the text, never the selection, so
their values are placeholders. A `nodes` call given objects of many types reads each type's fields,
and so grows with the types it names: it is left out, as is anything a host writes by hand.

Target: GitHub's largest read document (its SDL and its introspection JSON alike) is at most 4,000
bytes (DESIGN.md's budgets); the other schemas print their figure without one, and the read that
made each figure is named under it. The whole bench takes under 10 seconds of CPU, most of it
loading the schemas (GitHub's 4,200 reads build in about a second).
"""

from __future__ import annotations

import sys
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "bench") not in sys.path:
    sys.path.append(str(ROOT / "bench"))  # last: bench/mcp.py must not hide the MCP SDK from whoever imports this

from _figures import exit_status, figure, schema_path  # noqa: E402
from graphql import GraphQLObjectType, get_named_type, is_abstract_type, is_list_type, is_non_null_type, is_required_argument  # noqa: E402

from dagtools import Handle, Step, compile_catalogue, load_schema  # noqa: E402
from dagtools.calls._documents import QueryBuilder  # noqa: E402
from dagtools.catalogue._catalogue import Catalogue  # noqa: E402
from dagtools.executors._base import SchemaOnlyExecutor  # noqa: E402
from dagtools.session._session import Session  # noqa: E402

__all__ = ["SUFFIXES", "TARGETS", "largest_read_documents", "run_document_bench"]

#: What a schema file is, by its suffix: every such file in the shared directory is measured.
SUFFIXES = (".graphql", ".graphqls", ".json")
#: GitHub's schema comes as SDL and as introspection JSON; both are held to DESIGN.md's budget.
TARGETS = {"github.schema.graphql": "<= 4000", "github.schema.json": "<= 4000"}


def _unwrap_list(type_: Any) -> bool:
    while is_non_null_type(type_):
        type_ = type_.of_type
    return is_list_type(type_)


def reaching_handles(catalogue: Catalogue) -> dict[str, tuple[Step, ...]]:
    """Per object type, the steps of the handle a session keeps for one of its objects: its identity
    re-rooting, else the shortest chain from the query root (breadth first, in schema order)."""
    schema = catalogue.schema
    query = schema.query_type
    assert query is not None
    handles: dict[str, tuple[Step, ...]] = {query.name: ()}
    queue: deque[str] = deque([query.name])
    for type_ in schema.type_map.values():
        identity = catalogue.identity(type_.name) if isinstance(type_, GraphQLObjectType) else None
        if identity is not None and type_.name not in handles:
            handles[type_.name] = (Step.of(identity.root_field, {identity.argument: "x"}),)
            queue.append(type_.name)
    while queue:
        name = queue.popleft()
        parent = schema.get_type(name)
        assert isinstance(parent, GraphQLObjectType)
        for field_name, field in parent.fields.items():
            if field_name.startswith("__"):
                continue
            named = get_named_type(field.type)
            if not isinstance(named, GraphQLObjectType) and not is_abstract_type(named):
                continue
            required = {a: None for a, arg in field.args.items() if is_required_argument(arg)}
            on = None if name == query.name else name
            index = 0 if _unwrap_list(field.type) else None
            step = Step.of(field_name, required, on=on, index=index)
            targets = schema.get_possible_types(named) if is_abstract_type(named) else [named]
            for target in targets:
                if target.name not in handles:
                    handles[target.name] = (*handles[name], step)
                    queue.append(target.name)
    return handles


def largest_read_documents(catalogue: Catalogue, count: int = 1) -> list[tuple[int, str, str]]:
    """The `count` largest read documents as (bytes, what read it, text), largest first."""
    builder = QueryBuilder.of(catalogue)
    handles = reaching_handles(catalogue)
    sizes: dict[str, tuple[int, str]] = {}
    for name in catalogue.names():
        ref = catalogue.ref(name)
        if ref.type_name == catalogue.mutation_type or ref.type_name not in handles:
            continue
        field = catalogue.field(ref)
        on = None if ref.type_name == catalogue.query_type else ref.type_name
        step = Step.of(ref.field_name, {a: None for a in field.args}, on=on)
        text = builder.build((*handles[ref.type_name], step)).text
        sizes[name] = (len(text.encode()), text)
    session = Session(catalogue, SchemaOnlyExecutor())
    calls = session.fields.calls
    for type_name, steps in handles.items():
        identity = catalogue.identity(type_name)
        if identity is None or len(steps) != 1 or steps[0].field != identity.root_field:
            continue
        entry = session.registry.mint(type_name, Handle(steps), expression=f"{type_name}#1", identity="x")
        for root_field, value in ((identity.root_field, entry.id), (identity.root_field + "s", [entry.id])):
            tool_name = catalogue.name_of(catalogue.query_type or "", root_field)
            if tool_name is None:
                continue
            field = catalogue.field(catalogue.ref(tool_name))
            arguments = [a for a in field.args if catalogue.dialect.object_argument(field.args[a], a) is not None]
            if len(arguments) != 1:
                continue
            prepared = calls.prepare(catalogue.tool(tool_name), {arguments[0]: value})
            text = calls.document(prepared).text
            sizes[f"{tool_name}({entry.id})"] = (len(text.encode()), text)
    ranked = sorted(((size, name, text) for name, (size, text) in sizes.items()), reverse=True)
    return ranked[:count]


def run_document_bench() -> None:
    found = schema_path("github.schema.graphql")  # prints why when the directory is not here
    if found is None:
        for name, target in TARGETS.items():
            figure(f"max_read_document_bytes[{name}]", None, target)
        return
    for path in sorted(p for p in found.parent.iterdir() if p.suffix in SUFFIXES):
        label = f"max_read_document_bytes[{path.name}]"
        catalogue = compile_catalogue(load_schema(path).schema, relay_ids=True)
        ((size, read, _),) = largest_read_documents(catalogue)
        figure(label, size, TARGETS.get(path.name))
        print(f"#   the largest read: {read}", flush=True)


if __name__ == "__main__":
    run_document_bench()
    sys.exit(exit_status())
