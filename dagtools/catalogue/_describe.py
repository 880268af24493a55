"""One part of a tool's parameters, spelled out: what `describeTools Query_issues.filter.state` shows.

A tool's parameter schema stays within a budget, so deep input objects are summarised there; the
summary names the dotted path that leads here. The part comes back within the same budget, its own
nested input objects summarised in turn, so a model walks down a filter one level at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphql import GraphQLInputObjectType, get_named_type

from .._errors import ToolCallError

if TYPE_CHECKING:
    from ._catalogue import Catalogue

__all__ = ["describe_path", "is_path"]


def is_path(name: str) -> bool:
    """Whether a describeTools name is a dotted path into a tool's parameters, not a tool name."""
    return "." in name


def describe_path(catalogue: Catalogue, path: str) -> dict[str, Any]:
    """The schema of the argument or input field at `path` (tool.argument.field...), within the budget."""
    tool_name, *parts = path.split(".")
    if tool_name not in catalogue:
        hints = catalogue.suggest(tool_name)
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
