"""One way to run a tool: every tool a model can call is served by a toolset that lists its tools and
calls one. A session composes toolsets; integrations and the MCP server sit on the same protocol.

    Toolset                  list_tools() / get(name) / call_tool(tool, arguments)
    ├── FunctionToolset      tools run by plain (async) functions: meta-tools, host and config tools
    ├── FieldToolset         the catalogue's tools that are active now (session/_fields.py)
    └── CombinedToolset      several toolsets as one; remembers which one owns each tool

A toolset owns its tools' names: no code outside it compares a tool name to decide what to run.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from difflib import get_close_matches
from typing import Any

from .._errors import ToolCallError
from .._tools import Tool

__all__ = ["PENDING", "CombinedToolset", "FunctionToolset", "Handler", "Toolset", "close_names"]

Handler = Callable[[dict[str, Any]], Any | Awaitable[Any]]


class _Pending:
    """The value of a call the client runs itself: its result comes later (seed 001)."""

    def __repr__(self) -> str:
        return "PENDING"


PENDING: Any = _Pending()


class Toolset(ABC):
    """Tools a model can call: what it sees now, and how each one runs."""

    @abstractmethod
    def list_tools(self) -> list[Tool]:
        """The tools the model sees now, in the order it should see them."""

    def get(self, name: str) -> Tool | None:
        """The tool this toolset runs under `name`, listed now or not; None when it has no such tool."""
        return next((tool for tool in self.list_tools() if tool.name == name), None)

    @abstractmethod
    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        """Run `tool` with parsed arguments. Raises ToolCallError for the model's mistakes, and
        returns PENDING for a tool the client runs itself."""

    def unknown(self, name: str) -> str | None:
        """Why this toolset cannot serve `name` although the model might expect it to, if it knows."""
        return None

    def suggest(self, name: str) -> list[str]:
        """Names close to a misspelled `name`."""
        return close_names(name, [tool.name for tool in self.list_tools()])


_Condition = Callable[[], bool] | None


class FunctionToolset(Toolset):
    """Tools run by functions. A tool's definition may be a function too, for descriptions that follow
    the session (selectTools lists the objects held now); `when` hides a tool while it does not apply,
    and `listed` keeps a tool that always runs out of the list while nothing listed points to it."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Tool | Callable[[], Tool], Handler | None, _Condition, _Condition]] = {}

    def add(
        self,
        name: str,
        tool: Tool | Callable[[], Tool],
        handler: Handler | None,
        *,
        when: Callable[[], bool] | None = None,
        listed: Callable[[], bool] | None = None,
    ) -> None:
        """Serve `tool` under `name` by `handler`; no handler means the client runs it (PENDING)."""
        self._entries[name] = (tool, handler, when, listed)

    def __contains__(self, name: object) -> bool:
        return name in self._entries and self._applies(str(name))

    def names(self) -> list[str]:
        return [name for name in self._entries if self._applies(name)]

    def _applies(self, name: str) -> bool:
        when = self._entries[name][2]
        return when is None or when()

    def _listed(self, name: str) -> bool:
        listed = self._entries[name][3]
        return listed is None or listed()

    def list_tools(self) -> list[Tool]:
        return [self._tool(name) for name in self.names() if self._listed(name)]

    def get(self, name: str) -> Tool | None:
        return self._tool(name) if name in self else None

    def _tool(self, name: str) -> Tool:
        tool = self._entries[name][0]
        return tool if isinstance(tool, Tool) else tool()

    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        handler = self._entries[tool.name][1]
        if handler is None:
            return PENDING
        try:
            value = handler(arguments)
            if inspect.isawaitable(value):
                value = await value
        except ToolCallError:
            raise
        except Exception as error:  # a function's failure is something the model should see and route around
            raise ToolCallError(f"{tool.name} failed: {error}") from error
        return value

    def suggest(self, name: str) -> list[str]:
        return close_names(name, self.names())


class CombinedToolset(Toolset):
    """Several toolsets as one. The first toolset that has a name owns it."""

    def __init__(self, toolsets: Sequence[Toolset]) -> None:
        self.toolsets = list(toolsets)

    def list_tools(self) -> list[Tool]:
        return [tool for toolset in self.toolsets for tool in toolset.list_tools()]

    def owner(self, name: str) -> tuple[Toolset, Tool] | None:
        for toolset in self.toolsets:
            tool = toolset.get(name)
            if tool is not None:
                inner = toolset.owner(name) if isinstance(toolset, CombinedToolset) else None
                return inner or (toolset, tool)
        return None

    def get(self, name: str) -> Tool | None:
        found = self.owner(name)
        return found[1] if found else None

    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        found = self.owner(tool.name)
        if found is None:
            raise ToolCallError(self.unknown(tool.name))
        return await found[0].call_tool(found[1], arguments)

    def unknown(self, name: str) -> str:
        for toolset in self.toolsets:
            reason = toolset.unknown(name)
            if reason:
                return reason
        close = self.suggest(name)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        return f"There is no tool {name}.{hint} selectTools lists the tools you can select."

    def suggest(self, name: str) -> list[str]:
        found = [close for toolset in self.toolsets for close in toolset.suggest(name)]
        return list(dict.fromkeys(found))[:3]


def close_names(name: str, pool: Sequence[str], limit: int = 3) -> list[str]:
    """Names in `pool` close to `name`, ignoring case."""
    lowered = {n.lower(): n for n in pool}
    return [lowered[f] for f in get_close_matches(name.lower(), list(lowered), n=limit, cutoff=0.6)]
