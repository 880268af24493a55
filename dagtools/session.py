"""A session: registry, active toolset, inputs, declared outputs and the conversation context.

`execute` runs one call and returns its result; `call_tool` also records the call and its result
in the context (seed 001). Neither raises for anything the model did: those come back as error
results, and a failed call leaves registry, toolset and outputs as they were.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import anyio
from graphql import GraphQLList, GraphQLNonNull, get_named_type, is_composite_type, is_leaf_type

from .arguments import Ref, bind_arguments, parse_arguments, resolve_reference, value_problems
from .catalogue import Catalogue
from .chains import parse_chain
from .connections import Connection, connection_of
from .context import Context
from .errors import ConfigError, ExecutorError, ToolCallError
from .executors.base import Executor, format_error
from .handles import Handle, Step, freeze, thaw
from .metatools import (
    READ_RESULT,
    SAVE,
    SELECT_TOOLS,
    Output,
    ValueInput,
    read_result_tool,
    save_tool,
    select_tools_tool,
)
from .query import QueryBuilder, navigate
from .registry import ObjectEntry, Registry
from .results import LongValues
from .tools import Tool, ToolCall, ToolResult
from .turns import run_turn

__all__ = ["Session"]

LocalHandler = Callable[[dict[str, Any]], Any | Awaitable[Any]]
OutputSpec = Output | str | Mapping[str, Any]
_MISSING: Any = object()


def _outputs(outputs: Mapping[str, OutputSpec] | Iterable[Output] | None) -> list[Output]:
    if outputs is None:
        return []
    if isinstance(outputs, Mapping):
        result = []
        for name, spec in outputs.items():
            if isinstance(spec, Output):
                result.append(replace(spec, name=name))
            elif isinstance(spec, str):
                result.append(Output(name=name, type=spec))
            else:
                result.append(Output(name=name, type=str(spec["type"]), description=str(spec.get("description", ""))))
        return result
    return list(outputs)


class Session:
    """One model's view of one API."""

    def __init__(
        self,
        catalogue: Catalogue,
        executor: Executor,
        *,
        outputs: Mapping[str, OutputSpec] | Iterable[Output] | None = None,
        max_active_tools: int = 64,
        previews: bool = True,
        result_budget: int = 4000,
        tools_budget: int = 1500,
    ) -> None:
        if max_active_tools < 1:
            raise ConfigError("max_active_tools must be at least 1.")
        self.catalogue = catalogue
        self.executor = executor
        self.registry = Registry()
        self.context = Context()
        self.values: list[ValueInput] = []
        self.outputs: list[Output] = _outputs(outputs)
        self.saved: dict[str, Any] = {}
        self.done = False
        self.warnings: tuple[str, ...] = ()  # what loading the schema tolerated, for hosts to show
        self.max_active_tools = max_active_tools
        self.previews = previews
        self.tools_budget = tools_budget
        self._save_tool = save_tool(catalogue, self.outputs) if self.outputs else None
        self._active: dict[str, int] = {}  # selection order; value = last use, for eviction
        self._clock = 0
        self._extra: dict[str, tuple[Tool, LocalHandler | None]] = {}
        self._pending: dict[str, ToolCall] = {}
        self._long = LongValues(result_budget)
        self._queries = QueryBuilder.of(catalogue)
        self._calls = 0
        self._select_cache: tuple[tuple[int, int], Tool] | None = None

    # -- host side: inputs, tools, state -------------------------------------------------------------

    async def add_input(self, name: str, *, field: str | None = None, value: Any = _MISSING,
                        description: str = "") -> ObjectEntry | None:
        """Give the model an object (a root-field chain such as `repository(owner: "a", name: "b")`)
        or a plain value, before it starts."""
        if (field is None) == (value is _MISSING):
            raise ConfigError(f"Input {name!r}: give either a field chain or a value.")
        if field is None:
            self.values.append(ValueInput(name=name, value=value, description=description))
            return None
        steps, field_type = parse_chain(self.catalogue, field)
        if not is_composite_type(get_named_type(field_type)) or _is_list(field_type):
            raise ConfigError(f"Input {name!r}: {field} gives {field_type}, not one object. "
                              "Give a plain value with `value`, or a chain that ends on an object.")
        try:
            payload = await self._run(steps, "query", field.strip(), field_type, description=description or name)
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
            self._select({"tools": list(names)})
        except ToolCallError as error:
            raise ConfigError(str(error)) from None

    @property
    def active_tools(self) -> list[str]:
        return list(self._active)

    def tools(self) -> list[Tool]:
        """The toolset the model sees now: selectTools, save, readResult, the active and extra tools."""
        out = [self._select_tools()]
        if self._save_tool is not None:
            out.append(self._save_tool)
        if self._long:
            out.append(read_result_tool())
        out += self.catalogue.tools(self._active)
        out += [tool for tool, _ in self._extra.values()]
        return out

    def render_tools(self, format: str = "openai") -> list[dict[str, Any]]:
        from .providers import render_tools

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
        call = self._with_id(call)
        if not self.context.has_call(call.id):
            self.context.add_assistant(tool_calls=(call,))
        result = await self.execute(call)
        if result.pending:
            self._pending[call.id] = call
        else:
            self.context.add_result(result)
        return result

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
            return self._save(arguments)
        if name == READ_RESULT and self._long:
            _only(arguments, {"ref", "offset"}, READ_RESULT)
            return self._long.read(str(arguments.get("ref", "")), arguments.get("offset", 0))
        if name in self._extra:
            return await self._call_extra(name, arguments)
        if name not in self.catalogue:
            raise ToolCallError(self._unknown_tool(name))
        if name not in self._active:
            raise ToolCallError(f'{name} is not selected yet. Call selectTools(tools: ["{name}"]) first; '
                                "it is available from then on.")
        self._clock += 1
        self._active[name] = self._clock
        return await self._call_field(self.catalogue.tool(name), arguments)

    def _unknown_tool(self, name: str) -> str:
        schema = self.catalogue.schema
        if schema.mutation_type is not None and name.startswith("Mutation_") \
                and name.split("_", 1)[1] in schema.mutation_type.fields:
            return (f"{name} is a mutation, and this session does not allow mutations. "
                    "Only the host can allow them; use the query tools.")
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

    async def _call_field(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        prepared = self._prepare_field(tool, arguments)
        if prepared.value is not _MISSING:
            return prepared.value
        return await self._run(prepared.steps, prepared.operation, prepared.expression, prepared.field_type,
                               next_page=prepared.next_page)

    def _prepare_field(self, tool: Tool, arguments: dict[str, Any]) -> _Prepared:
        """Everything a field call needs before it is sent; raises ToolCallError before anything runs."""
        bound = bind_arguments(self.catalogue, self.registry, tool, arguments)
        ref = self.catalogue.ref(tool.name)
        field = self.catalogue.field(ref)
        parent = bound.parent
        expression = _expression(parent.id if parent else None, ref.field_name, bound.shown)
        operation = "mutation" if ref.type_name == self.catalogue.mutation_type else "query"
        if parent is not None and parent.handle.is_snapshot:
            value = self._from_snapshot(parent, ref.field_name, bound.values, field.type)
            return _Prepared((), operation, expression, field.type, value=value)
        step = Step.of(ref.field_name, bound.values, on=parent.type_name if parent else None)
        steps = (parent.handle.steps if parent else ()) + (step,)
        next_page = None
        if "after" in field.args:
            shown = {**({tool.object_parameter: parent.id} if parent and tool.object_parameter else {}),
                     **{k: (str(v) if isinstance(v, Ref) else v) for k, v in bound.shown.items()}}
            next_page = _next_page(tool.name, shown)
        return _Prepared(steps, operation, expression, field.type, next_page=next_page)

    def _from_snapshot(self, parent: ObjectEntry, field_name: str, values: dict[str, Any], field_type: Any) -> Any:
        data = thaw(parent.handle.snapshot) or {}
        if values or field_name not in data:
            readable = ", ".join(k for k in data if k != "__typename") or "none"
            raise ToolCallError(f"{parent.id} came from a mutation and has no id to reach it again, so only the "
                                f"fields read then are available: {readable}.")
        value = data[field_name]
        expression = f"{parent.id}.{field_name}"
        if is_leaf_type(get_named_type(field_type)):
            return self._long.present(value, expression)
        if value is None:
            return {"result": None}
        if isinstance(value, list):  # objects a mutation linked to, reached again through their identity
            ids = [self._mint(v, (), "mutation", f"{expression}[{i}]", "").id if v is not None else None
                   for i, v in enumerate(value)]
            return self._long.present(ids, expression)
        return {"result": self._mint(value, (), "mutation", expression, "").id}

    async def _run(self, steps: tuple[Step, ...], operation: str, expression: str, field_type: Any, *,
                   description: str = "", next_page: Callable[[str], str] | None = None) -> dict[str, Any]:
        document = self._queries.build(steps, operation=operation)
        try:
            response = await self.executor.execute(document.text, document.variables)
        except ExecutorError as error:  # the API is down or answered nonsense: the model can only wait
            raise ToolCallError(f"The API could not be reached for {expression}: {error} Nothing was created; "
                                "try again later, or go on with the objects you have.") from error
        return self._interpret(document.path, response.data, response.errors, steps, operation, expression,
                               field_type, description=description, next_page=next_page)

    def _interpret(self, path: tuple[str | int, ...], data: Any, errors: list[dict[str, Any]], steps: tuple[Step, ...],
                   operation: str, expression: str, field_type: Any, *, description: str = "",
                   next_page: Callable[[str], str] | None = None) -> dict[str, Any]:
        """Turn the answer to one call's document (or its part of a batch) into the model's result."""
        if errors:
            messages = "; ".join(format_error(e) for e in errors[:5])
            raise ToolCallError(f"The API returned an error for {expression}: {messages}. Nothing was created; "
                                "change the arguments or try another object or tool.")
        value, depth = navigate(data, path)
        named = get_named_type(field_type)
        if value is None:
            if depth < len(path):
                raise ToolCallError(f"{expression} could not be reached: part of the chain leading to it is null.")
            if is_composite_type(named):
                raise ToolCallError(f"{expression} is null: there is no such object. "
                                    "Try other arguments or another tool.")
            return {"result": None}
        if not is_composite_type(named):
            return self._long.present(value, expression)
        connection = connection_of(self.catalogue, named.name) if operation == "query" else None
        if connection is not None and isinstance(value, dict):
            return self._walk_connection(connection, value, steps, expression, next_page)
        if isinstance(value, list):
            return self._mint_list(value, steps, operation, expression)
        entry = self._mint(value, steps, operation, expression, description)
        out: dict[str, Any] = {"result": entry.id}
        if self.previews and entry.preview:
            out["preview"] = entry.preview
        return out

    def _mint_list(self, items: list[Any], steps: tuple[Step, ...], operation: str, expression: str) -> dict[str, Any]:
        if any(isinstance(item, list) for item in items):
            raise ToolCallError(f"{expression} is a list of lists, which objects cannot be taken from.")
        last = steps[-1]
        ids: list[str | None] = []
        previews: dict[str, Any] = {}
        for index, item in enumerate(items):
            if item is None:
                ids.append(None)
                continue
            item_steps = steps[:-1] + (replace(last, index=index),)
            entry = self._mint(item, item_steps, operation, f"{expression}[{index}]", "")
            ids.append(entry.id)
            if self.previews and entry.preview:
                previews[entry.id] = entry.preview
        out = self._long.present(ids, expression)
        shown = {i: previews[i] for i in out["result"] if i in previews}
        if shown and len(str(shown)) <= self._long.budget:
            out["preview"] = shown
        return out

    def _walk_connection(self, connection: Connection, value: dict[str, Any], steps: tuple[Step, ...], expression: str,
                         next_page: Callable[[str], str] | None) -> dict[str, Any]:
        """One page of a connection as the list of its node IDs, its scalars and the call for the next page."""
        ids: list[str | None] = []
        previews: dict[str, Any] = {}
        for index, item in enumerate(connection.items(value)):
            if item is None:
                ids.append(None)
                continue
            entry = self._mint(item, steps + connection.item_steps(index), "query", f"{expression}[{index}]", "")
            ids.append(entry.id)
            if self.previews and entry.preview:
                previews[entry.id] = entry.preview
        out = self._long.present(ids, expression)
        shown = {i: previews[i] for i in out["result"] if i in previews}
        if shown and len(str(shown)) <= self._long.budget:
            out["preview"] = shown
        for name in connection.scalars:
            if value.get(name) is not None:
                out[name] = value[name]
        page = value.get("pageInfo") or {}
        if page.get("hasNextPage") and page.get("endCursor") is not None:
            out["more"] = next_page(page["endCursor"]) if next_page else "More items follow on later pages."
        return out

    def _mint(self, value: dict[str, Any], steps: tuple[Step, ...], operation: str, expression: str,
              description: str) -> ObjectEntry:
        type_name = value.get("__typename") or str(get_named_type(self._end_type(steps, operation)))
        identity = self.catalogue.identity(type_name)
        id_value = value.get(identity.field) if identity else None
        if identity is not None and id_value is not None:
            handle = Handle((Step.of(identity.root_field, {identity.argument: id_value}),))
        elif operation == "mutation":
            handle = Handle(steps, "mutation", freeze(value))
        else:
            handle = Handle(steps)
        preview = {f: value[f] for f in self.catalogue.preview_fields(type_name) if f in value}
        return self.registry.mint(type_name, handle, expression=expression, description=description,
                                  identity=id_value, preview=preview)

    def _end_type(self, steps: tuple[Step, ...], operation: str) -> Any:
        schema = self.catalogue.schema
        current: Any = schema.mutation_type if operation == "mutation" else schema.query_type
        field_type: Any = None
        for step in steps:
            if step.on is not None:
                current = schema.get_type(step.on)
            field_type = current.fields[step.field].type
            current = get_named_type(field_type)
        return current

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
        wanted: list[str] = []
        unknown: list[str] = []
        for name in names:
            name = name.strip()
            if name in (SELECT_TOOLS, SAVE, READ_RESULT) or name in self._extra:
                continue
            if name.endswith("_*") and self.catalogue.tools_for_type(name[:-2]):
                wanted += self.catalogue.tools_for_type(name[:-2])
            elif name in self.catalogue:
                wanted.append(name)
            else:
                unknown.append(name)
        if unknown:
            hints = []
            for name in unknown:
                close = self.catalogue.suggest(name)
                hints.append(f"{name} (did you mean {', '.join(close)}?)" if close else name)
            raise ToolCallError(f"No tool named {'; '.join(hints)}. Nothing was selected; call selectTools again with "
                        "names from its description.")
        wanted = list(dict.fromkeys(wanted))
        if len(wanted) > self.max_active_tools:
            raise ToolCallError(f"That is {len(wanted)} tools; at most {self.max_active_tools} can be active at once. "
                        "Select the ones you need next.")
        new = [n for n in wanted if n not in self._active]
        overflow = len(self._active) + len(new) - self.max_active_tools
        dropped: list[str] = []
        if overflow > 0:
            candidates = sorted((used, n) for n, used in self._active.items() if n not in wanted)
            dropped = [n for _, n in candidates[:overflow]]
            for name in dropped:
                del self._active[name]
        for name in wanted:
            self._clock += 1
            self._active[name] = self._clock
        if dropped:
            return (f"ok. To stay within {self.max_active_tools} active tools, these were dropped: "
                    f"{', '.join(dropped)}. Select them again when you need them.")
        return "ok"

    def _save(self, arguments: dict[str, Any]) -> Any:
        declared = {o.name: o for o in self.outputs}
        extra = [k for k in arguments if k not in declared]
        missing = [k for k in declared if arguments.get(k) is None]
        if extra or missing:
            parts = []
            if missing:
                parts.append(f"missing {', '.join(missing)}")
            if extra:
                parts.append(f"no output named {', '.join(extra)}")
            expected = ", ".join(f"{o.name} ({o.type})" for o in self.outputs)
            raise ToolCallError(f"save was not done: {'; '.join(parts)}. Pass every output at once: {expected}.")
        values: dict[str, Any] = {}
        problems: list[str] = []
        for name, output in declared.items():
            try:
                values[name] = self._check_output(output, arguments[name])
            except ToolCallError as error:
                problems.append(f"{name}: {error}")
        if problems:
            raise ToolCallError("save was not done: " + "; ".join(problems) + ". Fix these and call save again.")
        self.saved = values
        self.done = True
        shown = ", ".join(f"{k} = {v}" for k, v in values.items())
        return f"Saved {shown}. The outputs are with the user now."

    def _check_output(self, output: Output, value: Any) -> Any:
        type_ = output.graphql_type(self.catalogue)
        named = get_named_type(type_)
        if is_composite_type(named):
            def check(item: Any, t: Any) -> Any:
                while isinstance(t, GraphQLNonNull):
                    t = t.of_type
                if isinstance(t, GraphQLList):
                    if not isinstance(item, list):
                        raise ToolCallError(f"expected a list of {named.name} IDs")
                    return [check(i, t.of_type) for i in item]
                return resolve_reference(self.catalogue, self.registry, item, named.name, where="it").id
            return check(value, type_)
        problems = [message for _, message in value_problems(value, type_)]
        if problems:
            raise ToolCallError("; ".join(problems))
        return value

    # -- sync wrappers for scripts and notebooks -------------------------------------------------------

    def call_tools_sync(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        return anyio.run(self.call_tools, calls)

    def call_tool_sync(self, call: ToolCall) -> ToolResult:
        return anyio.run(self.call_tool, call)

    def execute_sync(self, call: ToolCall) -> ToolResult:
        return anyio.run(self.execute, call)

    def add_input_sync(self, name: str, **options: Any) -> ObjectEntry | None:
        return anyio.run(lambda: self.add_input(name, **options))


_PENDING: Any = object()


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A bound field call: the chain to send, or `value` when it is answered without the API."""

    steps: tuple[Step, ...]
    operation: str
    expression: str
    field_type: Any
    next_page: Callable[[str], str] | None = None
    value: Any = _MISSING


def _next_page(tool_name: str, shown: dict[str, Any]) -> Callable[[str], str]:
    import json

    def hint(cursor: str) -> str:
        arguments = {k: v for k, v in shown.items() if k != "after"} | {"after": cursor}
        return f"For the next page call {tool_name} with {json.dumps(arguments, ensure_ascii=False)}"
    return hint


def _only(arguments: dict[str, Any], allowed: set[str], tool: str) -> None:
    extra = [k for k in arguments if k not in allowed]
    if extra:
        raise ToolCallError(f"{tool} has no parameter {', '.join(extra)}; it takes {', '.join(sorted(allowed))}.")


def _is_list(type_: Any) -> bool:
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return isinstance(type_, GraphQLList)


def _expression(parent: str | None, field: str, shown: dict[str, Any]) -> str:
    args = ", ".join(f"{k}: {_literal(v)}" for k, v in shown.items())
    call = f"{field}({args})" if args else field
    return f"{parent}.{call}" if parent else call


def _literal(value: Any) -> str:
    import json

    if isinstance(value, Ref):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_literal(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)

