"""One part of a tool's parameters, spelled out: what `describeTools Query_issues.filter.state` shows.

A tool's parameter schema stays within a budget, so deep input objects are summarised there; the
summary names the dotted path that leads here. The part comes back within the same budget, its own
nested input objects summarised in turn, so a model walks down a filter one level at a time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphql import GraphQLInputObjectType, get_named_type

from .._errors import ToolCallError

if TYPE_CHECKING:
    from ._catalogue import Catalogue

#: Tool names for one that is none (a catalogue's spelling neighbours, or search's by meaning).
Suggest = Callable[[str], list[str]]

__all__ = ["DESCRIBE_TOOLS", "describe_names", "describe_path", "is_path", "pointed_path", "points_to_describe"]

#: The tool every summary and argument error points to; every session that can show such a pointer has it.
DESCRIBE_TOOLS = "describeTools"
_POINTER = f"{DESCRIBE_TOOLS} "


def points_to_describe(schema: Any) -> bool:
    """Whether a parameter schema leaves a part to describeTools (a summarised input object)."""
    return bool(pointed_path(schema))


def pointed_path(schema: Any) -> str:
    """The first dotted path a parameter schema leaves to describeTools, or ""."""
    import json
    import re

    text = json.dumps(schema)
    if _POINTER not in text:
        return ""
    found = re.search(rf"{DESCRIBE_TOOLS} ([A-Za-z0-9_.-]+?)(?:\.<field>| for | shows)", text)
    return found.group(1) if found else ""


def is_path(name: str) -> bool:
    """Whether a describeTools name is a dotted path into a tool's parameters, not a tool name."""
    return "." in name


def describe_path(catalogue: Catalogue, path: str, suggest: Suggest | None = None) -> dict[str, Any]:
    """The schema of the argument or input field at `path` (tool.argument.field...), within the budget."""
    tool_name, *parts = path.split(".")
    if tool_name not in catalogue:
        hints = (suggest or catalogue.suggest)(tool_name)
        raise ToolCallError(f"No tool named {tool_name}" + (f" (did you mean {', '.join(hints)}?)" if hints else "") + ".")
    ref = catalogue.ref(tool_name)
    fields: dict[str, Any] = catalogue.arguments(ref)
    owner = tool_name
    argument: Any = None
    for index, part in enumerate(parts):
        if part not in fields:
            known = ", ".join(list(fields)[:20])
            raise ToolCallError(
                f"{'.'.join([tool_name, *parts[:index]])} has no {part!r}; it has {known}. "
                f"Describe one of those, such as {'.'.join([tool_name, *parts[:index], next(iter(fields), '')])}."
            )
        argument = fields[part]
        named = get_named_type(argument.type)
        if index < len(parts) - 1:
            if not isinstance(named, GraphQLInputObjectType):
                raise ToolCallError(f"{'.'.join([tool_name, *parts[: index + 1]])} is a {named}, with no fields inside.")
            fields = dict(named.fields)
        owner = named.name
    renderer = catalogue.renderer(path)
    named = get_named_type(argument.type) if argument is not None else None
    if isinstance(named, GraphQLInputObjectType):
        schema = renderer.spell_out(named)
        if argument.description:
            schema["description"] = argument.description.strip()
    elif argument is not None:
        schema = renderer.argument(argument, parts[-1])
    else:
        raise ToolCallError(f"Name a part of {tool_name}'s parameters after the dot, such as {tool_name}.{next(iter(fields), 'x')}.")
    return {"path": path, "type": owner, "schema": schema}


def describe_names(
    catalogue: Catalogue, names: Any, example: str = "", *, most: int = 256, budget: int = 32 * 1024, suggest: Suggest | None = None
) -> dict[str, Any]:
    """What describeTools answers: each named tool's description and parameters (`Type_*` for all
    of a type's), and each dotted path's part, without selecting anything.

    The caller is untrusted: each name counts once however often it is given, at most `most`
    different names are taken, and the schemas stop at `budget` bytes, the rest named for a
    later call."""
    from ._render import render_tool

    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not names:
        raise ToolCallError(f'{DESCRIBE_TOOLS} takes a list of tool names or dotted paths, such as {{"tools": ["{example}"]}}.')
    names = list(dict.fromkeys(str(n) for n in names))
    if len(names) > most:
        raise ToolCallError(f"That is {len(names)} different names; one {DESCRIBE_TOOLS} call takes at most {most}.")
    suggest = suggest or catalogue.suggest  # the caller's, by meaning, where it has a search index
    parts = [describe_path(catalogue, n, suggest) for n in names if is_path(n)]
    wanted: dict[str, None] = {}
    unknown: list[str] = []
    for name in (n for n in names if not is_path(n)):
        expanded = catalogue.tools_for_type(name[:-2]) if name.endswith("_*") else [name] if name in catalogue else []
        if not expanded:
            unknown.append(name)
        wanted.update(dict.fromkeys(expanded))
    if unknown:
        hints = [f"{n} (did you mean {', '.join(close)}?)" if (close := suggest(n)) else n for n in unknown[:10]]
        raise ToolCallError(f"No tool named {'; '.join(hints)}. selectTools lists the tools there are.")
    listed: list[dict[str, Any]] = []
    left: list[str] = []
    used = 0
    for each in wanted:
        if not left:
            rendered = render_tool(catalogue.tool(each), "mcp")
            entry = {k: rendered[k] for k in ("name", "description", "inputSchema")}
            size = len(json.dumps(entry, ensure_ascii=False))
            if not listed or used + size <= budget:
                listed.append(entry)
                used += size
                continue
        left.append(each)
    answer: dict[str, Any] = {"tools": listed, "parts": parts} if parts else {"tools": listed}
    if left:
        shown = ", ".join(left[:20]) + (f" and {len(left) - 20} more" if len(left) > 20 else "")
        answer["not_shown"] = f"These did not fit in one answer; {DESCRIBE_TOOLS} shows their schemas: {shown}."
    return answer
