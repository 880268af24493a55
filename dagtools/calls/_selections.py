"""What a call reads of each object beyond its preview: what the model asks for (`fields`), what it
wanted before, a page's items and the objects a row names.

A tool whose field returns objects takes `fields`, a list of field names or dotted paths read for
every object the call returns, beside its preview:

    Query_jobs(first: 20, fields: ["salary", "remote", "company.name"])

A name reads that field of each object (`salary`) and shows it as a column; a path walks through
an object field to the fields of what it reaches (`company.name`), and every object reached is
minted as a handle like any other (`Company#2`), shown in the same page with its own columns, so
"the open remote job that pays most, with its company" is one call. Each path is checked before
anything is sent: its fields must exist on the type reached (any member's, for an interface or a
union), take no required argument, and every step but the last must return objects; values still
travel as variables (the paths name fields, never values). At most MAX_PATHS paths of at most
MAX_DEPTH steps.

Paths are written as GraphQL reads: `films.title` or `edges.node.title` on a page of films is
`title` of each film (a connection's way to its items is left out where it is met), and a step
may go through a list or a connection (`jobs.title` on a company): a first page of NESTED_ITEMS
(`first` as a variable, where the connection takes it), at most NESTED_ROWS objects in all the
lists of a call, the lists cut short named with the tool that reads them whole.

A field named once stays a column of its type for the rest of the session (`Wanted`), and so does
one the model read with its own tool (`Job_salary`): later reads of that type read it too.

Some paths every read takes, whatever was asked (`read_paths`): a page type that is no Relay
connection (`{items, total, hasMore}`) reads its items, since they are its point; and a type's
references to named objects (`references`: a book's author, a person's homeworld) are read as
their handles and names, so a page says what each row points to without a call a row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any

from graphql import (
    GraphQLInterfaceType,
    GraphQLObjectType,
    Undefined,
    get_named_type,
    is_abstract_type,
    is_composite_type,
    is_non_null_type,
)

from .._errors import ToolCallError
from ..catalogue._catalogue import is_list
from ..catalogue._preview_fields import ID_LIKE, field_rank
from ..catalogue._tool import FIELDS, fields_parameter
from ._connections import connection_of, page_items

if TYPE_CHECKING:
    from ..catalogue._catalogue import Catalogue

__all__ = [
    "FIELDS",
    "MAX_DEPTH",
    "MAX_PATHS",
    "NESTED_ITEMS",
    "NESTED_ROWS",
    "Nested",
    "REFERENCES",
    "Wanted",
    "asked_columns",
    "check_paths",
    "fields_parameter",
    "heads",
    "read_paths",
    "references",
]

#: Paths one call may name, and steps in one path.
MAX_PATHS = 12
MAX_DEPTH = 3
#: Items of one list or connection a path reads on the way, per object (a connection's first page),
#: and objects all the nested lists of one call reach.
NESTED_ITEMS = 10
NESTED_ROWS = 100
#: Fields of one type a session remembers the model wanted (see `Wanted`).
WANTED_LIMIT = 32
#: Objects a read of one type names by a reference (see `references`).
REFERENCES = 2


def _members(catalogue: Catalogue, type_name: str) -> list[Any]:
    """The types whose fields a path may name at `type_name`: a connection's node type, an
    abstract type's members (and the interface itself), or the object type."""
    schema = catalogue.schema
    shape = catalogue.connection(type_name)
    if shape is not None:
        type_name = shape.node_type
    type_ = schema.get_type(type_name)
    if type_ is None:
        return []
    if is_abstract_type(type_):
        members: list[Any] = [type_] if isinstance(type_, GraphQLInterfaceType) else []
        return members + list(schema.get_possible_types(type_))
    return [type_] if isinstance(type_, GraphQLObjectType) else []


