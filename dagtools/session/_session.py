"""A session: registry, active toolset, inputs, declared outputs and the conversation context.

`execute` runs one call and returns its result; `call_tool` also records the call and its result
in the context (seed 001). Neither raises for anything the model did: those come back as error
results, and a failed call leaves registry, toolset and outputs as they were.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import anyio
from graphql import get_named_type, is_composite_type

from .._errors import ConfigError, ToolCallError
from .._tools import Tool, ToolCall, ToolResult
from ..calls._arguments import parse_arguments
from ..calls._batch import run_turn
from ..calls._chains import parse_chain
from ..calls._field import FieldCalls, PreparedCall
from ..catalogue._catalogue import Catalogue, is_list
from ..executors._base import Executor
from ._active import ActiveToolset
from ._context import Context
from ._long_values import LongValues
from ._metatools import READ_RESULT, SAVE, SELECT_TOOLS, ValueInput, read_result_tool, save_tool, select_tools_tool
from ._outputs import Output, OutputSpec, check_outputs, normalize_outputs
from ._registry import ObjectEntry, Registry

__all__ = ["Session"]

LocalHandler = Callable[[dict[str, Any]], Any | Awaitable[Any]]
_MISSING: Any = object()
_PENDING: Any = object()


class Session:
    """One model's view of one API."""

    def __init__(
        self,
        catalogue: Catalogue,
        executor: Executor,
        *,
        outputs: Mapping[str, OutputSpec] | Iterable[Output] | None = None,
        max_active_tools: int = 64,
        result_budget: int = 4000,
        tools_budget: int = 1500,
    ) -> None:
        self.catalogue = catalogue
        self.executor = executor
        self.registry = Registry()
        self.context = Context()
        self.values: list[ValueInput] = []
        self.outputs: list[Output] = normalize_outputs(outputs)
        self.saved: dict[str, Any] = {}
        self.done = False
        self.warnings: tuple[str, ...] = ()  # what loading the schema tolerated, for hosts to show
        self.toolset = ActiveToolset(catalogue, max_active_tools)
        self.tools_budget = tools_budget
        self.long_values = LongValues(result_budget)
        self.fields = FieldCalls(catalogue, self.registry, executor, self.long_values)
        self._save_tool = save_tool(catalogue, self.outputs) if self.outputs else None
        self._extra: dict[str, tuple[Tool, LocalHandler | None]] = {}
        self._pending: dict[str, ToolCall] = {}
        self._calls = 0
        self._select_cache: tuple[tuple[int, int], Tool] | None = None

    # -- host side: inputs, tools, state -------------------------------------------------------------

    async def add_input(self, name: str, *, field: str | None = None, value: Any = _MISSING, description: str = "") -> ObjectEntry | None:
        """Give the model an object (a root-field chain such as `repository(owner: "a", name: "b")`)
        or a plain value, before it starts."""
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
            payload = await self.fields.run(PreparedCall(steps, "query", field.strip(), field_type), description=description or name)
        except ToolCallError as error:
            raise ConfigError(f"Input {name!r} ({field}) could not be loaded: {error}") from None
        return self.registry.get(payload["result"])

    def add_tool(self, tool: Tool, handler: LocalHandler | None = None) -> None:
        """Add a tool that is not a schema field: run here by `handler`, or by the client when None."""
        if tool.name in self.catalogue or tool.name in (SELECT_TOOLS, SAVE, READ_RESULT):
            raise ConfigError(f"A tool named {tool.name!r} exists already.")
        self._extra[tool.name] = (replace(tool, kind="local" if handler else "client"), handler)

    def select(self, names: Iterable[str]) -> None:
        """Activate tools on the host's behalf, as if the model had selected them."""
        try:
            self.toolset.select(names, ignore=[SELECT_TOOLS, SAVE, READ_RESULT, *self._extra])
        except ToolCallError as error:
            raise ConfigError(str(error)) from None

    @property
    def active_tools(self) -> list[str]:
        return list(self.toolset)

    @property
    def extra_tools(self) -> dict[str, Tool]:
        """Tools added with `add_tool`: run locally, or by the client."""
        return {name: tool for name, (tool, _) in self._extra.items()}

    def tools(self) -> list[Tool]:
        """The toolset the model sees now: selectTools, save, readResult, the active and extra tools."""
        out = [self._select_tools()]
        if self._save_tool is not None:
            out.append(self._save_tool)
        if self.long_values:
            out.append(read_result_tool())
        out += self.catalogue.tools(self.toolset)
        out += [tool for tool, _ in self._extra.values()]
        return out

    def render_tools(self, format: str = "openai") -> list[dict[str, Any]]:
        from ..catalogue._render import render_tools

        return render_tools(self.tools(), format)

    def object(self, object_id: str) -> ObjectEntry:
        entry = self.registry.get(object_id)
        if entry is None:
            raise ConfigError(f"This session has no object {object_id}.")
        return entry

    @property
    def missing_outputs(self) -> list[str]:
        return [o.name for o in self.outputs if o.name not in self.saved]

    # -- running calls -------------------------------------------------------------------------------

    async def call_tool(self, call: ToolCall) -> ToolResult:
        """Run a call and record it and its result in the context. A client tool's result is left
        pending until the caller reports it with `tool_call_result`."""
        return (await self.call_tools([call]))[0]

    async def call_tools(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run one model turn and record it in the context: reads share one request, writes run in
        order (see `dagtools.turns` for the ordering rules). Client tools are left pending."""
        calls = [self._with_id(c) for c in calls]
        new = tuple(c for c in calls if not self.context.has_call(c.id))
        if new:
            self.context.add_assistant(tool_calls=new)
        results = await run_turn(self, calls)
        for call, result in zip(calls, results):
            if result.pending:
                self._pending[call.id] = call
            else:
                self.context.add_result(result)
        return results

    async def execute_tools(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """`call_tools` without touching the context."""
        return await run_turn(self, [self._with_id(c) for c in calls])

    def tool_call_result(self, call_id: str, result: Any) -> ToolResult:
        """Report the result of a tool the client ran; it is recorded in the context."""
        call = self._pending.pop(call_id, None)
        if call is None:
            pending = ", ".join(self._pending) or "none"
            raise ConfigError(f"No client tool call {call_id!r} is waiting for a result (waiting: {pending}).")
        if not isinstance(result, ToolResult):
            result = ToolResult(call_id=call_id, name=call.name, value=result)
        self.context.add_result(result)
        return result

    async def execute(self, call: ToolCall) -> ToolResult:
        """Run one call without touching the context: the nothing-fancy path of seed 001."""
        call = self._with_id(call)
        try:
            value = await self._dispatch(call)
        except ToolCallError as error:
            return ToolResult(call_id=call.id, name=call.name, value={"error": str(error)}, is_error=True)
        if value is _PENDING:
            return ToolResult(call_id=call.id, name=call.name, value=None, pending=True)
        return ToolResult(call_id=call.id, name=call.name, value=value)

    def _with_id(self, call: ToolCall) -> ToolCall:
        if call.id:
            return call
        self._calls += 1
        return replace(call, id=f"call_{self._calls}")

    async def _dispatch(self, call: ToolCall) -> Any:
        arguments = parse_arguments(call.name, call.arguments)
        name = call.name
        if name == SELECT_TOOLS:
            return self._select(arguments)
        if name == SAVE and self._save_tool is not None:
            self.saved = check_outputs(self.catalogue, self.registry, self.outputs, arguments)
            self.done = True
            shown = ", ".join(f"{k} = {v}" for k, v in self.saved.items())
            return f"Saved {shown}. The outputs are with the user now."
        if name == READ_RESULT and self.long_values:
            _only(arguments, {"ref", "offset"}, READ_RESULT)
            return self.long_values.read(str(arguments.get("ref", "")), arguments.get("offset", 0))
        if name in self._extra:
            return await self._call_extra(name, arguments)
        if name not in self.catalogue:
            raise ToolCallError(self._unknown_tool(name))
        if name not in self.toolset:
            raise ToolCallError(f'{name} is not selected yet. Call selectTools(tools: ["{name}"]) first; it is available from then on.')
        self.toolset.touch(name)
        return await self.fields.run(self.fields.prepare(self.catalogue.tool(name), arguments))

    def _unknown_tool(self, name: str) -> str:
        schema = self.catalogue.schema
        if schema.mutation_type is not None and name.startswith("Mutation_") and name.split("_", 1)[1] in schema.mutation_type.fields:
            return f"{name} is a mutation, and this session does not allow mutations. Only the host can allow them; use the query tools."
        builtins = [SELECT_TOOLS] + ([SAVE] if self._save_tool else []) + list(self._extra)
        close = self.catalogue.suggest(name) or self.catalogue.suggest(name, candidates=builtins)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        return f"There is no tool {name}.{hint} selectTools lists the tools you can select."

    async def _call_extra(self, name: str, arguments: dict[str, Any]) -> Any:
        tool, handler = self._extra[name]
        if handler is None:
            return _PENDING
        try:
            value = handler(arguments)
            if inspect.isawaitable(value):
                value = await value
        except ToolCallError:
            raise
        except Exception as error:  # a local tool's failure is something the model should see and route around
            raise ToolCallError(f"{name} failed: {error}") from error
        return value

    # -- meta-tools ----------------------------------------------------------------------------------

    def _select_tools(self) -> Tool:
        key = (len(self.registry), len(self.values))
        if self._select_cache is None or self._select_cache[0] != key:
            tool = select_tools_tool(self.catalogue, self.registry, self.values, budget_tokens=self.tools_budget)
            self._select_cache = (key, tool)
        return self._select_cache[1]

    def _select(self, arguments: dict[str, Any]) -> str:
        _only(arguments, {"tools"}, SELECT_TOOLS)
        names = arguments.get("tools")
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise ToolCallError('selectTools takes a list of tool names, such as {"tools": ["Query_potato"]}.')
        return self.toolset.select(names, ignore=[SELECT_TOOLS, SAVE, READ_RESULT, *self._extra], partial=True)

    # -- sync wrappers for scripts and notebooks -------------------------------------------------------

    def call_tools_sync(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        return anyio.run(self.call_tools, calls)

    def call_tool_sync(self, call: ToolCall) -> ToolResult:
        return anyio.run(self.call_tool, call)

    def execute_sync(self, call: ToolCall) -> ToolResult:
        return anyio.run(self.execute, call)

    def add_input_sync(self, name: str, **options: Any) -> ObjectEntry | None:
        return anyio.run(lambda: self.add_input(name, **options))


def _only(arguments: dict[str, Any], allowed: set[str], tool: str) -> None:
    extra = [k for k in arguments if k not in allowed]
    if extra:
        raise ToolCallError(f"{tool} has no parameter {', '.join(extra)}; it takes {', '.join(sorted(allowed))}.")
