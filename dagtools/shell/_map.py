"""The API at a glance: every type a session can reach, one line each, with its fields as the tools
name them, so an agent on a small API writes its calls after one read, as it would after reading the
schema, at a fraction of the schema's size:

    Query: allJobs(status) -> Job list, companies -> Company list, employer(id!) -> Employer
    Job: title, salary, openings, postedAt, company -> Company, applications -> Application list
    Employer: Company | Agency
    Agency: name, feePercent: Int (no tool lists these; only Query_employer reads them: id=[A, B] reads several)
    Mutation: applyToJob(jobId!, name!) -> ApplyToJobPayload

A field is called as `Type_field` (`Job_salary`); `(a!, b)` are its arguments, `!` where required,
cursors (`after`, `before`, `last`) left out; `-> T` where it returns objects, `T list` for
many (a connection reads as a list of its items). A type no tool lists names the root lookup that
reads several of it given a list of keys, and says where it is the only way to them (an agent
otherwise searches for the list that is not there). Connection and edge types have no line of
their own. An API whose map would be longer than MAP_LIMIT characters has none (`search` finds its
tools): a map is worth one read only while it is smaller than what it saves.
"""

from __future__ import annotations

from typing import Any

from graphql import Undefined, get_named_type, is_abstract_type, is_non_null_type, is_object_type

from ..calls._each import each_lookup
from ..catalogue._catalogue import Catalogue, is_list
from ..catalogue._search import PAGING

__all__ = ["MAP_LIMIT", "api_map"]

#: Characters a map may take (about 1,500 o200k tokens); a larger API gets none.
MAP_LIMIT = 6000
#: Tools beyond which no map is tried (it could not fit), so a large API's schema is never built for it.
_TOOLS_LIMIT = 600
#: Paging arguments left out of the map: a page's cursors and the backward pair. `first` stays, as
#: "the first ten people" is a question models are asked, and without it two of two blind players
#: read a tool's help before asking for the first ten.
_PAGING = PAGING - {"first"}


def api_map(catalogue: Catalogue) -> str | None:
    """The map of the API (see the module's docstring), or None where it would exceed MAP_LIMIT."""
    if len(catalogue.names()) > _TOOLS_LIMIT:
        return None
    built: str | None = catalogue.derived("shell map", lambda: _build(catalogue))
    return built


def _build(catalogue: Catalogue) -> str | None:
    schema = catalogue.schema
    roots = [t for t in (catalogue.query_type, catalogue.mutation_type) if t]
    order: list[str] = []
    queue = list(roots)
    while queue:
        type_name = queue.pop(0)
        if type_name in order:
            continue
        order.append(type_name)
        type_ = schema.get_type(type_name)
        if is_abstract_type(type_):
            queue += [member.name for member in schema.get_possible_types(type_)]
            continue
        for name in catalogue.tools_for_type(type_name):
            target = _shown_type(catalogue, name)
            if target is not None and target not in order:
                queue.append(target)
    lines = []
    for type_name in order:
        type_ = schema.get_type(type_name)
        if is_abstract_type(type_):
            members = " | ".join(m.name for m in schema.get_possible_types(type_))
            lines.append(f"{type_name}: {members}")
            continue
        fields = [_field(catalogue, name) for name in catalogue.tools_for_type(type_name)]
        if fields:
            listed = _unlisted(catalogue, type_name)
            lines.append(f"{catalogue.prefix(type_name)}: {', '.join(fields)}{listed}")
    text = "\n".join(lines)
    return text if len(text) <= MAP_LIMIT else None


def _unlisted(catalogue: Catalogue, type_name: str) -> str:
    """What a type's line says when no tool lists it: the root lookup that reads several, and that
    it is the only way to them where no other tool gives one (an agent that read the map still
    searched for another way to agencies before it looked any up)."""
    lookup = each_lookup(catalogue, type_name)
    if lookup is None:
        return ""
    if lookup.only:
        return f" (no tool lists these; only {lookup.tool} reads them: {lookup.key}=[A, B] reads several)"
    return f" (no tool lists these: {lookup.tool} {lookup.key}=[A, B] reads several)"


def _shown_type(catalogue: Catalogue, name: str) -> str | None:
    """The object type a tool's field gives, a connection's items for a connection; None for a value."""
    target = catalogue.target(name)
    shape = catalogue.connection(target)
    if shape is not None:
        return shape.node_type
    type_ = catalogue.schema.get_type(target)
    return target if is_object_type(type_) or is_abstract_type(type_) else None


def _field(catalogue: Catalogue, name: str) -> str:
    ref = catalogue.ref(name)
    field = catalogue.field(ref)
    takes = [_argument(n, a) for n, a in field.args.items() if n not in _PAGING]
    out = ref.field_name + (f"({', '.join(takes)})" if takes else "")
    shown = _shown_type(catalogue, name)
    if shown is not None:
        many = catalogue.connection(catalogue.target(name)) is not None or is_list(field.type)
        out += f" -> {shown}{' list' if many else ''}"
    elif get_named_type(field.type).name != "String":
        out += f": {get_named_type(field.type).name}"
    return out


def _argument(name: str, argument: Any) -> str:
    return f"{name}!" if is_non_null_type(argument.type) and argument.default_value is Undefined else name
