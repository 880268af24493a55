"""A session: registry, active toolset, inputs, declared outputs and the conversation context.

Every tool runs through one road: the session composes toolsets (the meta-tools, the catalogue's
fields, the host's own tools) and runs each model turn with `run_turn`, which sends every call to
the toolset that owns it. `call_tools` records the turn in the context (seed 001); `execute_tools`
does not. Nothing the model did raises: mistakes come back as error results, and a failed call
leaves registry, toolset and outputs as they were. A host tool's bug raises (see `_toolsets`).

A session is an async context manager: it closes what was opened for it (the executor and store
`open_session` made) and nothing it was given, every closer even when one fails (an exit stack).
Once closed it refuses every use with `ClosedError`; what it holds (outputs, state, objects) stays
readable.

A session opened with a store (`open_session(..., store=..., key=...)`) has a `keeper`: each turn
then runs on the latest stored state and is saved before its results are returned.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from copy import copy
from dataclasses import replace
from typing import Any, TypeVar

import anyio
from graphql import get_named_type, is_composite_type

from .._closing import AsyncClosing
from .._errors import ConfigError, ToolCallError
from .._tools import Tool, ToolCall, ToolResult
from .._values import json_size
from ..calls._chains import parse_chain
from ..calls._field import PreparedCall
from ..catalogue._catalogue import Catalogue, is_list
from ..catalogue._describe import DESCRIBE_TOOLS
from ..executors._base import Executor
from ..registry._long_values import LongValues
from ..registry._registry import ObjectEntry, Registry
from ._chain_tool import add_call_chain
from ._context import Context, Message
from ._deferred_tools import DeferredTools, deferred_tools
from ._fields import FieldToolset
from ._metatools import (
    READ_RESULT,
    SAVE,
    SELECT_TOOLS,
    ValueInput,
    add_describe_tools,
    add_save,
    only,
    read_result_tool,
    select_tools,
    select_tools_tool,
)
from ._operations import OperationToolset, operation_toolset
from ._options import SessionOptions
from ._outputs import Output, OutputSpec, check_outputs, normalize_outputs
from ._persistence import SessionKeeper
from ._state import SessionState, pending_calls, restore_state
from ._toolsets import CombinedToolset, FunctionToolset, Handler, Toolset
from ._turn import run_turn

__all__ = ["Session"]

logger = logging.getLogger("dagtools")
_MISSING: Any = object()
T = TypeVar("T")


class Session(AsyncClosing):
    """One model's view of one API."""

    def __init__(
        self,
        catalogue: Catalogue,
        executor: Executor,
        *,
        outputs: Mapping[str, OutputSpec] | Iterable[Output] | None = None,
        options: SessionOptions | None = None,
        **flat_options: Any,
    ) -> None:
        self.options = options = SessionOptions.of(options, **flat_options)
        self.catalogue = catalogue
        self.registry = Registry()
        self.context = Context()
        self.values: list[ValueInput] = []
        self.outputs: list[Output] = normalize_outputs(outputs)
        self.saved: dict[str, Any] = {}
        self.done = False
        self.warnings: tuple[str, ...] = ()  # what loading the schema tolerated, for hosts to show
        self.long_values = LongValues(options.result_budget)
        self.fields = FieldToolset(catalogue, self.registry, executor, self.long_values, cap=options.max_active_tools)
        self.meta = self._meta_toolset()
        self.host = FunctionToolset()
        self.toolset = CombinedToolset([self.meta, self.fields, self.host])
        if options.operations is not None:  # found by selectTools and its search, listed once selected
            self.toolset.toolsets.append(operation_toolset(self, str(options.operations)))
        self._pending: dict[str, ToolCall] = {}
        self._calls = 0
        #: Bytes of the arguments and results its calls have added to the context: what the session
        #: grew by, counted in the turn (and saved with it), so a host can cap it (`max_session_bytes`).
        self.held_bytes = 0
        self._select_cache: tuple[tuple[int, int], Tool] | None = None
        self._closers = AsyncExitStack()
        self.keeper: SessionKeeper | None = None  # set by open_session when the session lives in a store

    @property
    def executor(self) -> Executor:
        """Where this session's field calls go (set it to send them elsewhere)."""
        return self.fields.calls.executor

    @executor.setter
    def executor(self, executor: Executor) -> None:
        self.fields.calls.executor = executor

    # -- lifetime ------------------------------------------------------------------------------------

    def close_with(self, close: Callable[[], Awaitable[Any]]) -> None:
        """Run `close` when the session closes (the last given first): for what was opened for this session alone."""
        self._check_open()
        self._closers.push_async_callback(close)

    async def aclose(self) -> None:
        """Close what was opened for this session (once); using it afterwards is an error. Every
        closer runs even when one before it raises; the last error is raised once all have run."""
        if self.closed:
            return
        self.closed = True
        try:
            await self._closers.aclose()
        finally:
            logger.debug("session closed: %d objects, %d calls", len(self.registry), self._calls)

    def _closed_message(self) -> str:
        return "This session is closed; open a new one with open_session (or Session(...)) to go on."

    async def _in_turn(self, action: Callable[[], Awaitable[T]]) -> T:
        """Run `action` on an open session; with a store, as one turn on the latest stored state, saved after."""
        self._check_open()
        return await (self.keeper.run(self, action) if self.keeper is not None else action())

    # -- host side: inputs, tools, state -------------------------------------------------------------

    async def add_input(self, name: str, *, field: str | None = None, value: Any = _MISSING, description: str = "") -> ObjectEntry | None:
        """Give the model an object (a root-field chain such as `repository(owner: "a", name: "b")`)
        or a plain value, before it starts."""
        return await self._in_turn(lambda: self._add_input(name, field=field, value=value, description=description))

    async def _add_input(self, name: str, *, field: str | None = None, value: Any = _MISSING, description: str = "") -> ObjectEntry | None:
        if (field is None) == (value is _MISSING):
            raise ConfigError(f"Input {name!r}: give either a field chain or a value.")
        if field is None:
            self.values.append(ValueInput(name=name, value=value, description=description))
            return None
        steps, field_type = parse_chain(self.catalogue, field)
        if not is_composite_type(get_named_type(field_type)) or is_list(field_type):
            raise ConfigError(
                f"Input {name!r}: {field} gives {field_type}, not one object. "
                "Give a plain value with `value`, or a chain that ends on an object."
            )
        try:
            payload = await self.fields.calls.run(PreparedCall(steps, "query", field.strip(), field_type), description=description or name)
        except ToolCallError as error:
            raise ConfigError(f"Input {name!r} ({field}) could not be loaded: {error}") from None
        return self.registry.get(payload["result"])

    def add_tool(self, tool: Tool, handler: Handler | None = None) -> None:
        """Add a tool that is not a schema field: run here by `handler`, or by the client when None."""
        self._check_open()
        if tool.name in _META_NAMES or self.toolset.get(tool.name) is not None:
            raise ConfigError(f"A tool named {tool.name!r} exists already.")
        self.host.add(tool.name, replace(tool, kind="local" if handler else "client"), handler)

    def add_toolset(self, toolset: Toolset) -> None:
        """Serve every tool of `toolset` too (listed as it lists them, after the session's own)."""
        self._check_open()
        taken = [t.name for t in toolset.list_tools() if t.name in _META_NAMES or self.toolset.get(t.name) is not None]
        if taken:
            raise ConfigError(f"The session has tools named {', '.join(taken)} already.")
        self.toolset.toolsets.append(toolset)

    def select(self, names: Iterable[str]) -> None:
        """Activate tools on the host's behalf, as if the model had selected them."""
        self._check_open()
        try:
            self._select_names(list(names))
        except ToolCallError as error:
            raise ConfigError(str(error)) from None

    @property
    def active_tools(self) -> list[str]:
        return list(self.fields.active)

    @property
    def extra_tools(self) -> dict[str, Tool]:
        """Tools added with `add_tool`: run locally, or by the client."""
        return {tool.name: tool for tool in self.host.list_tools()}

    def tools(self) -> list[Tool]:
        """The toolset the model sees now: selectTools, save, readResult, the active and extra tools."""
        self._check_open()
        return self.toolset.list_tools()

    def render_tools(self, format: str = "openai") -> list[dict[str, Any]]:
        from ..catalogue._render import render_tools

        return render_tools(self.tools(), format)

    def deferred_tools(self, **options: Any) -> DeferredTools:
        """The constant tool list for providers that reveal tools in place (see session._deferred_tools)."""
        self._check_open()
        return deferred_tools(self, **options)

    def object(self, object_id: str) -> ObjectEntry:
        entry = self.registry.get(object_id)
        if entry is None:
            raise ConfigError(f"This session has no object {object_id}.")
        return entry

    @property
    def missing_outputs(self) -> list[str]:
        return [o.name for o in self.outputs if o.name not in self.saved]

    def state(self) -> SessionState:
        """What this session holds, as plain data a store can keep."""
        return SessionState.of(self)

    @property
    def key(self) -> str | None:
        """The key this session is kept under in its store (None without a store)."""
        return self.keeper.key if self.keeper is not None else None

    def restore(self, state: SessionState, *, keep: Sequence[Message] = (), whole: bool = True) -> None:
        """Hold exactly `state`, taken from a session on the same schema: IDs keep their meaning and
        later mints continue their numbering. Host tools are not state: add them again. `keep`:
        messages to append after the restored context (and the client results among them). Without
        `whole`, the registry and context are taken as up to date (see `restore_state`)."""
        self._check_open()
        outputs = list(self.outputs)
        restore_state(self, state, whole=whole)
        self._calls = state.calls
        self._pending = pending_calls(state)
        self.context.messages.extend(keep)
        for message in keep:
            if message.role == "tool" and message.tool_call_id:
                self._pending.pop(message.tool_call_id, None)
        if self.outputs != outputs:  # the save tool is typed by the outputs
            self.toolset.toolsets[self.toolset.toolsets.index(self.meta)] = self.meta = self._meta_toolset()
        self._select_cache = None

    async def catch_up(self) -> None:
        """Hold what the store holds now, when another process may have moved the session on (a tool
        list read between calls); calls catch up by themselves. Without a store, nothing to do."""
        self._check_open()
        if self.keeper is not None:
            await self.keeper.catch_up(self)

    async def checkpoint(self) -> None:
        """Store what the host changed between calls (`select`, `tool_call_result`); calls store theirs."""
        self._check_open()
        if self.keeper is not None:
            await self.keeper.save(self)

    # -- running calls -------------------------------------------------------------------------------

    async def call_tool(self, call: ToolCall, *, select: bool = False) -> ToolResult:
        """Run a call and record it and its result in the context. A client tool's result is left
        pending until the caller reports it with `tool_call_result`.

        With `select`, a catalogue tool that is not selected yet is selected for this call, saving
        the model a `selectTools` round trip; it stays selected when the call succeeds (the result's
        `selected` says so), and a call that fails selects nothing."""
        if not select:
            return (await self._in_turn(lambda: self._call_tools([call])))[0]
        return await self._in_turn(lambda: self._call_selecting(call))  # selecting and running are one turn

    async def _call_selecting(self, call: ToolCall) -> ToolResult:
        if call.name in self.fields.active or self.fields.get(call.name) is None:  # as the store holds it now
            return (await self._call_tools([call]))[0]
        before = copy(self.fields.active)
        try:
            answer = self._select_names([call.name])
        except ToolCallError as error:
            return ToolResult.error(self._with_id(call), str(error))
        result = (await self._call_tools([call]))[0]
        if result.is_error or not isinstance(result.value, dict):
            self.fields.active = before
            return result
        note = f"{call.name} was not selected yet, so this call selected it; it stays selected."
        if answer != "ok":  # the cap made room by dropping the least recently used tools
            note += " " + answer.removeprefix("ok. ")
        return replace(result, value={**result.value, "selected": note})

    async def call_tools(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run one model turn and record it in the context: reads share one request, writes run in
        order (see `dagtools.session._turn` for the ordering rules). Client tools are left pending."""
        return await self._in_turn(lambda: self._call_tools(calls))

    async def _call_tools(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        calls = [self._with_id(c) for c in calls]
        results = await run_turn(self.toolset, calls)  # recorded once it ran: a host tool's bug raises, leaving no call unanswered
        new = tuple(c for c in calls if not self.context.has_call(c.id))
        if new:
            self.context.add_assistant(tool_calls=new)
        for call, result in zip(calls, results):
            self.held_bytes += _size(call.arguments)
            if result.pending:
                self._pending[call.id] = call
            else:
                self.context.add_result(result)
                self.held_bytes += len(result.content.encode(errors="replace"))
        return results

    async def execute_tools(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """`call_tools` without touching the context."""
        return await self._in_turn(lambda: run_turn(self.toolset, [self._with_id(c) for c in calls]))

    async def execute(self, call: ToolCall) -> ToolResult:
        """Run one call without touching the context: the nothing-fancy path of seed 001."""
        return (await self.execute_tools([call]))[0]

    def tool_call_result(self, call_id: str, result: Any) -> ToolResult:
        """Report the result of a tool the client ran; it is recorded in the context."""
        self._check_open()
        call = self._pending.pop(call_id, None)
        if call is None:
            pending = ", ".join(self._pending) or "none"
            raise ConfigError(f"No client tool call {call_id!r} is waiting for a result (waiting: {pending}).")
        if not isinstance(result, ToolResult):
            result = ToolResult(call_id=call_id, name=call.name, value=result)
        self.context.add_result(result)
        return result

    def _with_id(self, call: ToolCall) -> ToolCall:
        if call.id:
            return call
        self._calls += 1
        return ToolCall(name=call.name, arguments=call.arguments, id=f"call_{self._calls}")

    # -- meta-tools ----------------------------------------------------------------------------------

    def _meta_toolset(self) -> FunctionToolset:
        meta = FunctionToolset()
        meta.add(SELECT_TOOLS, self._select_tools_tool, lambda arguments: select_tools(self, arguments))
        add_save(meta, self.catalogue, self.outputs, self._save)
        meta.add(READ_RESULT, read_result_tool(), self._read_result, when=lambda: bool(self.long_values))
        add_describe_tools(meta, self.catalogue, lambda: self.fields.active)
        add_call_chain(meta, self.catalogue, self.fields.calls)
        return meta

    def _select_tools_tool(self) -> Tool:
        key = (len(self.registry), len(self.values))
        if self._select_cache is None or self._select_cache[0] != key:
            tool = select_tools_tool(self.catalogue, self.registry, self.values, budget_tokens=self.options.tools_budget)
            self._select_cache = (key, tool)
        return self._select_cache[1]

    def _select_names(self, names: list[str], *, partial: bool = False) -> str:
        for toolset in self.toolset.toolsets:  # operations keep their own selection
            names = [n for n in names if not toolset.claim(n)] if isinstance(toolset, OperationToolset) else names
        others = [t.name for toolset in self.toolset.toolsets if toolset is not self.fields for t in toolset.list_tools()]
        return self.fields.active.select(names, ignore=[*_META_NAMES, *others], partial=partial)

    def _save(self, arguments: dict[str, Any]) -> str:
        self.saved = check_outputs(self.catalogue, self.registry, self.outputs, arguments)
        self.done = True
        shown = ", ".join(f"{k} = {v}" for k, v in self.saved.items())
        return f"Saved {shown}. The outputs are with the user now."

    def _read_result(self, arguments: dict[str, Any]) -> Any:
        only(arguments, {"ref", "offset"}, READ_RESULT)
        return self.long_values.read(str(arguments.get("ref", "")), arguments.get("offset", 0))

    # -- sync wrappers for scripts and notebooks -------------------------------------------------------

    def call_tools_sync(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        return anyio.run(self.call_tools, calls)

    def call_tool_sync(self, call: ToolCall) -> ToolResult:
        return anyio.run(self.call_tool, call)

    def execute_sync(self, call: ToolCall) -> ToolResult:
        return anyio.run(self.execute, call)

    def add_input_sync(self, name: str, **options: Any) -> ObjectEntry | None:
        return anyio.run(lambda: self.add_input(name, **options))


#: Names the meta-tools hold whether or not they apply now (save without outputs, readResult before a cut).
_META_NAMES = (SELECT_TOOLS, SAVE, READ_RESULT, DESCRIBE_TOOLS)


def _size(arguments: Mapping[str, Any] | str) -> int:
    """Bytes of a call's arguments as the context keeps them (JSON, or the raw text a model produced)."""
    return len(arguments.encode(errors="replace")) if isinstance(arguments, str) else json_size(arguments)
