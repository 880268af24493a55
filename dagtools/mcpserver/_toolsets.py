"""The two toolsets an MCP client can see of one session.

Dynamic: exactly `Session.tools()`; the list changes as the model selects tools, and the client is told.
Fixed: a constant handful of tools (`selectTools`, `callTool`, `describeTools`, and `save` when outputs
are declared) for clients that never re-read the tool list. The same selection and calls happen
through them: `selectTools` returns the selected tools' full schemas, so the model learns their
parameters from the result, and `callTool(tool, arguments)` runs any selected tool.
"""

from __future__ import annotations

from typing import Any

from .._tools import Tool, ToolCall, ToolResult
from ..catalogue._render import render_tool
from ..session._metatools import SAVE, SELECT_TOOLS
from ..session._session import Session

__all__ = ["CALL_TOOL", "DESCRIBE_TOOLS", "call_fixed_tool", "dynamic_tools", "fixed_tools", "tool_schemas"]

CALL_TOOL = "callTool"
DESCRIBE_TOOLS = "describeTools"

_NAMES = {"type": "array", "items": {"type": "string"}}


def dynamic_tools(session: Session) -> list[Tool]:
    return session.tools()


def fixed_tools(session: Session) -> list[Tool]:
    """The constant toolset. Only the descriptions follow the session (as of when the list is read)."""
    current = _select_tools_tool(session)
    catalogue = session.catalogue
    may_mutate = bool(catalogue.mutation_type and catalogue.tools_for_type(catalogue.mutation_type))
    tools = [
        Tool(
            name=SELECT_TOOLS,
            description=(
                current.description + "\n\nThe selected tools' full parameter schemas come back in the "
                "result; run them with callTool. Call selectTools with no tools to see the objects "
                "you hold now and the tools you can select."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "tools": {
                        **_NAMES,
                        "description": 'The tools to select, such as ["Query_repository"] (Type_* selects all of a type\'s tools).',
                    }
                },
                "additionalProperties": False,
            },
            kind="selectTools",
        ),
        Tool(
            name=CALL_TOOL,
            description=(
                'Run a tool selected with selectTools, such as callTool(tool: "Potato_peel", '
                'arguments: {"Potato": "Potato#1"}). Objects are passed and returned as Type#N IDs.'
            ),
            parameters={
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "description": "The tool's name, Type_field."},
                    "arguments": {
                        "type": "object",
                        "description": "The tool's arguments, as its schema from selectTools says.",
                        "default": {},
                    },
                },
                "required": ["tool"],
                "additionalProperties": False,
            },
            kind="local",
            read_only=not may_mutate,
            destructive=may_mutate,
        ),
        Tool(
            name=DESCRIBE_TOOLS,
            description="Show tools' descriptions and parameter schemas without selecting them.",
            parameters={
                "type": "object",
                "properties": {"tools": {**_NAMES, "description": "Tool names."}},
                "required": ["tools"],
                "additionalProperties": False,
            },
            kind="local",
        ),
    ]
    tools += [t for t in session.tools() if t.name == SAVE]
    return tools


def tool_schemas(session: Session, names: list[str]) -> list[dict[str, Any]]:
    """Name, description and input schema of each named tool (`Type_*` expands), as MCP lists them."""
    catalogue = session.catalogue
    out: list[dict[str, Any]] = []
    for name in names:
        expanded = catalogue.tools_for_type(name[:-2]) if name.endswith("_*") else [name]
        for each in expanded:
            if each in catalogue:
                rendered = render_tool(catalogue.tool(each), "mcp")
                out.append({k: rendered[k] for k in ("name", "description", "inputSchema")})
    return out


async def call_fixed_tool(session: Session, name: str, arguments: dict[str, Any]) -> ToolResult:
    """Run one call of the fixed toolset on the session; errors come back as error results."""
    if name == SELECT_TOOLS:
        names = arguments.get("tools")
        if names in (None, [], ""):
            return ToolResult(call_id="", name=name, value=_select_tools_tool(session).description)
        result = await session.call_tool(ToolCall(name=SELECT_TOOLS, arguments={"tools": names}))
        if result.is_error:
            return result
        listed = tool_schemas(session, [names] if isinstance(names, str) else list(names))
        return ToolResult(
            call_id=result.call_id,
            name=name,
            value={"result": result.value, "tools": listed, "next": "Run these with callTool(tool, arguments)."},
        )
    if name == CALL_TOOL:
        extra = set(arguments) - {"tool", "arguments"}
        tool = arguments.get("tool")
        inner = arguments.get("arguments") or {}
        if extra or not isinstance(tool, str) or not isinstance(inner, (dict, str)):
            return _error(
                name,
                'callTool takes {"tool": "Type_field", "arguments": {...}}.'
                + (f" It has no parameter {', '.join(sorted(extra))}." if extra else ""),
            )
        if tool == CALL_TOOL:
            return _error(name, "callTool runs the API's tools; call the tool you want directly.")
        if tool == DESCRIBE_TOOLS:
            return await call_fixed_tool(session, tool, inner if isinstance(inner, dict) else {})
        return await session.call_tool(ToolCall(name=tool, arguments=inner))
    if name == DESCRIBE_TOOLS:
        names = arguments.get("tools")
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not names:
            return _error(name, 'describeTools takes a list of tool names, such as {"tools": ["Query_potato"]}.')
        listed = tool_schemas(session, [str(n) for n in names])
        known = {t["name"] for t in listed}
        unknown = [n for n in names if n not in known and not str(n).endswith("_*")]
        if unknown:
            hints = [
                f"{n} (did you mean {', '.join(session.catalogue.suggest(n))}?)" if session.catalogue.suggest(n) else n for n in unknown
            ]
            return _error(name, f"No tool named {'; '.join(hints)}. selectTools lists the tools there are.")
        return ToolResult(call_id="", name=name, value={"tools": listed})
    return await session.call_tool(ToolCall(name=name, arguments=arguments))


def _select_tools_tool(session: Session) -> Tool:
    return next(t for t in session.tools() if t.name == SELECT_TOOLS)


def _error(name: str, message: str) -> ToolResult:
    return ToolResult(call_id="", name=name, value={"error": message}, is_error=True)
