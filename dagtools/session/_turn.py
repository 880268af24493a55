"""One model turn of tool calls, planned once: calls a toolset can run together share one go, every
other call runs alone, in order.

Each call's name is resolved once, to the tool and the toolset that owns it (`Toolset.find`), and the
call goes through that owner: its `call_tool`, or, for consecutive calls a `BatchingToolset` says it
can run together (the field toolset's reads, sent as one document), its `call_batch`. No toolset is
a special case here. Calls take effect in the order the model made them, and every result is what
running the calls one by one would have given:

- Consecutive calls one batching toolset can run together form a batch (see `FieldToolset.call_batch`
  for how reads that depend on each other are kept apart).
- Any other call (a mutation, `selectTools`, `save`, `readResult`, a local or client tool) is a
  barrier: the batch before it runs first. Reads before the first write see the state before it;
  reads after it see the state after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from .._errors import ToolCallError
from .._telemetry import active_telemetry, note_error
from .._tools import ToolCall, ToolResult
from ..calls._arguments import parse_arguments
from ._toolsets import PENDING, BatchingToolset, OwnedTool, Toolset, no_such_tool

__all__ = ["run_turn"]


class _Planned(NamedTuple):
    """A call with its arguments parsed and its owner found, or what the model got wrong."""

    call: ToolCall
    arguments: dict[str, Any]
    found: OwnedTool | None
    error: ToolCallError | None = None


async def run_turn(toolset: Toolset, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """Run one turn's calls (with ids already given) and return their results in the same order. The
    model's mistakes become error results; a host tool's bug raises (see session/_toolsets.py)."""
    telemetry = active_telemetry()
    if telemetry is None and len(calls) == 1:  # the common case, and the one whose cost every call pays
        return [await _run_alone(toolset, _plan(toolset, calls[0]))]
    planned = [_plan(toolset, call) for call in calls]
    if telemetry is None:
        return await _run_turn(toolset, planned)
    named = [(str(p.call.id), str(p.call.name), (p.found.tool.type_name or "") if p.found else "") for p in planned]
    with telemetry.turn(named) as turn:
        results = await _run_turn(toolset, planned)
        turn.finish(results)
    return results


def _plan(toolset: Toolset, call: ToolCall) -> _Planned:
    try:
        arguments = parse_arguments(call.name, call.arguments)
    except ToolCallError as error:
        return _Planned(call, {}, None, error)
    return _Planned(call, arguments, toolset.find(call.name))


async def _run_turn(toolset: Toolset, planned: list[_Planned]) -> list[ToolResult]:
    if len(planned) == 1:
        return [await _run_alone(toolset, planned[0])]
    results: list[ToolResult | None] = [None] * len(planned)
    batch: list[tuple[int, OwnedTool]] = []

    async def flush() -> None:
        taken = list(batch)
        batch.clear()
        if len(taken) == 1:
            index, found = taken[0]
            results[index] = await _call(found, planned[index].call, planned[index].arguments)
        elif taken:
            owner = taken[0][1].owner
            assert isinstance(owner, BatchingToolset)
            values = await owner.call_batch([(found.tool, planned[index].arguments) for index, found in taken])
            for (index, _), value in zip(taken, values):
                results[index] = _result(planned[index].call, value)

    for index, plan in enumerate(planned):
        found = _owner(toolset, plan)
        if not isinstance(found, OwnedTool):  # the model's mistake: nothing runs, so nothing is sent first
            results[index] = found
        elif isinstance(found.owner, BatchingToolset) and found.owner.batchable(found.tool):
            if batch and found.owner is not batch[0][1].owner:
                await flush()
            batch.append((index, found))
        else:
            await flush()
            results[index] = await _call(found, plan.call, plan.arguments)
    await flush()
    return [r for r in results if r is not None]


async def _run_alone(toolset: Toolset, plan: _Planned) -> ToolResult:
    """A turn of one planned call: no batch to make."""
    found = _owner(toolset, plan)
    return await _call(found, plan.call, plan.arguments) if isinstance(found, OwnedTool) else found


def _owner(toolset: Toolset, plan: _Planned) -> OwnedTool | ToolResult:
    """The call's owner as found at the start of the turn, or the error result the model reads."""
    if plan.error is not None:
        return _result(plan.call, plan.error)
    # A name unknown at the start is looked up again when its turn comes: an earlier call may have made it.
    found = plan.found or toolset.find(plan.call.name)
    return found if found is not None else _unknown(toolset, plan.call)


def _unknown(toolset: Toolset, call: ToolCall) -> ToolResult:
    name = call.name
    return _result(call, ToolCallError(toolset.unknown(name) or no_such_tool(name, toolset.suggest(name))))


async def _call(found: OwnedTool, call: ToolCall, arguments: dict[str, Any]) -> ToolResult:
    """One call through its owner's `call_tool`."""
    try:
        value = await found.owner.call_tool(found.tool, arguments)
    except ToolCallError as error:
        return _result(call, error)
    if value is PENDING:
        return ToolResult(call_id=call.id, name=call.name, value=None, pending=True)
    return ToolResult(call_id=call.id, name=call.name, value=value)


def _result(call: ToolCall, value: Any) -> ToolResult:
    """A call's value as its result, or the model's mistake as the error result the model reads (the one
    place a mistake is turned into one, and noted for telemetry)."""
    if isinstance(value, ToolCallError):
        note_error(call.id, value)
        return ToolResult.error(call, str(value))
    return ToolResult(call_id=call.id, name=call.name, value=value)