def check_paths(catalogue: Catalogue, type_name: str, raw: Any, tool_name: str, parameter: str = FIELDS) -> tuple[str, ...]:
    """The paths `raw` names, checked against the type a call returns; raises ToolCallError saying
    what to fix (and changes nothing) for anything the schema does not have."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise ToolCallError(f'{tool_name}\'s {parameter} is a list of field names or paths, such as ["name", "author.name"].')
    if len(raw) > MAX_PATHS:
        raise ToolCallError(f"{tool_name}'s {parameter} names {len(raw)} paths; at most {MAX_PATHS} are read in one call.")
    paths: list[str] = []
    for path in raw:
        steps = [s.strip() for s in path.strip().split(".")]
        if not path.strip() or not all(steps):
            raise ToolCallError(f'{tool_name}\'s {parameter} has an empty field name in {path!r}; write names such as "author.name".')
        if len(steps) > 3 * MAX_DEPTH:
            raise ToolCallError(
                f"{tool_name}'s {parameter} path {path!r} has {len(steps)} steps; at most {MAX_DEPTH} are read in one call."
            )
        read = _read_steps(catalogue, type_name, steps, tool_name, parameter, path)
        if len(read) > MAX_DEPTH:
            raise ToolCallError(f"{tool_name}'s {parameter} path {path!r} has {len(read)} steps; at most {MAX_DEPTH} are read in one call.")
        steps = read
        paths.append(".".join(steps))
    return tuple(dict.fromkeys(paths))


def asked_columns(catalogue: Catalogue, type_name: str, asked: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Per type, the fields the model named for it (`fields`): a page of that type shows those, beside
    the column that names each object, and nothing else. Paths are `check_paths`' (read steps), so a
    connection on the way stands for its items; a page type whose only named field is its items
    (reached by naming fields of them) keeps its own columns."""
    out: dict[str, set[str]] = {}

    def walk(at: str, paths: tuple[str, ...]) -> None:
        grouped = heads(paths)
        members = _members(catalogue, at)
        if not (len(grouped) == 1 and page_items(catalogue, at) in grouped):
            for member in members:
                out.setdefault(member.name, set()).update(grouped)
        for head, rest in grouped.items():
            for member in members:
                if rest and head in member.fields:
                    walk(get_named_type(member.fields[head].type).name, rest)

    if asked:
        walk(type_name, asked)
    return {name: frozenset(fields) for name, fields in out.items()}


