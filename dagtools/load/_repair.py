"""Repeated definitions dropped from an SDL document, so a schema invalid as published still builds.

GitHub's published SDL defines a field twice; graphql-core refuses it. The repair keeps the first of
every repeated type, directive, field, input field, enum value and argument, and says what it dropped.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from graphql import (
    DirectiveDefinitionNode,
    DocumentNode,
    EnumTypeDefinitionNode,
    EnumTypeExtensionNode,
    GraphQLError,
    InputObjectTypeDefinitionNode,
    InputObjectTypeExtensionNode,
    InterfaceTypeDefinitionNode,
    InterfaceTypeExtensionNode,
    ObjectTypeDefinitionNode,
    ObjectTypeExtensionNode,
    TypeDefinitionNode,
)

__all__ = ["SdlRepair"]


#: The members that must have unique names, by definition node type.
_MEMBERS: dict[type, str] = {
    ObjectTypeDefinitionNode: "fields",
    ObjectTypeExtensionNode: "fields",
    InterfaceTypeDefinitionNode: "fields",
    InterfaceTypeExtensionNode: "fields",
    InputObjectTypeDefinitionNode: "fields",
    InputObjectTypeExtensionNode: "fields",
    EnumTypeDefinitionNode: "values",
    EnumTypeExtensionNode: "values",
}


class SdlRepair:
    """Drops repeated definitions from an SDL document, keeping the first of each.

    Covers types, directives, fields of objects / interfaces / input objects (across extensions too),
    enum values, and arguments of fields and directives. Nodes are never mutated: changed ones are
    copied, and a document with nothing repeated comes back as is.
    """

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}  # coordinate -> times defined
        self.repeated: dict[str, None] = {}  # coordinates defined more than once, in order of the first repeat
        self.dropped: list[Any] = []  # the nodes left out
        self.members: dict[str, set[str]] = {}  # type name -> member names seen so far

    def document(self, document: DocumentNode) -> DocumentNode:
        definitions = []
        for definition in document.definitions:
            if isinstance(definition, TypeDefinitionNode):
                if not self._first(f"type {definition.name.value}", definition):
                    continue
            elif isinstance(definition, DirectiveDefinitionNode):
                name = f"@{definition.name.value}"
                if not self._first(name, definition):
                    continue
                definition = self._arguments(definition, name)
            attribute = _MEMBERS.get(type(definition))
            if attribute is not None:
                definition = self._members(definition, attribute)
            definitions.append(definition)
        return _replace(document, definitions=tuple(definitions)) if self.dropped else document

    def warnings(self) -> list[str]:
        """One warning per repeated name, in the order the repeats appear."""
        return [f"{coordinate} is defined {_times(self.counts[coordinate])}; kept the first definition" for coordinate in self.repeated]

    def remaining(self, errors: list[GraphQLError]) -> list[GraphQLError] | None:
        """The errors not located inside a dropped node, or None when locations are missing."""
        spans = [(node.loc.start, node.loc.end) for node in self.dropped if node.loc is not None]
        if len(spans) < len(self.dropped):
            return None
        left = []
        for error in errors:
            starts = [node.loc.start for node in error.nodes or () if node.loc is not None]
            if not starts:
                return None
            if not any(lo <= start < hi for start in starts for lo, hi in spans):
                left.append(error)
        return left

    def _first(self, coordinate: str, node: Any) -> bool:
        n = self.counts[coordinate] = self.counts.get(coordinate, 0) + 1
        if n > 1:
            self.dropped.append(node)
            self.repeated.setdefault(coordinate, None)
        return n == 1

    def _members(self, definition: Any, attribute: str) -> Any:
        type_name = definition.name.value
        seen = self.members.setdefault(type_name, set())
        members = getattr(definition, attribute) or ()
        kept = []
        for member in members:
            name = member.name.value
            coordinate = f"{type_name}.{name}"
            if name in seen:
                self._first(coordinate, member)  # counts it and records the drop
                continue
            seen.add(name)
            self._first(coordinate, member)
            if getattr(member, "arguments", None):
                member = self._arguments(member, coordinate)
            kept.append(member)
        changed = len(kept) != len(members) or any(a is not b for a, b in zip(kept, members))
        return _replace(definition, **{attribute: tuple(kept)}) if changed else definition

    def _arguments(self, node: Any, coordinate: str) -> Any:
        arguments = node.arguments or ()
        kept = [argument for argument in arguments if self._first(f"{coordinate}({argument.name.value}:)", argument)]
        return node if len(kept) == len(arguments) else _replace(node, arguments=tuple(kept))


def _times(n: int) -> str:
    return "twice" if n == 2 else f"{n} times"


def _replace(node: Any, **changes: Any) -> Any:
    """A copy of an AST node with some attributes changed (nodes are frozen in graphql-core 3.3)."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return dataclasses.replace(node, **changes)
    clone = copy.copy(node)
    for name, value in changes.items():
        setattr(clone, name, value)
    return clone
