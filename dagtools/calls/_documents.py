"""GraphQL documents for handles: one document per chain, every argument a variable.

The text depends only on the chain's shape (fields, argument names, type conditions, what is read at
the end), so it is cached per shape and shared by every session on the catalogue; only the variables
change from call to call.

Reading an interface or a union writes one `... on Type` fragment per member. Where two members share
a field name with different types (`rating: Int` on one, `rating: Float` on another), the spec forbids
selecting both under one name, so the later ones get an alias (`rating_Album: rating`); the document's
path carries the aliases, and `read_back` (through `calls/_answers.py`'s `locate`) reads the answer
back under the field names, so nothing downstream sees them. With `DAGTOOLS_DEBUG=1` (always in the tests) each new shape is validated
against the schema once, and an invalid one raises naming the document.

Mutation payloads: a mutation runs once, so its document reads, in that one request, what its result
will be asked for. An object with identity is read as minting reads it and re-rooted afterwards; one
without (a payload such as `CreateIssuePayload`) is kept as a snapshot, so its document reads every
argument-free field: its scalars, the objects it links to with their previews (a closed `issue`
shows `state: CLOSED`), and objects without identity one level down with their scalars (the user
errors, `errors: [UserError!]!` or `userErrors`, that say why nothing was written). Recursion stops
there, and a linked interface of many types reads its identity alone, so the document stays short.

Documents stay small however many members an abstract type has (GitHub's `Node` has over 200):
- a read whose result's concrete types are known (`node(id:)` given a held `Issue#3`) selects those
  types' fragments only (`build(..., types=...)`);
- a field every member reads and an interface declares (Relay's `id`) is asked once, on the
  interface, not in one `... on X { id }` per member;
- past ABSTRACT_SELECTION_BYTES, the members' previews shrink together (every member keeps the same
  number of its first preview fields, names first) until the selection fits; identities are always
  read, so every object can still be minted and re-rooted, and its own tools read the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from graphql import GraphQLInterfaceType, GraphQLObjectType, get_named_type, is_abstract_type, is_leaf_type

from ..catalogue._catalogue import Catalogue
from ..catalogue._preview_fields import value_fields
from ..catalogue._reach import concrete_types
from ..registry._handles import Step, thaw
from ..registry._identity import key_field
from ._connections import connection_of
from ._selections import NESTED_ITEMS, heads
from ._validation import check_document, debugging

__all__ = ["ABSTRACT_SELECTION_BYTES", "AnswerPath", "Document", "QueryBuilder", "nested_first"]

#: The variable a nested page's size travels in (see `nested_first`).
NESTED_FIRST = "nestedFirst"
_ALIASED = re.compile(r"(\w+): \w")  # `alias: field` in a selection (variables read `name: $v0`)

#: Bytes of text the selection of one interface or union result may take: with the chain and the
#: variables around it, any one read stays within 4 KB (DESIGN.md's budget), where selecting every
#: member's preview of GitHub's `Node` took 28 KB.
ABSTRACT_SELECTION_BYTES = 3_000
#: Preview fields each member keeps, tried in turn until an abstract selection fits (None: all).
_PREVIEW_STEPS: tuple[int | None, ...] = (None, 3, 2, 1, 0)


class AnswerPath(tuple):
    """Where the answer sits in `data`, and the aliases (alias -> field name) to read it back through."""

    renames: Mapping[str, str] = {}

    def __new__(cls, steps: Iterable[str | int], renames: Mapping[str, str]) -> AnswerPath:
        path = super().__new__(cls, steps)
        path.renames = renames
        return path


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
    renames: Mapping[str, str]
    constants: tuple[tuple[str, Any], ...] = ()  # variables every call of the shape sends (a nested page's size)


class QueryBuilder:
    """Builds and caches documents for one catalogue."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self._shapes: dict[tuple, _Shape] = {}
        self._selections: dict[str, str] = {}
        self.renames: dict[str, str] = {}  # every alias a selection wrote, to the field it reads

    @classmethod
    def of(cls, catalogue: Catalogue) -> QueryBuilder:
        builder: QueryBuilder = catalogue.derived("documents", lambda: cls(catalogue))
        return builder

    def build(
        self,
        steps: tuple[Step, ...],
        *,
        operation: str = "query",
        alias: str | None = None,
        keys: tuple[str, ...] = (),
        types: tuple[str, ...] = (),
        extra: tuple[str, ...] = (),
    ) -> Document:
        """The document that reads the end of `steps`: a leaf value, or an object's type, id and preview.

        `keys` are read beside the last step, on the object it is read on: what tells that object
        apart, so the caller can check the chain still ends at the same one (registry/_identity.py).
        `types` are the concrete types the end is known to be (`node(id:)` given a held `Issue#3`):
        an interface or union result then selects only their fragments. `extra` are the paths the
        model asked to read of each object at the end (calls/_selections.py), checked already."""
        key = (operation, alias, keys, types, extra, *[(s.field, *[k for k, _ in s.arguments], s.on, s.index is not None) for s in steps])
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shape(steps, operation, alias, keys, types, extra)
            if debugging():
                check_document(self.catalogue.schema, shape.text)
            self._shapes[key] = shape
        values = [v for s in steps for _, v in s.arguments]
        variables = {name: thaw(value) for name, value in zip(shape.variable_names, values)}
        variables.update(shape.constants)
        indexes = iter(s.index for s in steps if s.index is not None)
        path: tuple[str | int, ...] = tuple(next(indexes) if p is None else p for p in shape.path)
        if shape.renames:
            path = AnswerPath(path, shape.renames)
        return Document(shape.text, variables, path, operation)

    def _shape(
        self,
        steps: tuple[Step, ...],
        operation: str,
        alias: str | None,
        keys: tuple[str, ...] = (),
        types: tuple[str, ...] = (),
        extra: tuple[str, ...] = (),
    ) -> _Shape:
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
            body = f" {{ {self.selection(current.name, types, extra)} }}"
        for position, (condition, field_text) in enumerate(reversed(pieces)):
            body = field_text + body
            if position == 0 and keys and len(pieces) > 1:
                body = " ".join(keys) + " " + body
            if condition is not None:
                body = f"... on {condition} {{ {body} }}"
            body = f" {{ {body} }}"
        body, constants = nested_first(body, alias, declarations)
        header = f"{operation}({', '.join(declarations)})" if declarations else operation
        text = f"{header}{body}"
        renames = {a: self.renames[a] for a in set(_ALIASED.findall(text)) & self.renames.keys()}
        return _Shape(text, tuple(path), tuple(names), renames, constants)

    def selection(self, type_name: str, types: tuple[str, ...] = (), extra: tuple[str, ...] = (), *, values: bool = True) -> str:
        """What minting reads: `__typename`, and per concrete type its identity and preview fields
        (of `types` only, when the concrete types are known), and the `extra` paths the model asked for."""
        key = f"{type_name} as {' '.join(types)}" if types else type_name
        if extra:
            key += " with " + " ".join(extra)
        if not values:
            key += " without values"
        cached = self._selections.get(key)
        if cached is not None:
            return cached
        connection = connection_of(self.catalogue, type_name)
        if connection is not None:
            out = self._selections[key] = connection.selection(self.selection(connection.node_type, extra=extra))
            return out
        if extra:
            out = self._selections[key] = " ".join([self.selection(type_name, types), *self._extra(type_name, extra)])
            return out
        schema = self.catalogue.schema
        type_ = schema.get_type(type_name)
        if isinstance(type_, GraphQLObjectType):
            read = [(f, self._sub(type_name, f)) for f in self._fields_read(type_name)]
            out = " ".join(["__typename", *(f + sub for f, sub in read if values or not sub)])
        elif is_abstract_type(type_):
            members = [m for m in schema.get_possible_types(type_) if not types or m.name in types]
            out = self._abstract_selection(type_, members or list(schema.get_possible_types(type_)))
        else:
            out = "__typename"
        self._selections[key] = out
        return out

    def extra_selection(self, type_name: str, paths: tuple[str, ...]) -> list[str]:
        """The fragments that read `paths` of each object of `type_name` (a connection's nodes) beside
        what else is read of it: a chain's objects on the way (calls/_chain_calls.py)."""
        connection = connection_of(self.catalogue, type_name)
        return self._extra(connection.node_type if connection is not None else type_name, paths) if paths else []

    def _extra(self, type_name: str, paths: tuple[str, ...]) -> list[str]:
        """The fragments that read `paths` (checked by calls/_selections.py) on each concrete type of
        `type_name` that has their first field: a value as it is, an object as minting reads it (its
        identity, and its preview where the path ends there, else the rest of the path)."""
        members: list[tuple[str, list[tuple[str, str]]]] = []
        for name in concrete_types(self.catalogue.schema, type_name):
            concrete = self.catalogue.schema.get_type(name)
            assert isinstance(concrete, GraphQLObjectType)
            fields: list[tuple[str, str]] = []
            for head, rest in heads(paths).items():
                field = concrete.fields.get(head)
                if field is None:
                    continue
                named = get_named_type(field.type)
                if is_leaf_type(named):
                    fields.append((head, ""))
                    continue
                connection = connection_of(self.catalogue, named.name)
                end = connection.node_type if connection is not None else named.name
                inner = self.selection(end) if not rest else self._identity_selection(end) or "__typename"
                if rest:
                    inner = " ".join([inner, *self._extra(end, rest)])
                if connection is None:
                    fields.append((head, f" {{ {inner} }}"))
                    continue
                # a connection on the way: its first page (a bounded one where it takes `first`), no more
                paged = f"(first: ${NESTED_FIRST})" if "first" in field.args else ""
                fields.append((head, f"{paged} {{ {connection.paging_selection(inner)} }}"))
            members.append((concrete.name, fields))
        return self._fragments(members)

    def _abstract_selection(self, abstract: Any, members: list[GraphQLObjectType]) -> str:
        """`__typename`, the fields every member reads asked once where an interface declares them,
        and one fragment per member for the rest; past ABSTRACT_SELECTION_BYTES the members' own
        preview fields shrink together (see the module's docstring)."""
        full: list[tuple[GraphQLObjectType, list[str]]] = []
        kept: dict[str, set[str]] = {}  # per member: what it reads whatever the room (identity, sync)
        for member in members:
            identity = self.catalogue.identity(member.name)
            fields = [identity.field] if identity is not None else []
            fields += [f for f in self.catalogue.preview_fields(member.name) if f not in fields]
            if self.catalogue.dialect.forces(member.name):
                fields.append("sync")  # Dagger evaluates lazily: reading sync makes a failing pipeline fail now
            full.append((member, fields))
            kept[member.name] = {identity.field} if identity is not None else set()
            kept[member.name] |= {"sync"} & set(fields)
        shared = self._shared(abstract, full)
        out = ""
        for keep in _PREVIEW_STEPS:
            reads = []
            for member, fields in full:
                own = [f for f in fields if f not in shared and f not in kept[member.name]]
                allowed = set(own if keep is None else own[:keep]) | kept[member.name] | shared.keys()
                reads.append((member, [f for f in fields if f in allowed]))
            out = self._write(abstract, reads, shared)
            if len(out.encode()) <= ABSTRACT_SELECTION_BYTES:
                break
        return out

    def _shared(self, abstract: Any, reads: list[tuple[GraphQLObjectType, list[str]]]) -> dict[str, str | None]:
        """Fields every member that reads anything reads, and that can be asked once for all of them:
        on the abstract type itself where it is an interface that declares the field (None), else, for
        two or more members, in a spread on an interface they all implement (its name)."""
        reading = [(m, fields) for m, fields in reads if fields]
        shared: dict[str, str | None] = {}
        if not reading:
            return shared
        common = [i for i in reading[0][0].interfaces if all(i in m.interfaces for m, _ in reading[1:])] if len(reading) > 1 else []
        for name in reading[0][1]:
            if not all(name in fields for _, fields in reading[1:]):
                continue
            if isinstance(abstract, GraphQLInterfaceType) and name in abstract.fields:
                shared[name] = None
            else:
                holder = next((i for i in common if name in i.fields), None)
                if holder is not None:
                    shared[name] = holder.name
        return shared

    def _write(self, abstract: Any, reads: list[tuple[GraphQLObjectType, list[str]]], shared: dict[str, str | None]) -> str:
        """The selection of `abstract` reading `reads` (member, its fields): the `shared` fields once
        (see `_shared`), then each member's fragment with the rest."""
        first: dict[str, tuple[str, str]] = {}
        parts = ["__typename"]
        spreads: dict[str, list[str]] = {}
        for name, holder in shared.items():
            declared = abstract if holder is None else self.catalogue.schema.get_type(holder)
            sub = self._sub(reads[0][0].name, name) if reads else ""
            first[name] = (str(declared.fields[name].type), sub)  # type: ignore[union-attr]
            if holder is None:
                parts.append(name + sub)
            else:
                spreads.setdefault(holder, []).append(name + sub)
        parts += [f"... on {holder} {{ {' '.join(names)} }}" for holder, names in spreads.items()]
        rest = [(m.name, [(f, self._sub(m.name, f)) for f in fields if f not in shared]) for m, fields in reads]
        return " ".join(parts + self._fragments(rest, first))

    def snapshot_selection(self, type_name: str) -> str:
        """What a mutation's result reads, since it never runs again (see "Mutation payloads" above)."""
        key = "mutation:" + type_name
        cached = self._selections.get(key)
        if cached is None:
            cached = self._selections[key] = self._snapshot(type_name, 0)
        return cached

    def _snapshot(self, type_name: str, depth: int) -> str:
        """The minting selection of each concrete type; for one without identity (a payload, a user
        error) also every argument-free field: scalars, and the objects it links to (`_linked`)."""
        schema = self.catalogue.schema
        type_ = schema.get_type(type_name)
        concretes = list(schema.get_possible_types(type_)) if is_abstract_type(type_) else [type_]
        members: list[tuple[str, list[tuple[str, str]]]] = []
        for concrete in concretes:
            if not isinstance(concrete, GraphQLObjectType):
                continue
            read = self._fields_read(concrete.name)
            fields = [(f, sub) for f in read if not ((sub := self._sub(concrete.name, f)) and depth)]  # below the payload: no value objects
            if self.catalogue.identity(concrete.name) is None:  # else re-rooted, so read again at will
                for name, field in concrete.fields.items():
                    if field.args or name in read or field.deprecation_reason is not None:
                        continue
                    named = get_named_type(field.type)
                    if is_leaf_type(named):
                        fields.append((name, ""))
                        continue
                    linked = self._linked(named.name, depth)
                    if linked:
                        fields.append((name, f" {{ {linked} }}"))
            members.append((concrete.name, fields))
        return " ".join(["__typename", *self._fragments(members)])

    def _linked(self, type_name: str, depth: int) -> str:
        """What a snapshot reads of an object it links to: one with identity as minting reads it (its
        preview included) or, where that is long (an interface of many types), its identity alone;
        one without identity (a user error, an edge) as a snapshot of its own, one level deep only,
        or its preview where that is long. What fits in no way within _LINKED_ROOM characters is
        not read, nor are connections (walked only on a query's chain) and the root types."""
        schema = self.catalogue.schema
        type_ = schema.get_type(type_name)
        if type_ is None or type_ in (schema.query_type, schema.mutation_type) or connection_of(self.catalogue, type_name) is not None:
            return ""
        concretes = list(schema.get_possible_types(type_)) if is_abstract_type(type_) else [type_]
        if any(isinstance(c, GraphQLObjectType) and self.catalogue.identity(c.name) is not None for c in concretes):
            # a linked object's preview, without the value objects a page reads whole: a write's document stays short
            choices = (lambda: self.selection(type_name, values=False), lambda: self._identity_selection(type_name))
        elif depth < _NESTED_DEPTH:
            choices = (lambda: self._snapshot(type_name, depth + 1), lambda: self.selection(type_name))
        else:
            return ""
        for choice in choices:
            text = choice()
            if len(text) <= _LINKED_ROOM >> depth:  # half the room a level down, so the outer read fits
                return text
        return ""  # too long even lean: its tool says what the snapshot holds instead

    def _identity_selection(self, type_name: str) -> str:
        """`__typename` and the identity of each concrete type that has one: `id` once on an
        interface that declares it, rather than `... on X { id }` for each of its members."""
        schema = self.catalogue.schema
        type_ = schema.get_type(type_name)
        if type_ is None:
            return ""
        concretes = list(schema.get_possible_types(type_)) if is_abstract_type(type_) else [type_]
        members: list[tuple[GraphQLObjectType, list[str]]] = []
        for concrete in concretes:
            identity = self.catalogue.identity(concrete.name) if isinstance(concrete, GraphQLObjectType) else None
            if identity is not None and isinstance(concrete, GraphQLObjectType):
                members.append((concrete, [identity.field]))
        if not members:
            return ""
        if not is_abstract_type(type_):
            return " ".join(["__typename", *self._fragments([(m.name, [(f, "") for f in fs]) for m, fs in members])])
        return self._write(type_, members, self._shared(type_, members))

    def _field_names(self) -> frozenset[str]:
        return self._all_field_names

    @cached_property
    def _all_field_names(self) -> frozenset[str]:
        """Every field name in the schema: an alias must differ from all, or it could be read back wrongly."""
        types = self.catalogue.schema.type_map.values()
        return frozenset(f for t in types for f in getattr(t, "fields", {}))

    def _fragments(self, members: list[tuple[str, list[tuple[str, str]]]], first: dict[str, tuple[str, str]] | None = None) -> list[str]:
        """`... on Member { fields }` for each member (fields as (name, subselection)), aliasing a field
        whose type or subselection differs from the one read under that name in an earlier member (or
        in `first`, the response names already taken outside the fragments)."""
        schema = self.catalogue.schema
        first = dict(first or {})  # response name -> (type, subselection) of its first reader
        out = []
        for member, fields in members:
            if not fields:
                continue
            own = schema.get_type(member).fields  # type: ignore[union-attr]
            written = []
            for name, sub in fields:
                shape = (str(own[name].type), sub)
                if first.setdefault(name, shape) == shape:
                    written.append(f"{name}{sub}")
                    continue
                alias = f"{name}_{member}"
                while alias in self._field_names() or self.renames.get(alias, name) != name:
                    alias += "_"
                self.renames[alias] = name
                written.append(f"{alias}: {name}{sub}")
            out.append(f"... on {member} {{ {' '.join(written)} }}")
        return out

    def _sub(self, type_name: str, field: str) -> str:
        """The subselection a preview reads a field with: ` { amount currency }` for a value object read
        whole (catalogue/_preview_fields.py's `value_fields`), nothing for a scalar."""
        type_ = self.catalogue.schema.get_type(type_name)
        found = getattr(type_, "fields", {}).get(field)
        if found is None or is_leaf_type(get_named_type(found.type)):
            return ""
        inner = value_fields(self.catalogue.schema, self.catalogue.dialect, found)
        return f" {{ {' '.join(inner)} }}" if inner else ""

    def _fields_read(self, type_name: str) -> list[str]:
        fields: list[str] = []
        key = key_field(self.catalogue, type_name)  # the identity field, or an id with no root field to fetch by
        if key is not None:
            fields.append(key)
        fields += [f for f in self.catalogue.preview_fields(type_name) if f not in fields]
        if self.catalogue.dialect.forces(type_name):
            fields.append("sync")  # Dagger evaluates lazily: reading sync makes a failing pipeline fail now
        return fields


def nested_first(body: str, alias: str | None, declarations: list[str]) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """`body` with the size of the nested pages its paths read (`jobs(first: $nestedFirst)`) as a
    variable of its own (under the call's alias in a shared request), declared in `declarations`,
    and that variable's value; `body` as it is when it reads none."""
    if f"${NESTED_FIRST}" not in body:
        return body, ()
    name = f"{alias}_{NESTED_FIRST}" if alias else NESTED_FIRST
    declarations.append(f"${name}: Int!")
    return body.replace(f"${NESTED_FIRST}", f"${name}"), ((name, NESTED_ITEMS),)


#: Characters a mutation payload's read of one linked object may take with its preview (see `_linked`).
_LINKED_ROOM = 1_200
#: How many levels of objects without identity a payload reads below itself (`errors { message }`,
#: `commentEdge { cursor node { ... } }`): one, so a document stays short however the types nest.
_NESTED_DEPTH = 1