def _read_steps(catalogue: Catalogue, type_name: str, steps: list[str], tool_name: str, parameter: str, path: str) -> list[str]:
    """The steps of one path as they are read of each object, each checked. A connection's own way to
    its items (`nodes`, `edges.node`, SWAPI's `films`) is left out where one is met, since fields are
    read of every item; a field of a page type's items is read through them (`total` is the page's,
    `number` each item's). A list or a connection on the way is read a first page at a time (see
    calls/_field.py's `_asked`)."""
    read: list[str] = []
    current = type_name
    position = 0
    while position < len(steps):
        skip = _items_steps(catalogue, current, steps[position:])
        if skip:
            position += skip
            if position == len(steps):
                raise ToolCallError(
                    f"{tool_name}'s {parameter}: {path!r} ends at the items of a page; name a field of them, "
                    f"such as {'.'.join([*steps, 'name'])!r} or just 'name'."
                )
            continue
        step = steps[position]
        members = _members(catalogue, current)
        found = [m.fields[step] for m in members if step in m.fields]
        items = page_items(catalogue, current) if not read and not found else None
        if items is not None and step in getattr(_item_type(catalogue, current, items), "fields", {}):
            read.append(items)  # a field of a page type's items, read of each of them (the call reads its items anyway)
            current = _item_type(catalogue, current, items).name
            continue
        if not found:
            names = sorted({f for m in members for f in m.fields})
            close = get_close_matches(step, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            where = members[0].name if len(members) == 1 else current
            raise ToolCallError(
                f"{tool_name}'s {parameter}: {where} has no field {step!r}{hint}. Its fields: {', '.join(names[:30])}"
                + (" and more." if len(names) > 30 else ".")
            )
        field = found[0]
        if any(is_non_null_type(a.type) and a.default_value is Undefined for a in field.args.values()):
            raise ToolCallError(
                f"{tool_name}'s {parameter}: {step} takes arguments, so it cannot be read beside a preview; call its own tool instead."
            )
        named = get_named_type(field.type)
        if position < len(steps) - 1 and not is_composite_type(named):
            raise ToolCallError(f"{tool_name}'s {parameter}: {step} in {path!r} is a value, not an object, so nothing can be read past it.")
        read.append(step)
        current = named.name
        position += 1
    return read


def _item_type(catalogue: Catalogue, page: str, items: str) -> Any:
    return get_named_type(catalogue.schema.get_type(page).fields[items].type)  # type: ignore[union-attr]


def _items_steps(catalogue: Catalogue, type_name: str, steps: list[str]) -> int:
    """How many of `steps` only go from a connection of `type_name` to its items: `nodes` or
    `edges.node`, or a list of its node type beside them (SWAPI's `FilmsConnection.films`); 0 where
    they name a field."""
    shape = catalogue.connection(type_name)
    if shape is not None:
        type_ = catalogue.schema.get_type(type_name)
        fields = getattr(type_, "fields", {})
        head = steps[0]
        if head == "edges" and shape.edge_type is not None:
            return 2 if len(steps) > 1 and steps[1] == "node" else 0
        field = fields.get(head)
        if field is None or field.args or not is_list(field.type):
            return 0
        return 1 if get_named_type(field.type).name == shape.node_type else 0
    return 0


def heads(paths: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Paths grouped by their first field: `("a", "b.c", "b.d")` -> `{"a": (), "b": ("c", "d")}`."""
    out: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        out.setdefault(head, [])
        if rest:
            out[head].append(rest)
    return {head: tuple(rest) for head, rest in out.items()}


@dataclass(slots=True)
class Nested:
    """What the lists one call's paths go through gave: the objects minted on the way (at most
    NESTED_ROWS), and the lists cut short, each with the tool that reads it whole."""

    rows: int = 0
    lists: int = 0  # the lists read on the way, cut or whole
    cuts: dict[str, str | None] = dataclass_field(default_factory=dict)  # `Company#1.jobs` -> `Company_jobs`

    def note(self) -> str:
        """What the model is told of the lists read on the way: that each is whole, or which were cut
        short and how to read one whole. Said when whole too: a model asked "how many jobs does each
        company have" read the lists again, one call a company, to learn that none had more."""
        if not self.cuts:
            return "Every list read on the way is whole." if self.lists else ""
        where = list(self.cuts)
        more = f" and {len(where) - 3} more" if len(where) > 3 else ""
        holder, tool = where[0].rsplit(".", 1)[0], self.cuts[where[0]]
        how = f", such as {tool} on {holder}" if tool else ""
        return (
            f"Lists read on the way stop at {NESTED_ITEMS} items: {', '.join(where[:3])}{more} have more; "
            f"each one's own tool reads it whole{how}."
        )


class Wanted:
    """Per type, the fields the model read on their own or named: they stay columns of that type,
    and later reads of it read them where no preview does. `on_new` runs when a field is added."""

    def __init__(self, on_new: Callable[[], None] = lambda: None) -> None:
        self._fields: dict[str, set[str]] = {}
        self._on_new = on_new

    def wants(self, type_name: str, field: str) -> bool:
        return field in self._fields.get(type_name, ())

    def want(self, type_name: str, field: str) -> None:
        fields = self._fields.setdefault(type_name, set())
        if field not in fields and len(fields) < WANTED_LIMIT:
            fields.add(field)
            self._on_new()

    def of(self, type_name: str) -> tuple[str, ...]:
        return tuple(sorted(self._fields.get(type_name, ())))


def read_paths(catalogue: Catalogue, wanted: Wanted, type_name: str, asked: tuple[str, ...]) -> tuple[str, ...]:
    """The paths a call returning `type_name` reads of each object beside its preview: those the
    model asked for now, a page's items, and, where it named none, the references of a concrete type
    and the argument-free values the model read or named before on that type that no preview reads
    (a call that names its fields shows just those: calls/_preview_pages.py)."""
    if not catalogue.previews:  # Dagger: reading a field evaluates it, so nothing is read unasked
        return asked
    connection = connection_of(catalogue, type_name)
    end = connection.node_type if connection is not None else type_name
    items = page_items(catalogue, type_name) if connection is None else None
    named = bool(asked)
    if items is not None and not any(p.split(".", 1)[0] == items for p in asked):
        asked = (*asked, items)
    if named:
        return asked
    taken = {p.split(".", 1)[0] for p in asked}
    asked = (*asked, *(p for p in references(catalogue, end) if p.split(".", 1)[0] not in taken))
    schema = catalogue.schema
    end_type: Any = schema.get_type(end)
    ends = [end, *(t.name for t in schema.get_possible_types(end_type))] if is_abstract_type(end_type) else [end]
    before: list[str] = []
    for name in ends:
        fields = getattr(schema.get_type(name), "fields", {})
        preview = set(catalogue.preview_fields(name))
        for field_name in wanted.of(name):
            field = fields.get(field_name)
            if field is not None and field_name not in preview and not field.args and not is_composite_type(get_named_type(field.type)):
                before.append(field_name)
    return tuple(dict.fromkeys([*asked, *before]))


def references(catalogue: Catalogue, type_name: str) -> tuple[str, ...]:
    """The paths every read of a `type_name` takes to the objects it names: at most REFERENCES
    argument-free fields giving one object with identity and a name, each read as its handle and
    that name (`author.name`). Only for a concrete type: an interface of many members would
    multiply the document."""
    cache: dict[str, tuple[str, ...]] = catalogue.derived("references", dict)
    if type_name not in cache:
        cache[type_name] = _references(catalogue, type_name)
    return cache[type_name]


def _references(catalogue: Catalogue, type_name: str) -> tuple[str, ...]:
    type_ = catalogue.schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType) or catalogue.is_root(type_name) or not catalogue.previews:
        return ()
    out: list[str] = []
    for name, field in type_.fields.items():
        named = get_named_type(field.type)
        if field.args or field.deprecation_reason is not None or not isinstance(named, GraphQLObjectType) or is_list(field.type):
            continue
        if catalogue.identity(named.name) is None or connection_of(catalogue, named.name) is not None or named.name == type_name:
            continue
        lead = next(iter(catalogue.preview_fields(named.name)), None)
        if lead is None or field_rank(catalogue.schema, named.name, lead) >= ID_LIKE:
            continue  # nothing that names it in words: its handle alone says little
        out.append(f"{name}.{lead}")
        if len(out) == REFERENCES:
            break
    return tuple(out)
