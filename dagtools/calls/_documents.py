"""GraphQL documents for handles: one document per chain, every argument a variable.

The text depends only on the chain's shape (fields, argument names, type conditions, what is read at
the end), so it is cached per shape and shared by every session on the catalogue; only the variables
change from call to call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import GraphQLObjectType, get_named_type, is_abstract_type, is_leaf_type

from ..catalogue._catalogue import Catalogue
from ._connections import connection_of
from ._handles import Step, thaw

__all__ = ["Document", "QueryBuilder", "navigate"]


@dataclass(frozen=True, slots=True)
class Document:
    """A document to send, its variables, and where the answer sits in `data`."""

    text: str
    variables: dict[str, Any]
    path: tuple[str | int, ...]
    operation: str = "query"


@dataclass(frozen=True, slots=True)
class _Shape:
    text: str
    path: tuple[str | int | None, ...]  # None marks "the index of this step", filled per call
    variable_names: tuple[str, ...]


class QueryBuilder:
    """Builds and caches documents for one catalogue."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self._shapes: dict[tuple, _Shape] = {}
        self._selections: dict[str, str] = {}

    @classmethod
    def of(cls, catalogue: Catalogue) -> QueryBuilder:
        builder: QueryBuilder = catalogue.derived("documents", lambda: cls(catalogue))
        return builder

    def build(self, steps: tuple[Step, ...], *, operation: str = "query", alias: str | None = None) -> Document:
        """The document that reads the end of `steps`: a leaf value, or an object's type, id and preview."""
        key = (operation, alias, *[(s.field, *[k for k, _ in s.arguments], s.on, s.index is not None) for s in steps])
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shapes[key] = self._shape(steps, operation, alias)
        values = [v for s in steps for _, v in s.arguments]
        variables = {name: thaw(value) for name, value in zip(shape.variable_names, values)}
        indexes = iter(s.index for s in steps if s.index is not None)
        path = tuple(next(indexes) if p is None else p for p in shape.path)
        return Document(shape.text, variables, path, operation)

    def _shape(self, steps: tuple[Step, ...], operation: str, alias: str | None) -> _Shape:
        schema = self.catalogue.schema
        current: Any = schema.mutation_type if operation == "mutation" else schema.query_type
        declarations: list[str] = []
        names: list[str] = []
        pieces: list[tuple[str | None, str]] = []  # (type condition, field with arguments) per step
        path: list[str | int | None] = []
        for position, step in enumerate(steps):
            condition = None
            if step.on is not None and step.on != current.name:
                condition = step.on
                current = schema.get_type(step.on)
            field = current.fields[step.field]
            rendered = []
            for arg_name, _ in step.arguments:
                variable = f"{alias}_v{len(names)}" if alias else f"v{len(names)}"
                names.append(variable)
                declarations.append(f"${variable}: {field.args[arg_name].type}")
                rendered.append(f"{arg_name}: ${variable}")
            args = f"({', '.join(rendered)})" if rendered else ""
            aliased = alias is not None and position == 0
            pieces.append((condition, f"{alias}: {step.field}{args}" if aliased else f"{step.field}{args}"))
            path.append(alias if aliased else step.field)
            if step.index is not None:
                path.append(None)
            current = get_named_type(field.type)
        if is_leaf_type(current):
            body = ""
        elif operation == "mutation":
            body = f" {{ {self.snapshot_selection(current.name)} }}"
        else:
            body = f" {{ {self.selection(current.name)} }}"
        for condition, field_text in reversed(pieces):
            body = field_text + body
            if condition is not None:
                body = f"... on {condition} {{ {body} }}"
            body = f" {{ {body} }}"
        header = f"{operation}({', '.join(declarations)})" if declarations else operation
        return _Shape(f"{header}{body}", tuple(path), tuple(names))

    def selection(self, type_name: str) -> str:
        """What minting reads: `__typename`, and per concrete type its identity and preview fields."""
        cached = self._selections.get(type_name)
        if cached is not None:
            return cached
        connection = connection_of(self.catalogue, type_name)
        if connection is not None:
            out = self._selections[type_name] = connection.selection(self.selection(connection.node_type))
            return out
        schema = self.catalogue.schema
        type_ = schema.get_type(type_name)
        parts = ["__typename"]
        if isinstance(type_, GraphQLObjectType):
            parts += self._fields_read(type_name)
        elif is_abstract_type(type_):
            for concrete in schema.get_possible_types(type_):  # type: ignore[arg-type]
                fields = self._fields_read(concrete.name)
                if fields:
                    parts.append(f"... on {concrete.name} {{ {' '.join(fields)} }}")
        out = self._selections[type_name] = " ".join(parts)
        return out

    def snapshot_selection(self, type_name: str) -> str:
        """What a mutation's result reads, since it never runs again: the minting selection, every
        argument-free scalar, and the identity of every argument-free object field (so a payload's
        `comment` or `issue` can still be reached)."""
        key = "mutation:" + type_name
        cached = self._selections.get(key)
        if cached is not None:
            return cached
        schema = self.catalogue.schema
        type_ = schema.get_type(type_name)
        concretes = list(schema.get_possible_types(type_)) if is_abstract_type(type_) else [type_]  # type: ignore[arg-type]
        parts = ["__typename"]
        for concrete in concretes:
            if not isinstance(concrete, GraphQLObjectType):
                continue
            fields = self._fields_read(concrete.name)
            if self.catalogue.identity(concrete.name) is not None:  # re-rooted, so read again at will
                parts.append(f"... on {concrete.name} {{ {' '.join(fields)} }}")
                continue
            for name, field in concrete.fields.items():
                if field.args or name in fields or field.deprecation_reason is not None:
                    continue
                named = get_named_type(field.type)
                if is_leaf_type(named):
                    fields.append(name)
                else:
                    linked = self._identity_selection(named.name)
                    if linked:
                        fields.append(f"{name} {{ {linked} }}")
            if fields:
                parts.append(f"... on {concrete.name} {{ {' '.join(fields)} }}")
        out = self._selections[key] = " ".join(parts)
        return out

    def _identity_selection(self, type_name: str) -> str:
        schema = self.catalogue.schema
        type_ = schema.get_type(type_name)
        concretes = list(schema.get_possible_types(type_)) if is_abstract_type(type_) else [type_]  # type: ignore[arg-type]
        parts = []
        for concrete in concretes:
            identity = self.catalogue.identity(concrete.name) if isinstance(concrete, GraphQLObjectType) else None
            if identity is not None:
                parts.append(f"... on {concrete.name} {{ {identity.field} }}")
        return " ".join(["__typename", *parts]) if parts else ""

    def _fields_read(self, type_name: str) -> list[str]:
        fields: list[str] = []
        identity = self.catalogue.identity(type_name)
        if identity is not None:
            fields.append(identity.field)
        fields += [f for f in self.catalogue.preview_fields(type_name) if f not in fields]
        if self.catalogue.dialect.forces(type_name):
            fields.append("sync")  # Dagger evaluates lazily: reading sync makes a failing pipeline fail now
        return fields


def navigate(data: Any, path: tuple[str | int, ...]) -> tuple[Any, int]:
    """Follow `path` into `data`; returns the value and how many steps were walked before a null."""
    value = data
    for depth, key in enumerate(path):
        if value is None:
            return None, depth
        if isinstance(key, int):
            if not isinstance(value, list) or key >= len(value):
                return None, depth
            value = value[key]
        else:
            value = value.get(key) if isinstance(value, dict) else None
    return value, len(path)
