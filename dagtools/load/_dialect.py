"""An API's conventions: how its objects are reached again, and which arguments name objects.

Plain GraphQL has neither; Relay reaches `Node` types through `node(id:)`; Dagger reaches every
object through its `id` and `loadXFromID` (typed `XID` scalars) or `node(id:)` with `@expectedType`.
Detection reads the schema only, so it is pure and cheap; a host can force a dialect by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from graphql import (
    GraphQLArgument,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    get_named_type,
    is_composite_type,
    is_leaf_type,
    is_required_argument,
)
from graphql.language import ArgumentNode, StringValueNode

from .._errors import ConfigError

__all__ = ["Dialect", "DialectName", "Identity", "detect_dialect"]

DialectName = Literal["plain", "relay", "dagger"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Identity:
    """How one type is reached again from its id value: `root_field(argument: id)`. Where the root
    field returns an interface (`node`), the next step's type condition narrows it."""

    field: str
    root_field: str
    argument: str


@dataclass(frozen=True, kw_only=True)
class Dialect:
    """The conventions of one API, read from its schema."""

    name: DialectName
    schema: GraphQLSchema
    relay_ids: bool = False

    def identity(self, type_name: str) -> Identity | None:
        """How objects of `type_name` are re-rooted, or None when they can only be reached by chain.

        Dagger's `loadXFromID` and Relay's `node(id:)` first; in every dialect, a root lookup field
        that takes one key the type itself has (`post(id:)`, `country(code:)`, `user_by_pk(id:)`).
        """
        type_ = self.schema.get_type(type_name)
        query = self.schema.query_type
        if not isinstance(type_, GraphQLObjectType) or query is None:
            return None
        if self.name != "plain" and "id" in type_.fields:
            load = query.fields.get(f"load{type_name}FromID")
            if load is not None and "id" in load.args:
                return Identity(field="id", root_field=f"load{type_name}FromID", argument="id")
            node = query.fields.get("node")
            if node is not None and "id" in node.args and any(i.name == "Node" for i in type_.interfaces):
                return Identity(field="id", root_field="node", argument="id")
        return self._lookups().get(type_name)

    def _lookups(self) -> dict[str, Identity]:
        return self._lookup_table

    @cached_property
    def _lookup_table(self) -> dict[str, Identity]:
        """Root lookup fields by type, read once: a dialect is built once per schema and never changes."""
        return _lookup_fields(self.schema)

    def object_argument(self, argument: GraphQLArgument | GraphQLField, name: str = "") -> str | None:
        """The type an argument (or input field) names an object of, `"*"` for any object, else None.

        Dagger: a scalar `XID` whose `X` is a composite type, or `@expectedType(name: "X")`.
        Relay, when the host opted in: an `ID` argument named `id`, `fooId` or `fooIds`.
        """
        named = get_named_type(argument.type)
        if not isinstance(named, GraphQLScalarType):
            return None
        expected = _expected_type(argument)
        if expected and is_composite_type(self.schema.get_type(expected)):
            return expected
        if named.name.endswith("ID") and len(named.name) > 2:
            target = self.schema.get_type(named.name[:-2])
            if target is not None and is_composite_type(target) and self.name != "plain":
                return target.name
        if self.relay_ids and named.name == "ID" and _looks_like_id_name(name):
            return "*"
        return None

    def hides(self, type_name: str, field_name: str) -> bool:
        """Fields that only bloat a toolset: identity fields, loaders and `sync`, which the session
        uses itself (it re-roots on ids and reads `sync` when it mints)."""
        if self.name != "dagger":
            return False
        if field_name == "id":
            return self.identity(type_name) is not None
        if field_name == "sync":
            return self.forces(type_name)
        if type_name == (self.schema.query_type.name if self.schema.query_type else "Query"):
            if field_name == "node":
                return True
            return field_name.startswith("load") and field_name.endswith("FromID")
        return False

    def forces(self, type_name: str) -> bool:
        """Whether minting an object of this type reads its `sync`, so a lazy pipeline fails at the call
        that built it rather than at some later read (Dagger's `sync` takes no required argument)."""
        if self.name != "dagger":
            return False
        type_ = self.schema.get_type(type_name)
        sync = type_.fields.get("sync") if isinstance(type_, GraphQLObjectType) else None
        if sync is None or any(is_required_argument(a) for a in sync.args.values()):
            return False
        return is_leaf_type(get_named_type(sync.type))


def _lookup_fields(schema: GraphQLSchema) -> dict[str, Identity]:
    """Root fields that fetch one object by a key it carries: one argument, named like a scalar field."""
    query = schema.query_type
    found: dict[str, Identity] = {}
    for name, field in query.fields.items() if query is not None else ():
        target = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
        if not isinstance(target, GraphQLObjectType) or target.name in found or len(field.args) != 1:
            continue
        ((key, arg),) = field.args.items()
        own = target.fields.get(key)
        if own is None or own.args or not isinstance(get_named_type(own.type), GraphQLScalarType):
            continue
        if get_named_type(own.type).name not in ("ID", "String", "Int") or get_named_type(arg.type) != get_named_type(own.type):
            continue
        found[target.name] = Identity(field=key, root_field=name, argument=key)
    return found


def _expected_type(argument: GraphQLArgument | GraphQLField) -> str | None:
    node = argument.ast_node
    for directive in getattr(node, "directives", None) or ():
        if directive.name.value == "expectedType":
            for arg in directive.arguments:
                if isinstance(arg, ArgumentNode) and arg.name.value == "name" and isinstance(arg.value, StringValueNode):
                    return arg.value.value
    return None


def _looks_like_id_name(name: str) -> bool:
    return name == "id" or name.endswith("Id") or name.endswith("Ids") or name.endswith("ID")


def detect_dialect(schema: GraphQLSchema, name: DialectName | None = None, *, relay_ids: bool = False) -> Dialect:
    """Read the dialect off the schema, or check and apply the one the host forces."""
    if name is not None:
        if name not in ("plain", "relay", "dagger"):
            raise ConfigError(f"Unknown dialect {name!r}: choose plain, relay or dagger.")
        return Dialect(name=name, schema=schema, relay_ids=relay_ids)
    query = schema.query_type
    fields = query.fields if query is not None else {}
    loaders = [f for f in fields if f.startswith("load") and f.endswith("FromID")]
    if loaders or _has_expected_type(schema):
        return Dialect(name="dagger", schema=schema, relay_ids=relay_ids)
    node = schema.get_type("Node")
    if isinstance(node, GraphQLInterfaceType) and "node" in fields and "id" in node.fields:
        return Dialect(name="relay", schema=schema, relay_ids=relay_ids)
    return Dialect(name="plain", schema=schema, relay_ids=relay_ids)


def _has_expected_type(schema: GraphQLSchema) -> bool:
    return any(d.name == "expectedType" for d in schema.directives)
