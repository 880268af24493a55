"""The built-in tools: `selectTools` grows the active set, `save` hands outputs back, `readResult` pages,
`describeTools` spells out what a tool's schema summarised.

Their descriptions are where the model learns what exists: objects, values, and the tools it may
select now. They stay inside a token budget however big the schema or the registry grows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._errors import ToolCallError
from .._tools import Tool
from ..calls._connections import listed_types
from ..calls._each import each_lookup
from ..catalogue._catalogue import Catalogue
from ..catalogue._describe import DESCRIBE_TOOLS, describe_names, pointed_path
from ..catalogue._json_schema import is_required
from ..catalogue._reach import by_reach, example_call
from ..catalogue._reach import example_path as _example_path
from ..catalogue._search import SearchIndex, catalogue_search, search_words, suggest_tools, takes_line
from ..registry._registry import Registry, object_lines
from ._outputs import NO_OUTPUTS, SAVE, Output, add_save, save_tool
from ._toolsets import FunctionToolset

if TYPE_CHECKING:
    from ._session import Session

__all__ = [
    "DESCRIBE_TOOLS",
    "NO_OUTPUTS",
    "READ_RESULT",
    "SAVE",
    "SELECT_TOOLS",
    "Output",
    "ValueInput",
    "add_describe_tools",
    "add_save",
    "describe_tools",
    "describe_tools_tool",
    "estimate_tokens",
    "pointed_path_of",
    "read_result_tool",
    "save_tool",
    "search_answer",
    "search_index",
    "only",
    "search_select",
    "select_tools",
    "select_tools_tool",
]

SELECT_TOOLS = "selectTools"
READ_RESULT = "readResult"
_OBJECTS_SHOWN_PER_TYPE = 5


def estimate_tokens(text: str) -> int:
    """About four bytes a token: the usual estimate for English and JSON in current tokenizers."""
    return math.ceil(len(text.encode()) / 4)


@dataclass(frozen=True, kw_only=True)
class ValueInput:
    """A plain value the host gives the model before it starts."""

    name: str
    value: Any
    description: str = ""


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def selectable_types(catalogue: Catalogue, registry: Registry) -> list[str]:
    """Root types first, then the type of every object the session holds."""
    types = [t for t in (catalogue.query_type, catalogue.mutation_type) if t and catalogue.tools_for_type(t)]
    types += sorted(t for t in registry.types() if t not in types)
    return types


def reachable_types(catalogue: Catalogue, types: list[str]) -> list[str]:
    """Object types the tools of `types` return (a connection's nodes for a connection) that have tools
    themselves: the model may select their tools before it holds one, to plan its next calls.
    Those reached by the most tools come first, then in the order the tools are listed."""
    from ..calls._connections import connection_of

    held = set(types)
    reached: dict[str, int] = {}
    for type_name in types:
        for name in catalogue.tools_for_type(type_name):
            target = catalogue.target(name)
            connection = connection_of(catalogue, target)
            target = connection.node_type if connection is not None else target
            if target not in held and catalogue.tools_for_type(target):
                reached[target] = reached.get(target, 0) + 1
    return sorted(reached, key=lambda t: -reached[t])


def _ahead_line(catalogue: Catalogue, types: list[str], budget_bytes: int = 130) -> str:
    """One short line naming the types reachable now, cut to a budget (GitHub's root reaches dozens)."""
    if not types:
        return ""
    head = "Also before you hold such an object: "
    shown: list[str] = []
    size = len(head)
    for type_name in types:
        item = f"{catalogue.prefix(type_name)}_*"
        if shown and size + len(item) + 2 > budget_bytes:
            break
        shown.append(item)
        size += len(item) + 2
    more = len(types) - len(shown)
    return head + ", ".join(shown) + (f" and {more} more" if more else "") + "."


#: Bytes of selectTools' description that name the tools selectable before the model holds an object:
#: the first list a client reads stays small on any schema (Linear's root has 160 fields), and search
#: finds the rest. Each type the session holds objects of adds TYPE_ROOM.
FIRST_ROOM = 250
TYPE_ROOM = 280
#: Bytes within which the tools are listed one a line, as seed 000 lists them; past it, one line a type.
FULL_ROOM = 640


def _tool_lines(catalogue: Catalogue, types: list[str], budget_bytes: int) -> list[str]:
    """One line a tool, as seed 000 lists them, where that fits and the session holds objects; else
    one line a type (`- Query_*: film, films`), which names a root's tools in half the tokens."""
    full = [f"- {name}" for t in types for name in catalogue.tools_for_type(t)]
    if any(not catalogue.is_root(t) for t in types) and sum(len(line) + 1 for line in full) <= min(budget_bytes, FULL_ROOM):
        return full
    # Grouped: one line per type with field names only, the most telling first; long groups cut with a count.
    lines: list[str] = []
    per_type = max(budget_bytes // max(len(types), 1), 60)
    for type_name in types:
        fields = [catalogue.ref(n).field_name for n in by_reach(catalogue, catalogue.tools_for_type(type_name))]
        head = f"- {catalogue.prefix(type_name)}_*: "
        text = head + ", ".join(fields)
        if len(text) > per_type:
            kept: list[str] = []
            size = len(head)
            for f in fields:
                if size + len(f) + 2 > per_type - 12:
                    break
                kept.append(f)
                size += len(f) + 2
            text = head + ", ".join(kept) + f" +{len(fields) - len(kept)} more"
        lines.append(text)
    return lines


def select_tools_tool(catalogue: Catalogue, registry: Registry, values: list[ValueInput], *, budget_tokens: int = 1500) -> Tool:
    """The selectTools tool as of now: objects, values and selectable tools within the budget."""
    parts = ["Select tools for your next turns."]
    objects = object_lines(registry, _OBJECTS_SHOWN_PER_TYPE)
    if objects:
        parts.append("Available objects:\n" + "\n".join(objects))
    if values:
        parts.append(
            "Available values:\n"
            + "\n".join(
                f"- {v.name}: {_one_line(repr_value(v.value), 120)}" + (f" ({_one_line(v.description)})" if v.description else "")
                for v in values
            )
        )
    used = sum(len(p) + 2 for p in parts)
    types = selectable_types(catalogue, registry)
    held = sum(1 for t in types if not catalogue.is_root(t))
    budget_bytes = min(max(budget_tokens * 4 - used - 300, 400), FIRST_ROOM + TYPE_ROOM * held)
    parts.append("Available tools (Type_field):\n" + "\n".join(_tool_lines(catalogue, types, budget_bytes)))
    ahead = _ahead_line(catalogue, reachable_types(catalogue, types))
    parts.append(ahead or "Tools of other types can be selected too once you hold such an object.")
    parts.append(SEARCH_HINT)
    return Tool(
        name=SELECT_TOOLS,
        description="\n\n".join(parts),
        parameters={
            "type": "object",
            "properties": {
                "tools": {"type": "array", "items": {"type": "string"}},  # selectTools(tools): the name says it
                "search": {"type": "string", "description": SEARCH_PARAMETER},
            },
            "additionalProperties": False,
        },
        kind="selectTools",
    )


#: The hint says what a search answers, the parameter only what it takes, and the answer itself that it
#: selected nothing: each said once, where it is read.
SEARCH_HINT = 'Not sure? selectTools(search: "words") lists matching tools.'
SEARCH_PARAMETER = "Words for what you need."
_SEARCH_LIMIT = 10


def search_answer(index: SearchIndex, query: Any, *, budget_tokens: int = 1500, active: Iterable[str] = ()) -> str:
    """What selectTools(search: ...) answers: the best tools, one line each, within the budget."""
    if not isinstance(query, str) or not query.strip():
        raise ToolCallError('search takes words, such as {"search": "who starred a repository"}.')
    query = query[:_SEARCH_QUERY_LIMIT]
    hits = index.search(query, limit=_SEARCH_LIMIT)
    if not hits:
        return f"No tool matches {query!r}. Try other words: the kind of object you want, or a field you expect it to have."
    selected = set(active)
    # "selecting none" is in selectTools' description already, and fixed mode runs a tool unselected
    head = "Best first, none selected:"
    lines = [head]
    size = len(head)
    for hit in hits:
        line = f"- {_hit_line(hit.name, hit.line)}" + (" (selected)" if hit.name in selected else "")
        if len(lines) > 1 and size + len(line) + 1 > budget_tokens * 4:
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


_SEARCH_QUERY_LIMIT = 500
#: The entry's closing `Takes a!, b. Returns Type.`, not a description's own "Returns a single issue ..."
#: before it.
_RETURNS = re.compile(r"^(?P<text>.*?) ?(?:\bTakes (?P<takes>[\w!, …]+)\. )?\bReturns (?P<returns>[^.]+)\.$", re.DOTALL)


def _hit_line(name: str, line: str) -> str:
    """One search hit: `Query_starship(id, starshipID) -> Starship: ...`, its arguments but paging
    ones (`!`: required), without the description a field without one falls back to (`Person
    homeworld`), which only repeats the name."""
    found = _RETURNS.match(line)
    if found is None:
        return f"{name}: {line}"
    text, returns = found.group("text").strip(), found.group("returns")
    called = f"{name}({found.group('takes')})" if found.group("takes") else name
    field = name.split("_", 1)[-1]
    if text.split(" ", 1)[-1] == field and " " in text or not text:
        return f"{called} -> {returns}"
    return f"{called} -> {returns}: {text}"


def search_index(session: Session) -> SearchIndex:
    """What selectTools(search: ...) searches in a session: the catalogue's tools, and the host's
    operations where it serves some."""
    from ._operations import OperationToolset

    for toolset in session.toolset.toolsets:
        if isinstance(toolset, OperationToolset):
            return toolset.operations.search_index()
    return catalogue_search(session.catalogue)


def select_tools(session: Session, arguments: dict[str, Any]) -> str:
    """selectTools as the model calls it: the named tools selected (the good ones, when some are not),
    or with `search`, the tools that match."""
    only(arguments, {"tools", "search"}, SELECT_TOOLS)
    if arguments.get("search") is not None:  # names and one line each; selects only what `tools` names
        return search_select(session, arguments)
    names = arguments.get("tools")
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ToolCallError(f'selectTools takes a list of tool names, such as {{"tools": ["{example_call(session.catalogue)[0]}"]}}.')
    return session._select_names(names, partial=True)


def only(arguments: dict[str, Any], allowed: set[str], tool: str) -> None:
    """Refuse parameters a built-in tool does not take, naming those it does."""
    extra = [k for k in arguments if k not in allowed]
    if extra:
        raise ToolCallError(f"{tool} has no parameter {', '.join(extra)}; it takes {', '.join(sorted(allowed))}.")


def search_select(session: Session, arguments: dict[str, Any]) -> str:
    """selectTools with `search`: the matching tools, after selecting what `tools` names, if anything."""
    names = arguments.get("tools")
    selected = "" if names in (None, [], "") else select_tools(session, {"tools": names}) + "\n\n"
    budget = session.options.tools_budget
    answer = search_answer(search_index(session), arguments["search"], budget_tokens=budget, active=session.fields.active)
    unlisted = unlisted_note(session.catalogue, arguments["search"])
    return selected + answer + (f"\n{unlisted}" if unlisted and not answer.startswith("No tool") else "")


def unlisted_note(catalogue: Catalogue, query: Any) -> str | None:
    """What a search for a kind of object no call lists says of it ("the agencies that hire": no
    tool gives a list of agencies, only `Query_employer(id!)` one at a time), so a model stops
    looking for the list and looks each up; None when the words name no such type. A type is named
    when the query has each of its words, stemmed as the search stems them ("agencies": Agency)."""
    if not isinstance(query, str):
        return None
    words = set(search_words(query))
    listed = listed_types(catalogue)
    notes = []
    for type_name in sorted(catalogue.reachable):
        named = set(search_words(type_name))
        if type_name in listed or catalogue.is_root(type_name) or not named or not named <= words:
            continue
        lookup = each_lookup(catalogue, type_name)  # the root lookup that takes a list of keys, as the map names it
        for one in [lookup.tool] if lookup else catalogue.makers(type_name):  # one per parent or the viewer's own: no note
            arguments = catalogue.field(catalogue.ref(one)).args
            required = [n for n, a in arguments.items() if is_required(a)]
            if required:
                key = lookup.key if lookup else required[0]
                several = f', or several in one call given a list ({{"{key}": ["1", "2"]}})' if lookup else ""
                notes.append(f"No tool lists {type_name} objects: {one}({takes_line(arguments)}) reads them one {key} at a time{several}.")
                break
    return " ".join(notes[:2]) or None


def repr_value(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def read_result_tool() -> Tool:
    return Tool(
        name=READ_RESULT,
        description="Read more of a long result that was cut. Pass the `ref` and `offset` its note gave.",
        parameters={
            "type": "object",
            "properties": {
                "ref": {"type": "string", "description": "The reference the note named, as it wrote it."},
                "offset": {"type": "integer", "minimum": 0, "description": "Where to start: a character or item offset."},
            },
            "required": ["ref", "offset"],
            "additionalProperties": False,
        },
        kind="readResult",
    )


def pointed_path_of(catalogue: Catalogue, active: Iterable[str]) -> str:
    """The first part an active tool's schema leaves to describeTools, or "" when none does."""
    paths: dict[str, str] = catalogue.derived("describeTools paths", dict)
    for name in active:
        if name not in paths:
            paths[name] = pointed_path(catalogue.tool(name).parameters)
        if paths[name]:
            return paths[name]
    return ""


def describe_tools_tool(catalogue: Catalogue, active: Iterable[str] = ()) -> Tool:
    """describeTools, with examples of this API: the tool a summarised schema or an argument error
    points to, so it exists wherever such a pointer can be shown."""
    example_path = pointed_path_of(catalogue, active) or _example_path(catalogue)
    return Tool(
        name=DESCRIBE_TOOLS,
        description=(
            "Show one part of a tool's parameters that its schema only summarises, by the dotted path the summary "
            f"names, such as {example_path}. A tool name, such as {example_call(catalogue)[0]}, shows its description "
            "and parameters without selecting it."
        ),
        parameters={
            "type": "object",
            "properties": {"tools": {"type": "array", "items": {"type": "string"}, "description": "Dotted paths, or tool names."}},
            "required": ["tools"],
            "additionalProperties": False,
        },
        kind="local",
    )


def describe_tools(catalogue: Catalogue, arguments: dict[str, Any]) -> dict[str, Any]:
    """What describeTools answers (see catalogue._describe)."""
    extra = [k for k in arguments if k != "tools"]
    if extra:
        raise ToolCallError(f"{DESCRIBE_TOOLS} has no parameter {', '.join(extra)}; it takes tools.")
    by_meaning = lambda name: suggest_tools(catalogue, name)  # noqa: E731
    return describe_names(catalogue, arguments.get("tools"), example=_example_path(catalogue), suggest=by_meaning)


def add_describe_tools(toolset: FunctionToolset, catalogue: Catalogue, active: Callable[[], Iterable[str]]) -> None:
    """Serve describeTools in every session (a script may call it any time); it is listed once an
    active tool's schema points to it, so a pointer never names a tool that is not there."""
    toolset.add(
        DESCRIBE_TOOLS,
        lambda: describe_tools_tool(catalogue, active()),
        lambda arguments: describe_tools(catalogue, arguments),
        listed=lambda: bool(pointed_path_of(catalogue, active())),
    )
