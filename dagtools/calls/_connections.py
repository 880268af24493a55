"""Relay connections walked for the model, so it never handles edges, page objects or cursors by hand.

A field that returns a connection (a type with `pageInfo { hasNextPage endCursor }` and `nodes` or
`edges { node }`) is read in one document: the page's nodes, `pageInfo` and the connection's own
scalars (`totalCount`). The tool result is the list of node IDs, like any list of objects, plus
those scalars and, when more pages follow and the field takes `after`, a `more` note holding the
exact call for the next page:

    {"result": ["Issue#1", "Issue#2"], "totalCount": 5,
     "more": "For the next page call Repository_issues with {\"Repository\": \"Repository#1\", \"first\": 2, \"after\": \"Y3Vyc29yOjE=\"}"}

The connection, edge and page objects are never minted: they would only fill the registry and the
toolset with plumbing (the catalogue offers no tools on them). Nodes without identity are reached
again through `nodes[i]` (or `edges[i].node`) on the connection's chain. What an edge says about
its node (GitHub's `starredAt` on a stargazer edge) is read with the node and shown in its preview.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import GraphQLList, GraphQLNonNull, GraphQLObjectType, get_named_type, is_leaf_type

from ..catalogue._catalogue import Catalogue
from ..registry._handles import Step

__all__ = ["Connection", "connection_of", "listed_types", "page_items"]


@dataclass(frozen=True, slots=True)
class Connection:
    """Where a connection type keeps its nodes and its page information."""

    type_name: str
    node_type: str
    via_edges: bool
    scalars: tuple[str, ...]
    edge_fields: tuple[str, ...] = ()
    values: tuple[str, ...] = ()  # what else it says, as value selections (see catalogue/_reach.py)

    @property
    def items_field(self) -> str:
        return "edges" if self.via_edges else "nodes"

    def selection(self, node_selection: str) -> str:
        edge = " ".join((*self.edge_fields, f"node {{ {node_selection} }}"))
        items = f"edges {{ {edge} }}" if self.via_edges else f"nodes {{ {node_selection} }}"
        return " ".join(["__typename", "pageInfo { hasNextPage endCursor }", items, *self.scalars, *self.values])

    def paging_selection(self, node_selection: str) -> str:
        """The items and where the page ends, without what the connection and its edges say besides
        (`totalCount`, `starredAt`): what a chain reads of a connection on its way to the next step."""
        items = f"edges {{ node {{ {node_selection} }} }}" if self.via_edges else f"nodes {{ {node_selection} }}"
        return f"__typename pageInfo {{ hasNextPage endCursor }} {items}"

    def item_steps(self, index: int) -> tuple[Step, ...]:
        if self.via_edges:
            return (Step.of("edges", index=index), Step.of("node"))
        return (Step.of("nodes", index=index),)

    def items(self, value: dict) -> list:
        raw = value.get(self.items_field) or []
        return [(edge or {}).get("node") for edge in raw] if self.via_edges else list(raw)

    def edge_values(self, value: dict) -> list[dict[str, Any]]:
        """Per item, what its edge says about the node (empty where the edge carries nothing)."""
        if not self.edge_fields:
            return []
        return [{k: (edge or {}).get(k) for k in self.edge_fields} for edge in value.get("edges") or []]


def page_items(catalogue: Catalogue, type_name: str) -> str | None:
    """The field holding the items of a page type that is no Relay connection (`{items, total,
    hasMore}` from `orders(skip:, take:)`): an object type without identity whose one argument-free
    field of a list of objects is its point, the rest values. A call returning one reads its items
    with it, so the page shows them (calls/_field.py); None for any other type."""
    cache: dict[str, str | None] = catalogue.derived("page items", dict)
    if type_name not in cache:
        cache[type_name] = _page_items(catalogue, type_name)
    return cache[type_name]


def _page_items(catalogue: Catalogue, type_name: str) -> str | None:
    type_ = catalogue.schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType) or catalogue.is_root(type_name) or catalogue.identity(type_name) is not None:
        return None
    if catalogue.connection(type_name) is not None:
        return None
    if any(name == "id" or getattr(get_named_type(field.type), "name", "") == "ID" for name, field in type_.fields.items()):
        return None  # a record with an id of its own (a bike and its rides), though the API gives no lookup
    lists = []
    for name, field in type_.fields.items():
        named = get_named_type(field.type)
        if is_leaf_type(named):
            continue
        if field.args or not _is_list(field.type):
            return None  # an object of its own: a record that links to others, not a page
        lists.append(name)
    return lists[0] if len(lists) == 1 else None


def _is_list(type_: Any) -> bool:
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return isinstance(type_, GraphQLList)


def connection_of(catalogue: Catalogue, type_name: str) -> Connection | None:
    """The connection shape of `type_name`, or None when it is not a connection; cached per catalogue."""
    cache: dict[str, Connection | None] = catalogue.derived("connections_walked", dict)
    if type_name not in cache:
        shape = catalogue.connection(type_name)
        cache[type_name] = (
            None
            if shape is None
            else Connection(
                type_name=shape.type_name,
                node_type=shape.node_type,
                via_edges=shape.via_edges,
                scalars=shape.scalars,
                edge_fields=shape.edge_fields,
                values=shape.values,
            )
        )
    return cache[type_name]


def listed_types(catalogue: Catalogue) -> frozenset[str]:
    """The object types some tool gives many of: as a list, a connection's nodes or a page's items.
    A type outside it is reached one object a call (`employer(id:)` with no list of agencies)."""
    return catalogue.derived("listed types", lambda: _listed_types(catalogue))


def _listed_types(catalogue: Catalogue) -> frozenset[str]:
    from ..catalogue._reach import concrete_types

    schema = catalogue.schema
    out: set[str] = set()
    for name in catalogue.names():
        field = catalogue.field(catalogue.ref(name))
        named = get_named_type(field.type).name
        shape = catalogue.connection(named)
        items = page_items(catalogue, named)
        if _is_list(field.type):
            many = named
        elif shape is not None:
            many = shape.node_type
        elif items is not None:
            many = get_named_type(getattr(schema.get_type(named), "fields", {})[items].type).name
        else:
            continue
        out.update(concrete_types(schema, many))
    return frozenset(out)
