"""Every tool one schema gives: one per field of every object type, named `Type_field`.

The catalogue is pure and immutable, shared by every session on the schema. Compiling it only names
the tools (cheap, and names must be decided over the whole schema so they never collide); each tool's
JSON Schema is built the first time someone asks for it. Types no session can ever hold an object of
(connections, edges, `PageInfo`, payloads of mutations that are off) give no tools: see `_reach`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, TypeVar

from graphql import (
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    get_named_type,
    is_composite_type,
)

from .._errors import CatalogueError
from .._tools import Tool
from ..load._dialect import Dialect, DialectName, Identity, detect_dialect
from ._fit import fit
from ._json_schema import PARAMETER_BUDGET, SchemaRenderer, is_required, reaches_itself
from ._preview_fields import choose_preview_fields
from ._reach import ConnectionShape, detect_connection, example_id, explain_unavailable, index_makers, reachable_types
from ._tool import compile_tool, describe_reference

__all__ = ["Catalogue", "FieldRef", "MutationPolicy", "compile_catalogue", "is_list"]

T = TypeVar("T")

MutationPolicy = bool | frozenset[str]
NAME_LIMIT = 64
_VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class FieldRef:
    type_name: str
    field_name: str


def tool_name(type_name: str, field_name: str) -> str:
    return f"{type_name}_{field_name}"


def shorten(name: str, key: str) -> str:
    """A stable short form: a prefix of the name and a hash of what it stands for."""
    digest = hashlib.sha1(key.encode()).hexdigest()[:8]
    return f"{name[: NAME_LIMIT - 9]}_{digest}"


class Catalogue:
    """The tools of one schema under one set of options. Build it with `compile_catalogue`."""

    def __init__(
        self, schema: GraphQLSchema, *, dialect: Dialect, mutations: MutationPolicy, include_deprecated: bool, previews: bool | None = None
    ) -> None:
        query, mutation = (schema.query_type, schema.mutation_type)
        roots = (query.name if query else None, mutation.name if mutation else None)
        self._setup(schema, dialect, dialect.name, mutations, include_deprecated, previews, *roots)
        self.reachable = frozenset(reachable_types(schema, self._exposed, self.connection))
        self._name_all()

    def _setup(
        self,
        schema: GraphQLSchema | Callable[[], GraphQLSchema],
        dialect: Dialect | Callable[[GraphQLSchema], Dialect],
        dialect_name: str,
        mutations: MutationPolicy,
        include_deprecated: bool,
        previews: bool | None,
        query_type: str | None,
        mutation_type: str | None,
    ) -> None:
        """What every catalogue holds, compiled now or restored from its compiled form (`_compiled`),
        where the schema and the dialect are built only when first asked for."""
        self._schema: GraphQLSchema | None = None if callable(schema) else schema
        self._build_schema: Callable[[], GraphQLSchema] | None = schema if callable(schema) else None
        self._dialect: Dialect | None = None if callable(dialect) else dialect
        self._build_dialect: Callable[[GraphQLSchema], Dialect] | None = dialect if callable(dialect) else None
        self.dialect_name = dialect_name
        self.mutations = mutations
        self.include_deprecated = include_deprecated
        # Dagger's scalar fields run pipelines, so nothing is read unasked there unless the host says so.
        self.previews = dialect_name != "dagger" if previews is None else previews
        self.query_type = query_type
        self.mutation_type = mutation_type
        # Root tools read the same in every API (`Query_field`, `Mutation_field`), whatever the
        # schema calls its root types (SWAPI's is `Root`).
        self._prefixes = {t: p for t, p in ((self.query_type, "Query"), (self.mutation_type, "Mutation")) if t}
        self._types_by_prefix = {p: t for t, p in self._prefixes.items()}
        self._refs: dict[str, FieldRef] = {}
        self._names: dict[FieldRef, str] = {}
        self._by_type: dict[str, list[str]] = {}
        self._tools: dict[str, Tool] = {}
        self._targets: dict[str, str] = {}
        self._recursive: dict[str, bool] = {}
        self._preview: dict[str, tuple[str, ...]] = {}
        self._identity: dict[str, Identity | None] = {}
        self._derived: dict[str, Any] = {}
        self._connections: dict[str, ConnectionShape | None] = {}
        self._makers: dict[str, list[str]] | None = None

    @property
    def schema(self) -> GraphQLSchema:
        """The graphql-core schema; a catalogue restored from its compiled form builds it on first use."""
        if self._schema is None:
            assert self._build_schema is not None
            self._schema = self._build_schema()
        return self._schema

    @property
    def dialect(self) -> Dialect:
        if self._dialect is None:
            assert self._build_dialect is not None
            self._dialect = self._build_dialect(self.schema)
        return self._dialect

    def derived(self, key: str, build: Callable[[], T]) -> T:
        """What a later layer computes from this catalogue once (connection shapes, document builders),
        kept with it so every session on the catalogue shares it. The catalogue itself never changes."""
        if key not in self._derived:
            self._derived[key] = build()
        value: T = self._derived[key]
        return value

    # -- naming ------------------------------------------------------------------------------------

    def _object_types(self) -> Iterator[GraphQLObjectType]:
        subscription = self.schema.subscription_type
        for type_ in self.schema.type_map.values():
            if not isinstance(type_, GraphQLObjectType) or type_.name.startswith("__"):
                continue
            if subscription is not None and type_ is subscription:
                continue
            if type_.name == self.mutation_type and not self.mutations:
                continue
            if type_.name not in self.reachable:  # nothing ever hands out such an object
                continue
            yield type_

    def _mutation_allowed(self, field_name: str) -> bool:
        if isinstance(self.mutations, frozenset):
            return field_name in self.mutations or tool_name("Mutation", field_name) in self.mutations
        return self.mutations

    def _exposed(self, type_: GraphQLObjectType, field_name: str, field: GraphQLField) -> bool:
        if field_name.startswith("__"):
            return False
        if field.deprecation_reason is not None and not self.include_deprecated:
            return False
        if type_.name == self.mutation_type and (isinstance(self.mutations, frozenset) or not self.mutations):
            return self._mutation_allowed(field_name)
        return not self.dialect.hides(type_.name, field_name)

    def _name_all(self) -> None:
        pairs = [
            FieldRef(type_.name, name)
            for type_ in self._object_types()
            for name, field in type_.fields.items()
            if self._exposed(type_, name, field)
        ]
        taken: set[str] = set()
        for ref in sorted(pairs, key=lambda r: (r.type_name, r.field_name)):
            name = tool_name(self.prefix(ref.type_name), ref.field_name)
            if len(name) > NAME_LIMIT or name in taken:
                name = shorten(name, f"{ref.type_name}.{ref.field_name}")
            taken.add(name)
            self._names[ref] = name
        for ref in pairs:  # schema order, which is the order a person reads the types in
            name = self._names[ref]
            self._refs[name] = ref
            self._by_type.setdefault(ref.type_name, []).append(name)

    # -- lookups -------------------------------------------------------------------------------------

    def __contains__(self, name: object) -> bool:
        return name in self._refs

    def __len__(self) -> int:
        return len(self._refs)

    def names(self) -> list[str]:
        return list(self._refs)

    def types(self) -> list[str]:
        return list(self._by_type)

    def ref(self, name: str) -> FieldRef:
        try:
            return self._refs[name]
        except KeyError:
            raise CatalogueError(f"No tool named {name!r} in this catalogue.") from None

    def name_of(self, type_name: str, field_name: str) -> str | None:
        return self._names.get(FieldRef(type_name, field_name))

    def prefix(self, type_name: str) -> str:
        """What a type's tools are named after: the type, or `Query` / `Mutation` for the roots."""
        return self._prefixes.get(type_name, type_name)

    def tools_for_type(self, type_name: str) -> list[str]:
        """The tools of a type, named by the type or by its tool prefix (`Query` for any query root)."""
        names = self._by_type.get(type_name)
        if names is None:
            names = self._by_type.get(self._types_by_prefix.get(type_name, ""), [])
        return list(names)

    def is_root(self, type_name: str) -> bool:
        return type_name in (self.query_type, self.mutation_type)

    def suggest(self, name: str, *, candidates: Iterable[str] | None = None, limit: int = 3) -> list[str]:
        """Close tool names for a misspelt one; the type prefix narrows the search where it matches."""
        pool = list(candidates) if candidates is not None else None
        if pool is None:
            prefix = name.split("_", 1)[0]
            same_type = [n for t, names in self._by_type.items() if self.prefix(t).lower() == prefix.lower() for n in names]
            pool = same_type or list(self._refs)
        lowered = {n.lower(): n for n in pool}
        found = get_close_matches(name.lower(), list(lowered), n=limit, cutoff=0.6)
        return [lowered[f] for f in found]

    def target(self, name: str) -> str:
        """The named type a tool's field returns (`Film` for `[Film!]!`), known without the schema when restored."""
        if name not in self._targets:
            self._targets[name] = get_named_type(self.field(self.ref(name)).type).name
        return self._targets[name]

    def field(self, ref: FieldRef) -> GraphQLField:
        type_ = self.schema.get_type(ref.type_name)
        assert isinstance(type_, GraphQLObjectType)
        return type_.fields[ref.field_name]

    def connection(self, type_name: str) -> ConnectionShape | None:
        """The connection shape of `type_name`, or None when it is not a connection."""
        if type_name not in self._connections:
            self._connections[type_name] = detect_connection(self.schema, type_name)
        return self._connections[type_name]

    def makers(self, type_name: str) -> list[str]:
        """Tools whose call hands out an object of `type_name`: root tools first, then the others.

        A connection's tool hands out its nodes; a query field giving a connection type never hands
        out the connection itself.
        """
        if self._makers is None:
            self._makers = index_makers(self)
        return list(self._makers.get(type_name, ()))

    def unavailable(self, name: str) -> str | None:
        """Why a name that is no tool here still names a field: a mutation the host has not allowed,
        or a field of a type no tool hands out. None for names that are no field at all."""
        return explain_unavailable(self, name)

    def example_id(self, target: str) -> str:
        """An object ID of this API for descriptions and messages: `Film#1`, never another API's type."""
        return example_id(self, target)

    def returning(self, type_name: str) -> list[str]:
        """Tools that hand out an object of `type_name` (see `makers`)."""
        return self.makers(type_name)

    def abstract_types_of(self, type_name: str) -> list[str]:
        type_ = self.schema.get_type(type_name)
        if not isinstance(type_, GraphQLObjectType):
            return []
        unions = [u.name for u in self.schema.type_map.values() if isinstance(u, GraphQLUnionType) and type_ in u.types]
        return [i.name for i in type_.interfaces] + unions

    def is_of_type(self, concrete: str, target: str) -> bool:
        """Whether an object of type `concrete` may stand where `target` is expected."""
        if target in ("*", concrete):
            return True
        abstract = self.schema.get_type(target)
        obj = self.schema.get_type(concrete)
        if abstract is None or not isinstance(obj, GraphQLObjectType) or not is_composite_type(abstract):
            return False
        return not isinstance(abstract, GraphQLObjectType) and self.schema.is_sub_type(abstract, obj)

    # -- per-type facts the session needs -------------------------------------------------------------

    def identity(self, type_name: str) -> Identity | None:
        if type_name not in self._identity:
            self._identity[type_name] = self.dialect.identity(type_name)
        return self._identity[type_name]

    def preview_fields(self, type_name: str) -> tuple[str, ...]:
        """Cheap scalar fields read whenever an object is minted, so the model needs no call for them."""
        if type_name not in self._preview:
            wanted = self.previews and not self.is_root(type_name)
            self._preview[type_name] = choose_preview_fields(self.schema, self.dialect, type_name) if wanted else ()
        return self._preview[type_name]

    # -- tools -------------------------------------------------------------------------------------

    def tool(self, name: str) -> Tool:
        """The compiled tool; raises CatalogueError for a name the catalogue does not have."""
        cached = self._tools.get(name)
        if cached is None:
            cached = self._tools[name] = compile_tool(self, name, self.ref(name))
        return cached

    def tools(self, names: Iterable[str] | None = None) -> list[Tool]:
        return [self.tool(n) for n in (self._refs if names is None else names)]

    def object_parameter(self, ref: FieldRef) -> str | None:
        if self.is_root(ref.type_name):
            return None
        args = self.field(ref).args
        name = ref.type_name
        while name in args:
            name += "_"
        return name

    def arguments(self, ref: FieldRef) -> dict:
        """The field's arguments that the model sees (deprecated optional ones hidden)."""
        return {
            name: arg
            for name, arg in self.field(ref).args.items()
            if self.include_deprecated or arg.deprecation_reason is None or is_required(arg)
        }

    def parameters(
        self, ref: FieldRef, *, first: tuple[str, dict, bool] | None = None, object_references: bool = True, path: str = ""
    ) -> dict:
        """The JSON Schema of a field's arguments, after an optional `first` (name, schema, required).

        With `object_references`, arguments that name objects take `Type#N`; without, the API's ids.
        """
        renderer = self.renderer(path, object_references=object_references)
        properties: dict = {}
        required: list[str] = []
        if first is not None:
            properties[first[0]] = first[1]
            if first[2]:
                required.append(first[0])
        for arg_name, arg in self.arguments(ref).items():
            properties[arg_name] = renderer.argument(arg, arg_name)
            if is_required(arg):
                required.append(arg_name)
        parameters: dict = {"type": "object", "properties": properties}
        if required:
            parameters["required"] = required
        parameters["additionalProperties"] = False
        defs = renderer.finish(len(json.dumps(parameters)))
        if defs:
            parameters["$defs"] = defs
        return fit(parameters, PARAMETER_BUDGET)

    def renderer(self, path: str = "", *, object_references: bool = True) -> SchemaRenderer:
        """The JSON Schema renderer for this catalogue's arguments, at `path` (`Query_issues.filter`)."""
        object_argument: Any = self.dialect.object_argument if object_references else (lambda *_: None)
        return SchemaRenderer(
            object_argument, self._is_recursive, describe=lambda argument, target: describe_reference(self, argument, target), path=path
        )

    def _is_recursive(self, input_type: GraphQLInputObjectType) -> bool:
        if input_type.name not in self._recursive:
            self._recursive[input_type.name] = reaches_itself(input_type)
        return self._recursive[input_type.name]


def is_list(type_: object) -> bool:
    """Whether a field gives a list (`[T]`, `[T]!`), whatever its items are."""
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return isinstance(type_, GraphQLList)


def compile_catalogue(
    schema: GraphQLSchema,
    *,
    dialect: DialectName | Dialect | None = None,
    mutations: bool | Iterable[str] = False,
    include_deprecated: bool = False,
    relay_ids: bool = False,
    previews: bool | None = None,
) -> Catalogue:
    """Name every tool of `schema`. Mutations are left out unless allowed (all, or a list of names)."""
    policy: MutationPolicy = mutations if isinstance(mutations, bool) else frozenset(mutations)
    resolved = dialect if isinstance(dialect, Dialect) else detect_dialect(schema, dialect, relay_ids=relay_ids)
    catalogue = Catalogue(schema, dialect=resolved, mutations=policy, include_deprecated=include_deprecated, previews=previews)
    bad = [n for n in catalogue.names() if not _VALID_NAME.match(n)]
    if bad:  # GraphQL names are always valid characters; this guards the shortening rule itself
        raise CatalogueError(f"Tool names not valid for every provider: {bad[:5]}")
    return catalogue
