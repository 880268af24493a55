"""Which object types a session can ever hold, and the connection types it reads for the model.

A tool is only useful on a type something can hand out. Connections are walked for the model (it
gets the node IDs, the page scalars and the call for the next page), so connection, edge and
`PageInfo` objects are never minted; mutation payloads are never minted while mutations are off.
Their tools would only be dead ends: listed, selectable, and never callable. Reachability is read
from the schema alone: every field from the query root (and the allowed mutations) counts, hidden
and deprecated ones too, since a host's input chain may take them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphql import (
    GraphQLEnumType,
    GraphQLField,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    get_named_type,
    is_abstract_type,
    is_composite_type,
)

if TYPE_CHECKING:
    from ._catalogue import Catalogue

__all__ = [
    "ConnectionShape",
    "by_reach",
    "concrete_types",
    "detect_connection",
    "example_call",
    "example_id",
    "example_path",
    "explain_unavailable",
    "index_makers",
    "reachable_types",
]


@dataclass(frozen=True, slots=True)
class ConnectionShape:
    """Where a connection type keeps its nodes, its page information and its own values.

    `edge_fields` are the values an edge carries about its node (GitHub's `starredAt` on a
    stargazer edge): read with each node and shown beside it, since the edge is never minted.
    """

    type_name: str
    node_type: str
    via_edges: bool
    scalars: tuple[str, ...]
    edge_type: str | None = None
    edge_fields: tuple[str, ...] = ()
    values: tuple[str, ...] = ()  # selections of what else it says, as values: `facets { track count }`


def _is_list(type_: object) -> bool:
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return isinstance(type_, GraphQLList)


def _is_leaf(type_: Any) -> bool:
    return isinstance(get_named_type(type_), (GraphQLScalarType, GraphQLEnumType))


def _plain_values(type_: GraphQLObjectType, skip: Iterable[str] = ()) -> tuple[str, ...]:
    """Argument-free, non-list, non-deprecated scalar and enum fields."""
    return tuple(
        name
        for name, field in type_.fields.items()
        if name not in skip and not field.args and not _is_list(field.type) and field.deprecation_reason is None and _is_leaf(field.type)
    )


def detect_connection(schema: GraphQLSchema, type_name: str) -> ConnectionShape | None:
    """The connection shape of `type_name` (`pageInfo { hasNextPage endCursor }` and `nodes` or
    `edges { node }`), or None when it is not a connection."""
    type_ = schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType) or type_ in (schema.query_type, schema.mutation_type):
        return None
    page_info = type_.fields.get("pageInfo")
    page_type = get_named_type(page_info.type) if page_info is not None else None
    if not isinstance(page_type, GraphQLObjectType) or not {"hasNextPage", "endCursor"} <= set(page_type.fields):
        return None
    node_type: str | None = None
    via_edges = False
    edge_type: GraphQLObjectType | None = None
    nodes = type_.fields.get("nodes")
    edges = type_.fields.get("edges")
    named_edge = get_named_type(edges.type) if edges is not None and _is_list(edges.type) and not _is_leaf(edges.type) else None
    if isinstance(named_edge, GraphQLObjectType):
        edge_type = named_edge
    if nodes is not None and not nodes.args and _is_list(nodes.type) and not _is_leaf(nodes.type):
        node_type = get_named_type(nodes.type).name
    elif edge_type is not None:
        node = edge_type.fields.get("node")
        if node is not None and not _is_list(node.type) and not node.args and not _is_leaf(node.type):
            node_type, via_edges = get_named_type(node.type).name, True
    if node_type is None:
        return None
    edge_fields: tuple[str, ...] = ()
    if edge_type is not None:
        edge_node = edge_type.fields.get("node")
        if edge_node is not None and get_named_type(edge_node.type).name == node_type:
            edge_fields = _plain_values(edge_type, skip=("cursor", "node"))
            if edge_fields:
                via_edges = True  # the edge has something to say about its node: read through edges
    return ConnectionShape(
        type_name=type_name,
        node_type=node_type,
        via_edges=via_edges,
        scalars=_plain_values(type_),
        edge_type=edge_type.name if edge_type is not None else None,
        edge_fields=edge_fields,
        values=_value_objects(type_, skip=("edges", "nodes", "pageInfo")),
    )


#: Fields of a value object a connection's own values read (a facet's value, label and count).
_VALUE_FIELDS = 8


def _value_objects(type_: GraphQLObjectType, skip: Iterable[str]) -> tuple[str, ...]:
    """What a connection says besides its items and scalars, cheap to read with every page: argument-free
    fields giving a value object (or a list of them) with no id, whose own fields are scalars and
    enums (Shopify's `filters` facets, an aggregate's `{count sum}`), as selections."""
    out: list[str] = []
    for name, field in type_.fields.items():
        if name in skip or field.args or field.deprecation_reason is not None or _is_leaf(field.type):
            continue
        named = get_named_type(field.type)
        if not isinstance(named, GraphQLObjectType) or "id" in named.fields:
            continue
        leaves = [f for f, inner in named.fields.items() if not inner.args and _is_leaf(inner.type) and inner.deprecation_reason is None]
        objects = [f for f, inner in named.fields.items() if not _is_leaf(inner.type)]
        if leaves and not objects and len(leaves) <= _VALUE_FIELDS:
            out.append(f"{name} {{ {' '.join(leaves)} }}")
    return tuple(out)


def concrete_types(schema: GraphQLSchema, type_name: str) -> list[str]:
    """The object types a value of `type_name` can be: itself, or the members of an abstract type."""
    type_ = schema.get_type(type_name)
    if is_abstract_type(type_):
        return [t.name for t in schema.get_possible_types(type_)]
    return [type_name] if isinstance(type_, GraphQLObjectType) else []


def reachable_types(
    schema: GraphQLSchema,
    exposed: Callable[[GraphQLObjectType, str, GraphQLField], bool],
    connection: Callable[[str], ConnectionShape | None],
) -> set[str]:
    """Every object type a session can hold an object of, starting from the roots and walking only
    the fields that are tools (`exposed`): a deprecated mutation left out hands out no payload."""
    starts: list[GraphQLObjectType] = [t for t in (schema.query_type,) if t is not None]
    mutation = schema.mutation_type
    reached: set[str] = {t.name for t in starts}
    queue = list(starts)
    if mutation is not None and any(exposed(mutation, name, field) for name, field in mutation.fields.items()):
        reached.add(mutation.name)
        queue.append(mutation)
    while queue:
        type_ = queue.pop()
        for name, field in type_.fields.items():
            if not exposed(type_, name, field):
                continue
            named = get_named_type(field.type)
            if not is_composite_type(named):
                continue
            target = named.name
            if type_ is not mutation and not _is_list(field.type):
                shape = connection(target)
                if shape is not None:  # walked, never minted: the session holds its nodes
                    target = shape.node_type
            for concrete in concrete_types(schema, target):
                if concrete not in reached:
                    reached.add(concrete)
                    queue.append(schema.get_type(concrete))  # type: ignore[arg-type]
    return reached


def index_makers(catalogue: Catalogue) -> dict[str, list[str]]:
    """Per object type, the tools whose call hands one out, root tools first (callable right away).

    A query field giving a connection hands out its nodes, never the connection itself.
    """
    index: dict[str, list[str]] = {}
    for name in catalogue.names():
        ref = catalogue.ref(name)
        field = catalogue.field(ref)
        target = get_named_type(field.type).name
        if ref.type_name != catalogue.mutation_type and not _is_list(field.type):
            shape = catalogue.connection(target)
            target = shape.node_type if shape is not None else target
        for concrete in concrete_types(catalogue.schema, target):
            index.setdefault(concrete, []).append(name)
    for names in index.values():
        names.sort(key=lambda n: not catalogue.is_root(catalogue.ref(n).type_name))
    return index


def explain_unavailable(catalogue: Catalogue, name: str) -> str | None:
    """Why `name` is no tool though it names a field, or None when it names no field at all."""
    schema = catalogue.schema
    mutation = schema.mutation_type
    if mutation is not None and name.startswith("Mutation_") and name[len("Mutation_") :] in mutation.fields:
        return (
            f"{name} is a mutation the host has not allowed: this session does not allow mutations, "
            "and only the host can allow them. Use the query tools."
        )
    for index in (i for i, char in enumerate(name) if char == "_"):
        type_name, field_name = name[:index], name[index + 1 :]
        type_ = schema.get_type(type_name)
        if not isinstance(type_, GraphQLObjectType) or field_name not in type_.fields or type_name in catalogue.reachable:
            continue
        shapes = (catalogue.connection(t) for t in schema.type_map if not t.startswith("__"))
        walked = type_name == "PageInfo" or any(type_name in (s.type_name, s.edge_type) for s in shapes if s is not None)
        if walked:
            return f"{name} is not offered: connections are read for you (their nodes come back as IDs, with the call for the next page)."
        return f"{name} is not offered: no tool here hands out {type_name} objects."
    return None


def example_id(catalogue: Catalogue, target: str) -> str:
    """An object ID of this API (`Film#1`) for a parameter taking `target` ("*" for any object)."""
    if target == "*":
        held = [t for t in catalogue.types() if not catalogue.is_root(t)]
        types = [t for t in held if catalogue.identity(t) is not None] or held
    else:
        possible = concrete_types(catalogue.schema, target)
        types = [t for t in possible if t in catalogue.reachable] or possible
        # One the model can get straight away reads best: a type some root tool hands out.
        types.sort(key=lambda t: not any(_hands_out_exactly(catalogue, n, t) for n in catalogue.makers(t)))
    return f"{types[0] if types else (target if target != '*' else 'Object')}#1"


def _hands_out_exactly(catalogue: Catalogue, tool: str, type_name: str) -> bool:
    """Whether a root tool hands out `type_name` by name (`Query_repository`), not as any `Node`."""
    ref = catalogue.ref(tool)
    if not catalogue.is_root(ref.type_name):
        return False
    named = get_named_type(catalogue.field(ref).type).name
    shape = catalogue.connection(named)
    return (shape.node_type if shape is not None else named) == type_name


def example_call(catalogue: Catalogue) -> tuple[str, dict[str, str]]:
    """A call of this API for tool descriptions (`Repository_name`, `{"Repository": "Repository#1"}`):
    a tool of the type the root tools hand out most (the one with most tools among equals), needing no
    argument but its object; else a root tool."""
    return catalogue.derived("example call", lambda: _example_call(catalogue))


def _example_call(catalogue: Catalogue) -> tuple[str, dict[str, str]]:
    roots = [name for root in (catalogue.query_type, catalogue.mutation_type) if root for name in catalogue.tools_for_type(root)]
    handed: dict[str, int] = {}
    for name in roots:
        target = catalogue.target(name)
        shape = catalogue.connection(target)
        target = shape.node_type if shape is not None else target
        if not catalogue.is_root(target) and catalogue.tools_for_type(target):
            handed[target] = handed.get(target, 0) + 1
    for type_name in sorted(handed, key=lambda t: (-handed[t], -len(catalogue.tools_for_type(t)))):
        for name in catalogue.tools_for_type(type_name):
            tool = catalogue.tool(name)
            if not tool.parameters.get("required") and tool.object_parameter:
                return name, {tool.object_parameter: f"{type_name}#1"}
    bare = [n for n in roots if not catalogue.tool(n).parameters.get("required")]
    names = bare or roots or list(catalogue.names())
    return (names[0], {}) if names else ("Query_field", {})


def example_path(catalogue: Catalogue) -> str:
    """A dotted path into one of this API's tool parameters, for describeTools' description
    (`Query_issues.filter.state`): the first root tool with an input object argument, else a tool's argument."""
    return catalogue.derived("example path", lambda: _example_path(catalogue))


def _example_path(catalogue: Catalogue) -> str:
    fallback = ""
    for root in (catalogue.query_type, catalogue.mutation_type):
        for name in catalogue.tools_for_type(root) if root else ():
            for argument_name, argument in catalogue.arguments(catalogue.ref(name)).items():
                named = get_named_type(argument.type)
                fields = list(getattr(named, "fields", None) or ()) if not isinstance(named, GraphQLScalarType) else []
                if fields and not isinstance(named, GraphQLEnumType):
                    return f"{name}.{argument_name}.{fields[0]}"
                fallback = fallback or f"{name}.{argument_name}"
    return fallback or f"{example_call(catalogue)[0]}.argument"


def by_reach(catalogue: Catalogue, names: list[str]) -> list[str]:
    """Tools in the order a cut list keeps them: those handing out the objects with the most tools of
    their own first (a root's `issues` before its `_dummy`), in the schema's order among equals."""

    def reach(name: str) -> int:
        target = catalogue.target(name)
        shape = catalogue.connection(target)
        target = shape.node_type if shape is not None else target
        return len(catalogue.tools_for_type(target)) if not catalogue.is_root(target) else 0

    return sorted(names, key=lambda n: -reach(n))
