"""An API's conventions: how its objects are reached again, and which arguments name objects.

Plain GraphQL has neither; Relay reaches `Node` types through `node(id:)`; Dagger reaches every
object through its `id` and `loadXFromID` (typed `XID` scalars) or `node(id:)` with `@expectedType`.
Detection reads the schema only, so it is pure and cheap; a host can force a dialect by name.

Relay's global ID field is whatever the `Node` interface declares (`id`, or `nodeId` where a database
generator keeps the primary key in `id`), and `node`'s argument is named after it. With `relay_ids`,
only arguments that take global IDs take `Type#N`: `id` on a field that returns a `Node` type (its
target is that type), `fooId` / `fooIds` naming a type (or any `Node`), never a `personID` beside an
`id` argument, which is the API's own key.

Whatever the dialect, an `ID` argument that names no type still takes a `Type#N` the session holds
(`takes_handle`): the model only ever sees such IDs, and one sent as text reaches the API as an id
that names nothing. Every other scalar (a SHA, a date, JSON) is the model's value, sent as given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from graphql import (
    GraphQLArgument,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    get_named_type,
    is_abstract_type,
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
        if self.name != "plain":
            load = query.fields.get(f"load{type_name}FromID") if "id" in type_.fields else None
            if load is not None and "id" in load.args:
                return Identity(field="id", root_field=f"load{type_name}FromID", argument="id")
            node = self.node_lookup
            if node is not None and node[1] in type_.fields and any(i.name == "Node" for i in type_.interfaces):
                return Identity(field=node[1], root_field="node", argument=node[0])
        return self._lookups().get(type_name)

    @cached_property
    def node_lookup(self) -> tuple[str, str] | None:
        """Relay's `node` root field as (its argument, the `Node` interface's global ID field), or None."""
        return _node_lookup(self.schema)

    def _lookups(self) -> dict[str, Identity]:
        return self._lookup_table

    @cached_property
    def _lookup_table(self) -> dict[str, Identity]:
        """Root lookup fields by type, read once: a dialect is built once per schema and never changes."""
        return _lookup_fields(self.schema)

    def object_argument(self, argument: GraphQLArgument | GraphQLField, name: str = "") -> str | None:
        """The type an argument (or input field) names an object of, `"*"` for any object, else None.

        Dagger: a scalar `XID` the schema declares as `X`'s ID (see `_id_scalars`), or
        `@expectedType(name: "X")`; never a scalar whose name merely holds a type's name.
        Relay, when the host opted in: an `ID` argument named `id`, `fooId` or `fooIds`.
        """
        named = get_named_type(argument.type)
        if not isinstance(named, GraphQLScalarType):
            return None
        expected = _expected_type(argument)
        if expected and is_composite_type(self.schema.get_type(expected)):
            return expected
        target = self._id_scalars.get(named.name) if self.name != "plain" else None
        if target is not None:
            return target
        if self.relay_ids and named.name == "ID" and expected is None:
            context = self._id_contexts.get(id(argument))
            if context is None:
                return self._global_id_target(name, None, (), "")
            memo = self._target_memo
            if id(argument) not in memo:
                memo[id(argument)] = self._global_id_target(name, *context)
            return memo[id(argument)]
        return None

    @cached_property
    def _id_scalars(self) -> dict[str, str]:
        """Scalars the schema itself declares as an object's ID, by the type they name.

        Dagger's convention: `XID` is what `X.id` returns, or what `loadXFromID(id:)` takes. A name is
        not enough: GitHub's `GitObjectID` (a SHA, the type of `GitObject.oid`) names the `GitObject`
        interface but is a hash, and hashes, SHAs and OIDs are values the model reads and sends as they are.
        """
        found: dict[str, str] = {}
        query = self.schema.query_type
        for type_ in self.schema.type_map.values():
            if type_.name.startswith("__") or not is_composite_type(type_):
                continue
            scalar = f"{type_.name}ID"
            named = self.schema.get_type(scalar)
            if not isinstance(named, GraphQLScalarType) or _is_hash(named):
                continue
            own = getattr(type_, "fields", {}).get("id")
            load = query.fields.get(f"load{type_.name}FromID") if query is not None else None
            if (own is not None and get_named_type(own.type).name == scalar) or (
                load is not None and any(get_named_type(a.type).name == scalar for a in load.args.values())
            ):
                found[scalar] = type_.name
        return found

    def takes_handle(self, argument: GraphQLArgument | GraphQLField | Any) -> bool:
        """Whether a `Type#N` given to this argument stands for a held object even where
        `object_argument` names no type: any `ID` argument (a raw id is still sent as given)."""
        return get_named_type(argument.type).name == "ID"

    def accepts_raw_id(self, argument: GraphQLArgument | GraphQLField | Any) -> bool:
        """Whether an object argument also takes the API's own global id as it is (Relay `ID`s do;
        Dagger's typed ids come only from objects the session holds)."""
        named = get_named_type(argument.type)
        return self.relay_ids and named.name == "ID" and _expected_type(argument) is None

    @cached_property
    def _id_contexts(self) -> dict[int, tuple[str | None, tuple[str, ...], str]]:
        """Per `ID` argument of every field and `ID` field of every input object (by identity): what
        its target is read from (the type the field returns, the names beside it, where it stands)."""
        out: dict[int, tuple[str | None, tuple[str, ...], str]] = {}
        for type_ in self.schema.type_map.values():
            if type_.name.startswith("__"):
                continue
            if isinstance(type_, GraphQLObjectType):
                for field_name, field in type_.fields.items():
                    returns = get_named_type(field.type).name
                    for name, arg in field.args.items():
                        if get_named_type(arg.type).name == "ID":
                            out[id(arg)] = (returns, tuple(field.args), field_name)
            elif isinstance(type_, GraphQLInputObjectType):
                for name, input_field in type_.fields.items():
                    if get_named_type(input_field.type).name == "ID":
                        out[id(input_field)] = (None, tuple(type_.fields), type_.name)
        return out

    def _global_id_target(self, name: str, returns: str | None, siblings: tuple[str, ...], container: str) -> str | None:
        """`id` on a field returning a `Node` type takes that type; `fooId` takes a `Foo` where the
        name says so without doubt, else any `Node`: a wrong guess would refuse a good ID, while
        the API itself still checks what it is given."""
        node = self.node_lookup
        global_names = {"id", "ids"} | ({node[0], node[0] + "s", node[1], node[1] + "s"} if node else set())
        fallback = "Node" if node is not None else "*"
        if name in global_names:
            return self._node_type(returns) or fallback
        stem = next((name[: -len(s)] for s in ("Ids", "IDs", "Id", "ID") if name.endswith(s) and len(name) > len(s)), None)
        lowered = stem.lower() if stem is not None else ""
        names_the_same = lowered in ((returns or "").lower(), container.lower())
        if stem is None or (names_the_same and any(s in global_names for s in siblings if s != name)):
            return None  # not an id, or the API's own key beside a global id (`person(id:, personID:)`)
        guess = self._types_by_lower.get(lowered)
        # `projectId` in AddProjectV2ItemInput may be a ProjectV2: a longer type named in the container
        # that holds the stem makes the guess doubtful.
        if guess is None or any(t in container.lower() for t in self._longer_names(lowered)):
            return fallback
        return self._node_type(guess) or fallback

    def _longer_names(self, stem: str) -> list[str]:
        """Lower-cased type names that hold `stem` and are longer, cached per stem."""
        cache = self._longer_cache
        if stem not in cache:
            cache[stem] = [t for t in self._types_by_lower if stem in t and t != stem]
        return cache[stem]

    @cached_property
    def _target_memo(self) -> dict[int, str | None]:
        """Targets worked out so far, per argument: a dialect never changes, so neither do they."""
        return {}

    @cached_property
    def _longer_cache(self) -> dict[str, list[str]]:
        return {}

    @cached_property
    def _types_by_lower(self) -> dict[str, str]:
        return {name.lower(): name for name in self.schema.type_map}

    def _node_type(self, type_name: str | None) -> str | None:
        """`type_name` when every object it can be is a `Node` (so it has a global ID), else None."""
        type_ = self.schema.get_type(type_name) if type_name else None
        if type_ is None or not is_composite_type(type_):
            return None
        if isinstance(type_, GraphQLInterfaceType) and type_.name == "Node":
            return type_.name
        possible = self.schema.get_possible_types(type_) if not isinstance(type_, GraphQLObjectType) else [type_]
        ok = possible and all(any(i.name == "Node" for i in t.interfaces) for t in possible)
        return type_.name if ok else None

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


