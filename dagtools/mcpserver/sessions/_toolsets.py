"""The fixed toolset an MCP client can see of one session, for clients that never re-read the tool list.

A constant handful of tools (`selectTools`, `callTool`, `callChain`, and `save` when outputs are
declared: without them a call of `save` is told that none were asked for and how they are declared)
over the session's own toolset: `selectTools` returns the selected tools' full schemas, so
the model learns their parameters from the result, and the part of one that a dotted path names; and
`callTool(tool, arguments)` runs any tool through the session, which records it. `describeTools`, which
schemas and argument errors name for a summarised part, runs by its name or through callTool but is
not listed: the first list a client reads stays within its token budget (DESIGN.md), and selectTools
already shows what it would. The dynamic mode needs no toolset of its own: it is the
session's toolset, whose list changes as the model selects tools.
"""

from __future__ import annotations

import json
from typing import Any

from ..._errors import ToolCallError
from ..._tools import Tool, ToolCall, ToolResult
from ...calls._chain_calls import CALL_CHAIN
from ...catalogue._describe import DESCRIBE_TOOLS, describe_names, is_path
from ...catalogue._reach import example_call, example_path
from ...catalogue._render import render_tool
from ...catalogue._search import suggest_tools
from ...catalogue._tool import FIELDS, FIELDS_SCHEMA
from ...session._fields import MAX_NAMES
from ...session._metatools import SEARCH_PARAMETER
from ...session._session import Session
from ...session._toolsets import FunctionToolset, OwnedTool, Toolset, close_names

__all__ = ["CALL_TOOL", "SCHEMAS_BUDGET", "FixedToolset", "mcp_result", "mcp_tool", "tool_schemas"]

CALL_TOOL = "callTool"
_NAMES = {"type": "array", "items": {"type": "string"}}


