"""Relay connections walked for the model, so it never handles edges, page objects or cursors by hand.

A field that returns a connection (a type with `pageInfo { hasNextPage endCursor }` and `nodes` or
`edges { node }`) is read in one document: the page's nodes, `pageInfo` and the connection's own
scalars (`totalCount`). The tool result is the list of node IDs, like any list of objects, plus
those scalars and, when more pages follow and the field takes `after`, a `more` note holding the
exact call for the next page:

    {"result": ["Issue#1", "Issue#2"], "totalCount": 5,
     "more": "For the next page call Repository_issues with {\"Repository\": \"Repository#1\", \"first\": 2, \"after\": \"Y3Vyc29yOjE=\"}"}

The connection, edge and page objects are never minted: they would only fill the registry and the
toolset with plumbing. Nodes without identity are reached again through `nodes[i]` (or
`edges[i].node`) on the connection's chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphql import GraphQLEnumType, GraphQLObjectType, GraphQLScalarType, get_named_type

from ..catalogue._catalogue import Catalogue, is_list
from ._handles import Step

__all__ = ["Connection", "connection_of"]


@dataclass(frozen=True, slots=True)
class Connection:
    """Where a connection type keeps its nodes and its page information."""

    type_name: str
    node_type: str
    via_edges: bool
    scalars: tuple[str, ...]

    @property
    def items_field(self) -> str:
        return "edges" if self.via_edges else "nodes"

    def selection(self, node_selection: str) -> str:
        items = f"edges {{ node {{ {node_selection} }} }}" if self.via_edges else f"nodes {{ {node_selection} }}"
        return " ".join(["__typename", "pageInfo { hasNextPage endCursor }", items, *self.scalars])

    def item_steps(self, index: int) -> tuple[Step, ...]:
        if self.via_edges:
            return (Step.of("edges", index=index), Step.of("node"))
        return (Step.of("nodes", index=index),)

    def items(self, value: dict) -> list:
        raw = value.get(self.items_field) or []
        return [(edge or {}).get("node") for edge in raw] if self.via_edges else list(raw)


def connection_of(catalogue: Catalogue, type_name: str) -> Connection | None:
    """The connection shape of `type_name`, or None when it is not a connection; cached per catalogue."""
    cache: dict[str, Connection | None] = catalogue.derived("connections", dict)
    if type_name not in cache:
        cache[type_name] = _detect(catalogue, type_name)
    return cache[type_name]


def _detect(catalogue: Catalogue, type_name: str) -> Connection | None:
    type_ = catalogue.schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType) or catalogue.is_root(type_name):
        return None
    page_info = type_.fields.get("pageInfo")
    page_type = get_named_type(page_info.type) if page_info is not None else None
    if not isinstance(page_type, GraphQLObjectType) or not {"hasNextPage", "endCursor"} <= set(page_type.fields):
        return None
    node_type: str | None = None
    via_edges = False
    nodes = type_.fields.get("nodes")
    if nodes is not None and not nodes.args and _is_list_of_objects(nodes.type):
        node_type = get_named_type(nodes.type).name
    else:
        edges = type_.fields.get("edges")
        edge_type = get_named_type(edges.type) if edges is not None and _is_list_of_objects(edges.type) else None
        node = edge_type.fields.get("node") if isinstance(edge_type, GraphQLObjectType) else None
        if node is not None and not is_list(node.type) and not node.args:
            named = get_named_type(node.type)
            if not isinstance(named, (GraphQLScalarType, GraphQLEnumType)):
                node_type, via_edges = named.name, True
    if node_type is None:
        return None
    scalars = tuple(
        name
        for name, field in type_.fields.items()
        if not field.args
        and not is_list(field.type)
        and field.deprecation_reason is None
        and isinstance(get_named_type(field.type), (GraphQLScalarType, GraphQLEnumType))
    )
    return Connection(type_name=type_name, node_type=node_type, via_edges=via_edges, scalars=scalars)


def _is_list_of_objects(type_: object) -> bool:
    return is_list(type_) and not isinstance(get_named_type(type_), (GraphQLScalarType, GraphQLEnumType))  # type: ignore[arg-type]
