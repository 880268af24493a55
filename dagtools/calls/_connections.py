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

from ..catalogue._catalogue import Catalogue
from ..registry._handles import Step

__all__ = ["Connection", "connection_of"]


@dataclass(frozen=True, slots=True)
class Connection:
    """Where a connection type keeps its nodes and its page information."""

    type_name: str
    node_type: str
    via_edges: bool
    scalars: tuple[str, ...]
    edge_fields: tuple[str, ...] = ()

    @property
    def items_field(self) -> str:
        return "edges" if self.via_edges else "nodes"

    def selection(self, node_selection: str) -> str:
        edge = " ".join((*self.edge_fields, f"node {{ {node_selection} }}"))
        items = f"edges {{ {edge} }}" if self.via_edges else f"nodes {{ {node_selection} }}"
        return " ".join(["__typename", "pageInfo { hasNextPage endCursor }", items, *self.scalars])

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
            )
        )
    return cache[type_name]
