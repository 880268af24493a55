"""What the model asks a call to read of each object it returns: `fields`, checked against the schema.

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
MAX_DEPTH steps. A field named once stays a column of its type for the rest of the session.
"""

from __future__ import annotations

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
from ..catalogue._tool import FIELDS, fields_parameter

if TYPE_CHECKING:
    from ..catalogue._catalogue import Catalogue

__all__ = ["FIELDS", "MAX_DEPTH", "MAX_PATHS", "check_paths", "fields_parameter", "heads"]

#: Paths one call may name, and steps in one path.
MAX_PATHS = 12
MAX_DEPTH = 3


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
        if len(steps) > MAX_DEPTH:
            raise ToolCallError(
                f"{tool_name}'s {parameter} path {path!r} has {len(steps)} steps; at most {MAX_DEPTH} are read in one call."
            )
        current = type_name
        for position, step in enumerate(steps):
            members = _members(catalogue, current)
            found = [m.fields[step] for m in members if step in m.fields]
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
            last = position == len(steps) - 1
            if not last and not is_composite_type(named):
                raise ToolCallError(
                    f"{tool_name}'s {parameter}: {step} in {path!r} is a value, not an object, so nothing can be read past it."
                )
            if is_composite_type(named) and catalogue.connection(named.name) is not None:
                raise ToolCallError(
                    f"{tool_name}'s {parameter}: {step} is a list read page by page; walk it with its own tool or callChain instead."
                )
            current = named.name
        paths.append(".".join(steps))
    return tuple(dict.fromkeys(paths))


def heads(paths: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Paths grouped by their first field: `("a", "b.c", "b.d")` -> `{"a": (), "b": ("c", "d")}`."""
    out: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        out.setdefault(head, [])
        if rest:
            out[head].append(rest)
    return {head: tuple(rest) for head, rest in out.items()}
