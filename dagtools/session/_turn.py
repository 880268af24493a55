"""One model turn of tool calls, planned once: reads share one request, writes run one at a time.

Calls take effect in the order the model made them, and every result is what running the calls
one by one would have given:

- Consecutive read-only field calls form a batch, sent as one document (see `calls/_batch.py`).
- Any other call (a mutation, `selectTools`, `save`, `readResult`, a local or client tool) is a
  barrier: the batch before it is sent first. Reads before the first write see the state before
  it; reads after it see the state after it.
- A read that needs an object an earlier read of the same batch is about to make (it names an ID not
  minted yet, or its object parameter defaults to the most recent object of a type an earlier read
  returns) starts a new batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphql import get_named_type

from .._errors import ToolCallError
from .._telemetry import active_telemetry, note_error
from .._tools import Tool, ToolCall, ToolResult
from ..calls._arguments import parse_arguments
from ..calls._batch import run_reads
from ..calls._connections import connection_of
from ..calls._field import PreparedCall
from ._fields import FieldToolset
from ._toolsets import PENDING, CombinedToolset, Toolset

__all__ = ["run_call", "run_turn"]


@dataclass(frozen=True, slots=True)
class _Read:
    index: int
    call: ToolCall
    prepared: PreparedCall


async def run_turn(toolset: CombinedToolset, fields: FieldToolset, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """Run one turn's calls (with ids already given) and return their results in the same order."""
    telemetry = active_telemetry()
    if telemetry is None:
        return await _run_turn(toolset, fields, calls)
    with telemetry.turn([(str(c.id), str(c.name), _type_of(toolset, c.name)) for c in calls]) as turn:
        results = await _run_turn(toolset, fields, calls)
        turn.finish(results)
    return results


def _type_of(toolset: CombinedToolset, name: str) -> str:
    found = toolset.owner(name) if isinstance(name, str) else None
    return (found[1].type_name or "") if found is not None else ""


async def _run_turn(toolset: CombinedToolset, fields: FieldToolset, calls: Sequence[ToolCall]) -> list[ToolResult]:
    if len(calls) == 1:
        return [await _run_single(toolset, fields, calls[0])]
    results: list[ToolResult | None] = [None] * len(calls)
    batch: list[_Read] = []

    async def flush() -> None:
        reads = list(batch)
        batch.clear()
        if reads:
            for read, value in zip(reads, await run_reads(fields.calls, [r.prepared for r in reads])):
                results[read.index] = _result(read.call, value)

    for index, call in enumerate(calls):
        try:
            arguments = parse_arguments(call.name, call.arguments)
            found = toolset.owner(call.name)
            if found is None:
                raise ToolCallError(toolset.unknown(call.name))
        except ToolCallError as error:
            results[index] = _result(call, error)
            continue
        owner, tool = found
        if owner is not fields or not fields.batchable(tool):
            await flush()
            results[index] = await _run_alone(owner, tool, arguments, call)
            continue
        if batch and _needs_earlier(fields, tool, arguments, batch):
            await flush()
        try:
            prepared = fields.prepare(tool, arguments)
        except ToolCallError as error:
            if not batch:
                results[index] = _result(call, error)
                continue
            await flush()  # it may name an object the batch was about to make
            try:
                prepared = fields.prepare(tool, arguments)
            except ToolCallError as again:
                results[index] = _result(call, again)
                continue
        if prepared.answer is not None:
            results[index] = _result(call, prepared.answer)
            continue
        batch.append(_Read(index, call, prepared))
    await flush()
    return [r for r in results if r is not None]


async def _run_single(toolset: CombinedToolset, fields: FieldToolset, call: ToolCall) -> ToolResult:
    """A turn of one call, as `run_turn` would run it, without planning a batch (the common case,
    and the one whose cost every call pays)."""
    try:
        arguments = parse_arguments(call.name, call.arguments)
        found = toolset.owner(call.name)
        if found is None:
            raise ToolCallError(toolset.unknown(call.name))
        owner, tool = found
        if owner is not fields or not fields.batchable(tool):
            return await _run_alone(owner, tool, arguments, call)
        prepared = fields.prepare(tool, arguments)
        value = prepared.answer if prepared.answer is not None else await fields.calls.run(prepared)
    except ToolCallError as error:
        return _result(call, error)
    return ToolResult(call_id=call.id, name=call.name, value=value)


async def run_call(toolset: Toolset, call: ToolCall) -> ToolResult:
    """Run one call on any toolset (no batching): the model's mistakes become error results."""
    try:
        arguments = parse_arguments(call.name, call.arguments)
        tool = toolset.get(call.name)
        if tool is None:
            raise ToolCallError(toolset.unknown(call.name) or f"There is no tool {call.name}.")
    except ToolCallError as error:
        return _result(call, error)
    return await _run_alone(toolset, tool, arguments, call)


async def _run_alone(toolset: Toolset, tool: Tool, arguments: dict[str, Any], call: ToolCall) -> ToolResult:
    try:
        value = await toolset.call_tool(tool, arguments)
    except ToolCallError as error:
        return _result(call, error)
    if value is PENDING:
        return ToolResult(call_id=call.id, name=call.name, value=None, pending=True)
    return _result(call, value)


def _result(call: ToolCall, value: Any) -> ToolResult:
    """The one place a call's value or the model's mistake becomes the result the model reads."""
    if isinstance(value, ToolCallError):
        note_error(call.id, value)
        return ToolResult.error(call, str(value))
    return ToolResult(call_id=call.id, name=call.name, value=value)


def _needs_earlier(fields: FieldToolset, tool: Tool, arguments: dict[str, Any], batch: list[_Read]) -> bool:
    if tool.object_parameter is None or arguments.get(tool.object_parameter) is not None:
        return False
    catalogue = fields.catalogue
    parent_type = tool.type_name or ""
    for read in batch:
        made = get_named_type(read.prepared.field_type).name
        if catalogue.is_of_type(parent_type, made) or catalogue.is_of_type(made, parent_type):
            return True
        connection = connection_of(catalogue, made)
        if connection is not None and catalogue.is_of_type(connection.node_type, parent_type):
            return True
    return False
