"""One way to run a tool: every tool a model can call is served by a toolset that lists its tools and
calls one. A session composes toolsets; integrations and the MCP server sit on the same protocol.

    Toolset                  list_tools() / find(name) / call_tool(tool, arguments) / version()
    ├── FunctionToolset      tools run by plain (async) functions: meta-tools, host and config tools
    ├── BatchingToolset      can also run several of one turn's calls together (call_batch)
    │   └── FieldToolset     the catalogue's tools that are active now (session/_fields.py)
    └── CombinedToolset      several toolsets as one; `find` names the one that owns each tool

A toolset owns its tools' names: no code outside it compares a tool name to decide what to run.
`find(name)` resolves a name once to an `OwnedTool`, the tool with the toolset that runs it (for a
combined toolset, the innermost one), and every call goes through that owner's `call_tool`, or its
`call_batch` for a turn's calls that it can run together.

A function's exception says who is at fault: `ToolCallError` is the model's mistake (a host's tool
raises it to tell the model what to fix) and becomes an error result; an `ExecutorError` is an API the
model can only wait for or route around, and becomes one too; anything else is a bug in the code
behind the tool. That is logged with its traceback and raised to the host, never passed off as the
model's mistake (as pydantic-ai lets any exception but `ModelRetry` through).
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Hashable, Sequence
from difflib import get_close_matches
from typing import Any, NamedTuple

from .._errors import ExecutorError, ToolCallError
from .._tools import Tool

__all__ = [
    "PENDING",
    "BatchingToolset",
    "CombinedToolset",
    "FunctionToolset",
    "Handler",
    "OwnedTool",
    "Toolset",
    "close_names",
    "no_such_tool",
]

logger = logging.getLogger("dagtools")
#: Marks an exception from a tool's function once it is logged.
_LOGGED = "_dagtools_logged"

Handler = Callable[[dict[str, Any]], Any | Awaitable[Any]]


class _Pending:
    """The value of a call the client runs itself: its result comes later (seed 001)."""

    def __repr__(self) -> str:
        return "PENDING"


PENDING: Any = _Pending()


class OwnedTool(NamedTuple):
    """A tool and the toolset that runs it, resolved once by `Toolset.find`: a call goes to
    `owner.call_tool(tool, ...)` without the name being looked up again. (A named tuple: one is made
    for every call, and a tuple is the cheapest value to make.)"""

    tool: Tool
    owner: Toolset


class Toolset(ABC):
    """Tools a model can call: what it sees now, and how each one runs."""

    @abstractmethod
    def list_tools(self) -> list[Tool]:
        """The tools the model sees now, in the order it should see them."""

    def get(self, name: str) -> Tool | None:
        """The tool this toolset runs under `name`, listed now or not; None when it has no such tool."""
        return next((tool for tool in self.list_tools() if tool.name == name), None)

    def find(self, name: str) -> OwnedTool | None:
        """The tool named `name` with the toolset that runs it, or None when no toolset here has it."""
        tool = self.get(name)
        return OwnedTool(tool, self) if tool is not None else None

    @abstractmethod
    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        """Run `tool` with parsed arguments. Raises ToolCallError for the model's mistakes, and
        returns PENDING for a tool the client runs itself."""

    def version(self) -> Hashable:
        """A value that changes whenever `list_tools` would list other names (an MCP client is told
        then). This default lists the tools; a toolset that knows better says so more cheaply."""
        return tuple(tool.name for tool in self.list_tools())

    def unknown(self, name: str) -> str | None:
        """Why this toolset cannot serve `name` although the model might expect it to, if it knows."""
        return None

    def suggest(self, name: str) -> list[str]:
        """Names close to a misspelled `name`."""
        return close_names(name, [tool.name for tool in self.list_tools()])


class BatchingToolset(Toolset):
    """A toolset that can run several calls of one turn together (the field toolset sends a turn's
    reads as one request). The turn runner asks `batchable` of each call this toolset owns: a run of
    consecutive batchable calls goes to `call_batch` at once, any other call runs alone through
    `call_tool`, in the order the model made them. A host's toolset may offer it too."""

    @abstractmethod
    def batchable(self, tool: Tool) -> bool:
        """Whether a call of `tool` may run together with the calls around it."""

    @abstractmethod
    async def call_batch(self, calls: Sequence[tuple[Tool, dict[str, Any]]]) -> list[Any]:
        """Run the calls as running them one by one would, and give each its value or, for the
        model's mistake, its ToolCallError (returned, not raised: the others still ran)."""