_HASH_WORDS = {"oid", "sha", "sha1", "sha256", "sha512", "hash", "digest", "checksum"}
_HASH_TEXT = re.compile(r"\b(sha-?\d*|hash(es)?|digest|checksum|oid|git object)\b", re.IGNORECASE)


def _is_hash(scalar: GraphQLScalarType) -> bool:
    """`GitObjectID` ("A Git object ID."), `CommitSha`, `ContentHash`: a value computed from content,
    which the model reads and sends as it is, never a handle. Words of the name count, not letters
    (`PotatoID` holds "oid")."""
    words = {w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", scalar.name)}
    return bool(words & _HASH_WORDS) or _HASH_TEXT.search(scalar.description or "") is not None


def _lookup_fields(schema: GraphQLSchema) -> dict[str, Identity]:
    """Root fields that fetch one object by a key it carries: one argument, named like a scalar field,
    or named after the type and its `id` (`getStation(stationId:)` for `Station.id`, as gateways over
    REST name path parameters).

    A lookup that returns an interface or a union (`session(id:): Session`, `search(id:): Result`)
    fetches each of its members that carries the key, narrowed by a type condition as `node` is: for
    many APIs it is the only way back to those objects, and without it an object a write changes
    could not be read again. A lookup of the type itself comes first."""
    query = schema.query_type
    found: dict[str, Identity] = {}
    abstract: list[tuple[str, GraphQLField, Any]] = []
    for name, field in query.fields.items() if query is not None else ():
        target = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
        if len(field.args) != 1:
            continue
        if isinstance(target, GraphQLObjectType):
            _add_lookup(found, name, field, target, target.name)
        elif is_abstract_type(target):
            abstract.append((name, field, target))
    for name, field, target in abstract:
        for member in schema.get_possible_types(target):
            _add_lookup(found, name, field, member, target.name)
    return found


def _add_lookup(found: dict[str, Identity], name: str, field: GraphQLField, target: GraphQLObjectType, named: str) -> None:
    """Record `name` as the lookup of `target` where its one argument is a key `target` carries."""
    if target.name in found:
        return
    ((argument, arg),) = field.args.items()
    key = argument
    if key not in target.fields and key.replace("_", "").lower() in (target.name.lower() + "id", named.lower() + "id"):
        key = "id"
    own = target.fields.get(key)
    if own is None or own.args or not isinstance(get_named_type(own.type), GraphQLScalarType):
        return
    if get_named_type(own.type).name not in ("ID", "String", "Int") or get_named_type(arg.type) != get_named_type(own.type):
        return
    found[target.name] = Identity(field=key, root_field=name, argument=argument)


def _expected_type(argument: GraphQLArgument | GraphQLField) -> str | None:
    node = argument.ast_node
    for directive in getattr(node, "directives", None) or ():
        if directive.name.value == "expectedType":
            for arg in directive.arguments:
                if isinstance(arg, ArgumentNode) and arg.name.value == "name" and isinstance(arg.value, StringValueNode):
                    return arg.value.value
    return None


def _node_lookup(schema: GraphQLSchema) -> tuple[str, str] | None:
    query = schema.query_type
    interface = schema.get_type("Node")
    field = query.fields.get("node") if query is not None else None
    if field is None or not isinstance(interface, GraphQLInterfaceType) or len(field.args) != 1:
        return None
    ((argument, arg),) = field.args.items()
    id_fields = [n for n, f in interface.fields.items() if not f.args and get_named_type(f.type).name == "ID"]
    if get_named_type(arg.type).name != "ID" or not id_fields:
        return None
    return argument, (argument if argument in id_fields else "id" if "id" in id_fields else id_fields[0])


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
    if _node_lookup(schema) is not None:
        return Dialect(name="relay", schema=schema, relay_ids=relay_ids)
    return Dialect(name="plain", schema=schema, relay_ids=relay_ids)


def _has_expected_type(schema: GraphQLSchema) -> bool:
    return any(d.name == "expectedType" for d in schema.directives)