class FixedToolset(Toolset):
    """A few constant tools over one session. Only the descriptions follow the session."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._own = FunctionToolset()
        self._own.add("selectTools", self._select_tool, self._select)
        self._own.add(CALL_TOOL, self._call_tool_tool, self._call)
        self._own.add(DESCRIBE_TOOLS, _describe_tool(session), self._describe, listed=lambda: False)
        chain = session.meta.get(CALL_CHAIN)
        if chain is not None:  # several tools in one call and one request: a multi-hop question in one turn
            self._own.add(CALL_CHAIN, chain, lambda arguments: self._through_session(CALL_CHAIN, arguments))
        for tool in session.meta.list_tools():
            if tool.kind == "save":
                self._own.add(tool.name, tool, self._passed_on(tool.name))

    def list_tools(self) -> list[Tool]:
        return self._own.list_tools()

    def get(self, name: str) -> Tool | None:
        return self._own.get(name)

    def find(self, name: str) -> OwnedTool | None:
        return self._own.find(name)  # the functions below own the tools: a call goes straight to them

    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        return await self._own.call_tool(tool, arguments)

    def unknown(self, name: str) -> str | None:
        """A catalogue tool called by its own name: here it runs through callTool, so say how."""
        catalogue = self.session.catalogue
        if name in catalogue:
            return (
                f"{name} is not a tool of its own in this server: run it through {CALL_TOOL}, as "
                f"{CALL_TOOL}(tool: {json.dumps(name)}, arguments: {{...}}) with the arguments you meant to pass."
            )
        return self.session.meta.unknown(name) or catalogue.unavailable(name)

    def suggest(self, name: str) -> list[str]:
        own = close_names(name, self._own.names())
        return own or suggest_tools(self.session.catalogue, name)

    # -- the tools -----------------------------------------------------------------------------------

    def _session_select(self) -> Tool:
        return next(t for t in self.session.meta.list_tools() if t.kind == "selectTools")

    def _select_tool(self) -> Tool:
        current = self._session_select()
        return Tool(
            name=current.name,
            description=(
                current.description + "\n\nIt answers their parameter schemas (then use callTool), or a dotted path's part "
                f"({example_path(self.session.catalogue)}). With no tools: the objects you hold."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "tools": {
                        **_NAMES,
                        "description": f'Such as ["{example_call(self.session.catalogue)[0]}"] or ["Type_*"].',
                    },
                    "search": {"type": "string", "description": SEARCH_PARAMETER},
                },
                "additionalProperties": False,
            },
            kind="selectTools",
        )

    def _call_tool_tool(self) -> Tool:
        catalogue = self.session.catalogue
        may_mutate = bool(catalogue.mutation_type and catalogue.tools_for_type(catalogue.mutation_type))
        tool, example = example_call(catalogue)
        return Tool(
            name=CALL_TOOL,
            description=(
                f"Run a tool, such as callTool(tool: {json.dumps(tool)}, arguments: {json.dumps(example)}); "
                "it needs no selectTools first. Objects go in and out as Type#N IDs."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "tool": {"type": "string"},
                    "arguments": {"type": "object", "default": {}},
                },
                "required": ["tool"],
                "additionalProperties": False,
            },
            kind="local",
            read_only=not may_mutate,
            destructive=may_mutate,
        )

    async def _select(self, arguments: dict[str, Any]) -> Any:
        names = arguments.get("tools")
        if arguments.get("search") is not None and names in (None, [], ""):  # names and lines, nothing selected
            return await self._through_session(self._session_select().name, {"search": arguments["search"]})
        if names in (None, [], ""):
            await self.session.catch_up()  # the objects held now, whichever worker served the last calls
            return self._session_select().description
        names = [names] if isinstance(names, str) else names
        paths = [n for n in names if isinstance(n, str) and is_path(n)] if isinstance(names, list) else []
        parts = self._describe({"tools": paths})["parts"] if paths else []  # a path's part, as describeTools shows it
        if paths and len(paths) == len(names):
            return {"parts": parts}
        searched = {"search": arguments["search"]} if arguments.get("search") is not None else {}
        tools = [n for n in names if n not in paths] if isinstance(names, list) else names
        value = await self._through_session(self._session_select().name, {"tools": tools, **searched})
        listed, left = tool_schemas(self.session, list(tools))
        answer = {"result": value, "tools": listed, "next": "Run these with callTool(tool, arguments)." + _fields_once(listed)}
        if parts:
            answer["parts"] = parts
        return {**answer, "not_shown": _not_shown(left)} if left else answer

    async def _call(self, arguments: dict[str, Any]) -> Any:
        extra = set(arguments) - {"tool", "arguments"}
        tool = arguments.get("tool")
        inner = arguments.get("arguments") or {}
        if extra or not isinstance(tool, str) or not isinstance(inner, (dict, str)):
            raise ToolCallError(
                'callTool takes {"tool": "Type_field", "arguments": {...}}.'
                + (f" It has no parameter {', '.join(sorted(extra))}." if extra else "")
            )
        own = self._own.get(tool)
        if own is not None and own.kind == "local":  # describeTools, or callTool itself
            if own.name == CALL_TOOL:
                raise ToolCallError("callTool runs the API's tools; call the tool you want directly.")
            return await self._own.call_tool(own, inner if isinstance(inner, dict) else {})
        return await self._through_session(tool, inner, select=True)

    def _passed_on(self, name: str) -> Any:
        """A handler running the session's own tool `name` (bound now, not to a loop's last tool)."""
        return lambda arguments: self._through_session(name, arguments)

    async def _through_session(self, name: str, arguments: dict[str, Any] | str, *, select: bool = False) -> Any:
        result = await self.session.call_tool(ToolCall(name=name, arguments=arguments), select=select)
        if result.is_error:
            raise ToolCallError(result.value["error"])
        return result.value

    def _describe(self, arguments: dict[str, Any]) -> Any:
        catalogue = self.session.catalogue
        return describe_names(
            catalogue,
            arguments.get("tools"),
            example=example_call(catalogue)[0],
            most=MAX_NAMES,
            budget=SCHEMAS_BUDGET,
            suggest=lambda name: suggest_tools(catalogue, name),
        )


def _describe_tool(session: Session) -> Tool:
    catalogue = session.catalogue
    return Tool(
        name=DESCRIBE_TOOLS,
        description=(
            f"Show tools' parameter schemas without selecting them ({example_call(catalogue)[0]}), or by a dotted path "
            f"({example_path(catalogue)}) a part a schema summarises."
        ),
        parameters={
            "type": "object",
            "properties": {"tools": {**_NAMES, "description": "Tool names or dotted paths."}},
            "required": ["tools"],
            "additionalProperties": False,
        },
        kind="local",
    )


#: Bytes of parameter schemas one selectTools or describeTools answer carries (about 8,000 tokens);
#: the tools past it are named, for describeTools to show.
SCHEMAS_BUDGET = 32 * 1024


def tool_schemas(session: Session, names: list[str], budget: int = SCHEMAS_BUDGET) -> tuple[list[dict[str, Any]], list[str]]:
    """Name, description and input schema of each named tool (`Type_*` expands), as MCP lists them, each
    tool once however often it is named, within `budget` bytes; and the tools that did not fit."""
    catalogue = session.catalogue
    wanted: dict[str, None] = {}
    for name in dict.fromkeys(n for n in names if isinstance(n, str)):  # each name, and each glob, expanded once
        for each in catalogue.tools_for_type(name[:-2]) if name.endswith("_*") else [name]:
            tool = catalogue.tool(each) if each in catalogue else session.toolset.get(each)
            if tool is not None and (each in catalogue or tool.kind == "api"):  # a field, or a host's operation
                wanted[each] = None
    out: list[dict[str, Any]] = []
    left: list[str] = []
    used = 0
    for each in wanted:
        if left:
            left.append(each)
            continue
        rendered = render_tool(catalogue.tool(each) if each in catalogue else session.toolset.get(each), "mcp")  # type: ignore[arg-type]
        entry = {k: rendered[k] for k in ("name", "description", "inputSchema")}
        size = len(json.dumps(entry, ensure_ascii=False))
        if out and used + size > budget:
            left.append(each)
            continue
        out.append(entry)
        used += size
    return out, left


def _not_shown(left: list[str]) -> str:
    names = ", ".join(left[:20]) + (f" and {len(left) - 20} more" if len(left) > 20 else "")
    return f"These did not fit in one answer; describeTools shows their schemas: {names}."


#: Built-ins that run the API's tools: open-world, as field tools are.
_REACH_THE_API = frozenset({"callTool", "callChain"})


def mcp_tool(types: Any, tool: Tool) -> Any:
    """A tool as the MCP SDK's `types.Tool`, with the hints a client shows its user."""
    rendered = render_tool(tool, "mcp")
    return types.Tool(
        name=rendered["name"],
        description=rendered["description"],
        input_schema=rendered["inputSchema"],
        annotations=types.ToolAnnotations(
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive if not tool.read_only else None,
            open_world_hint=None if tool.kind == "field" or tool.name in _REACH_THE_API else False,
        ),
    )


def mcp_result(types: Any, result: ToolResult) -> Any:
    """A tool's result as the MCP SDK's `types.CallToolResult`: its text, flagged when it is an error."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=result.content)], is_error=result.is_error)


def _fields_once(listed: list[dict[str, Any]]) -> str:
    """Where several tools answered take `fields`, what it does is said once, in the answer's `next`,
    and not in each schema (the parameter itself stays in each). Each entry's schema is copied, never
    changed in place: the catalogue's tools share theirs."""
    said = FIELDS_SCHEMA["description"]
    taking = [t for t in listed if (t.get("inputSchema") or {}).get("properties", {}).get(FIELDS, {}).get("description") == said]
    if len(taking) < 2:
        return ""
    for tool in taking:
        schema = tool["inputSchema"]
        bare = {k: v for k, v in schema["properties"][FIELDS].items() if k != "description"}
        tool["inputSchema"] = {**schema, "properties": {**schema["properties"], FIELDS: bare}}
    return f" {FIELDS} (in each that takes it): {said}"
