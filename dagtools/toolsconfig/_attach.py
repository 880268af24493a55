"""Adding the tools of a tools config to a session: api tools run here, local tools by the host's
callables, client tools come back pending for the client to run (seed 001).

Context fields never reach the model: they are cut from the schema it sees, a call that sets one is
refused before anything is sent, and the host's value is filled in just before the tool runs. The
`context` mapping is read at call time, so a host may change a value between turns.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._closing import AsyncClosing
from .._errors import ConfigError, ToolCallError
from .._tools import Tool
from ._apis import ApiTarget, ConfigApis
from ._format import ConfigSource, ToolEntry, ToolsConfig, context_values, load_tools_config

if TYPE_CHECKING:
    from ..session._session import Session

__all__ = ["AttachedTools", "attach_tools_config", "entry_tool"]

Handler = Callable[[dict[str, Any]], Any | Awaitable[Any]]


@dataclass(frozen=True, kw_only=True)
class AttachedTools(AsyncClosing):
    """What `attach_tools_config` added, and the APIs it runs them against (close them when done)."""

    config: ToolsConfig
    tools: tuple[Tool, ...]
    apis: ConfigApis

    async def aclose(self) -> None:
        await self.apis.aclose()


def entry_tool(entry: ToolEntry) -> Tool:
    """The tool a model sees for one entry: its name, description and parameters without context."""
    return Tool(name=entry.name, description=entry.description, parameters=entry.model_parameters, kind=entry.type, read_only=False)


def attach_tools_config(
    session: Session,
    config: ConfigSource,
    *,
    executors: Mapping[str, ApiTarget] | None = None,
    context: Mapping[str, Any] | None = None,
    handlers: Mapping[str, Handler] | None = None,
) -> AttachedTools:
    """Add every tool of `config` (not the Internal ones) to `session` with `session.add_tool`.

    `executors` maps each `api.name` to an executor, a `RestApi` or a URL; `default` falls back to
    the session's own executor. `handlers` gives the callable of every local tool. Raises
    ConfigError for anything missing, before any tool is added.
    """
    loaded = load_tools_config(config)
    apis = ConfigApis(executors, default=session.executor)
    context = {} if context is None else context
    handlers = dict(handlers or {})
    stray = [name for name in handlers if name not in {e.name for e in loaded if e.type == "local"}]
    if stray:
        raise ConfigError(f"Handlers given for {', '.join(stray)}, which are not local tools of the config.")
    prepared: list[tuple[Tool, Handler | None]] = []
    for entry in loaded:
        context_values(entry, context)
        if entry.type == "api":
            apis.check(entry)
        if entry.type == "local" and entry.name not in handlers:
            raise ConfigError(f"Local tool {entry.name!r} needs a callable: attach_tools_config(..., handlers={{{entry.name!r}: fn}}).")
        tool = entry_tool(entry)
        handler = None if entry.type == "client" else _handler(entry, apis, context, handlers.get(entry.name))
        prepared.append((tool, handler))
    taken = [tool.name for tool, _ in prepared if tool.name in session.catalogue or tool.name in session.extra_tools]
    if taken:
        raise ConfigError(f"The session has tools named {', '.join(taken)} already; rename them in the config.")
    for tool, handler in prepared:
        session.add_tool(tool, handler)
    return AttachedTools(config=loaded, tools=tuple(tool for tool, _ in prepared), apis=apis)


def _handler(entry: ToolEntry, apis: ConfigApis, context: Mapping[str, Any], local: Handler | None) -> Handler:
    async def run(arguments: dict[str, Any]) -> Any:
        complete = _complete(entry, arguments, context)
        if local is not None:
            value = local(complete)
            return await value if inspect.isawaitable(value) else value
        return {"result": await apis.run(entry, complete)}

    return run


def _complete(entry: ToolEntry, arguments: dict[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """The model's arguments checked, with the host's context values filled in."""
    set_by_model = [c for c in entry.context if c in arguments]
    if set_by_model:
        raise ToolCallError(f"{entry.name}: {', '.join(set_by_model)} is set by the host, not by you; call {entry.name} again without it.")
    properties = entry.model_parameters.get("properties", {})
    if entry.type == "api":
        unknown = [k for k in arguments if k not in properties]
        if unknown:
            shown = ", ".join(properties) or "no parameters"
            raise ToolCallError(f"{entry.name} has no parameter {', '.join(unknown)}; it takes {shown}.")
    missing = [r for r in entry.model_parameters.get("required", ()) if arguments.get(r) is None]
    if missing:
        raise ToolCallError(f"{entry.name} needs {', '.join(missing)}.")
    absent = [c for c in entry.context if c not in context]
    if absent:
        raise ToolCallError(
            f"{entry.name} cannot run here: the host has not set {', '.join(absent)}. Tell the user; there is nothing to retry."
        )
    return {**arguments, **{c: context[c] for c in entry.context}}