_Condition = Callable[[], bool] | None


class FunctionToolset(Toolset):
    """Tools run by functions. A tool's definition may be a function too, for descriptions that follow
    the session (selectTools lists the objects held now); `when` hides a tool while it does not apply,
    and `listed` keeps a tool that always runs out of the list while nothing listed points to it."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Tool | Callable[[], Tool], Handler | None, _Condition, _Condition]] = {}
        self._absent: dict[str, str] = {}

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

    def absent(self, name: str, reason: str) -> None:
        """Say `reason` when `name`, a tool this toolset does not serve here, is called."""
        self._absent[name] = reason

    def unknown(self, name: str) -> str | None:
        return None if name in self else self._absent.get(name)

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
        except ExecutorError as error:  # the API behind the tool is down: the model can wait or route around it
            raise ToolCallError(error.failed_call(tool.name)) from error
        except Exception as error:
            # The code behind the tool failed: the host's bug, not the model's mistake. Logged here with its
            # traceback (an MCP server or a framework may report only the message), and raised to the host.
            if not getattr(error, _LOGGED, False):  # once, though a tool that runs another passes it on
                logger.exception("The tool %s raised; that is a bug in the code behind it, not a mistake of the model's.", tool.name)
                try:
                    setattr(error, _LOGGED, True)
                except AttributeError:  # an exception that takes no attributes is logged again, at worst
                    pass
            raise
        return value

    def version(self) -> Hashable:
        return tuple(name for name in self.names() if self._listed(name))

    def suggest(self, name: str) -> list[str]:
        return close_names(name, self.names())


class CombinedToolset(Toolset):
    """Several toolsets as one. The first toolset that has a name owns it."""

    def __init__(self, toolsets: Sequence[Toolset]) -> None:
        self.toolsets = list(toolsets)

    def list_tools(self) -> list[Tool]:
        return [tool for toolset in self.toolsets for tool in toolset.list_tools()]

    def find(self, name: str) -> OwnedTool | None:
        for toolset in self.toolsets:
            found = toolset.find(name)  # a combined toolset inside names its own innermost owner
            if found is not None:
                return found
        return None

    def get(self, name: str) -> Tool | None:
        found = self.find(name)
        return found.tool if found else None

    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        """For a caller holding only a `Tool`; the session calls the owner `find` gave it instead."""
        found = self.find(tool.name)
        if found is None:
            raise ToolCallError(self.unknown(tool.name))
        return await found.owner.call_tool(found.tool, arguments)

    def version(self) -> Hashable:
        return tuple((id(toolset), toolset.version()) for toolset in self.toolsets)

    def unknown(self, name: str) -> str:
        for toolset in self.toolsets:
            reason = toolset.unknown(name)
            if reason:
                return reason
        return no_such_tool(name, self.suggest(name))

    def suggest(self, name: str) -> list[str]:
        found = [close for toolset in self.toolsets for close in toolset.suggest(name)]
        return list(dict.fromkeys(found))[:3]


def no_such_tool(name: str, close: Sequence[str]) -> str:
    """What the model is told of a name no toolset has."""
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return f"There is no tool {name}.{hint} selectTools lists the tools you can select."


def close_names(name: str, pool: Sequence[str], limit: int = 3) -> list[str]:
    """Names in `pool` close to `name`, ignoring case."""
    lowered = {n.lower(): n for n in pool}
    return [lowered[f] for f in get_close_matches(name.lower(), list(lowered), n=limit, cutoff=0.6)]
