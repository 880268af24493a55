"""One model turn of tool calls: reads share one request, writes run one at a time, in order.

Calls take effect in the order the model made them, and every result is what running the calls
one by one would have given:

- Consecutive read-only field calls form a batch. Each is built as its own document under an alias
  (`c0`, `c1`, ...) with its own variables, and the batch is sent as ONE document: one request per
  turn of reads, and an object-returning call still costs nothing more than its share of it.
- A state-changing call (a mutation, `selectTools`, `save`, `readResult`, a local or client tool)
  is a barrier: the batch before it is sent first. Reads before the first write see the state
  before it; reads after it see the state after it.
- A read that needs an object an earlier read of the same batch is about to make (it names an ID
  not minted yet, or its object parameter defaults to the most recent object of a type an earlier
  read returns) starts a new batch.
- Errors stay with their call: GraphQL errors are told apart by the alias at the head of their
  path. Where one error nulls the whole answer (a non-null root field), each call of the batch is
  run again on its own, so one bad call never fails the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphql import get_named_type

from .._errors import ExecutorError, ToolCallError
from .._tools import Tool, ToolCall, ToolResult
from ._arguments import parse_arguments
from ._documents import Document
from ._field import PreparedCall, unreachable

if TYPE_CHECKING:
    from ..session._session import Session

__all__ = ["merge_documents", "run_turn"]

_Entry = tuple[int, ToolCall, PreparedCall]


def merge_documents(documents: Sequence[Document]) -> tuple[str, dict[str, Any]]:
    """One query from several built with distinct aliases (so their variables are distinct too)."""
    declarations: list[str] = []
    bodies: list[str] = []
    variables: dict[str, Any] = {}
    for document in documents:
        text = document.text
        start = text.index(" {")
        header = text[:start]
        if "(" in header:
            declarations.append(header[header.index("(") + 1 : -1])
        bodies.append(text[start + 3 : -2])
        variables.update(document.variables)
    header = f"query({', '.join(declarations)})" if declarations else "query"
    return f"{header} {{ {' '.join(bodies)} }}", variables


async def run_turn(session: Session, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """Run one turn's calls (with ids already given) and return their results in the same order."""
    results: list[ToolResult | None] = [None] * len(calls)
    batch: list[_Entry] = []
    for index, call in enumerate(calls):
        tool = _read_tool(session, call)
        if tool is None:
            await _flush(session, batch, results)
            results[index] = await session.execute(call)
            continue
        arguments = parse_arguments(call.name, call.arguments)
        if batch and _needs_earlier(session, tool, arguments, batch):
            await _flush(session, batch, results)
        try:
            prepared = session.fields.prepare(tool, arguments)
        except ToolCallError as error:
            if not batch:
                results[index] = _error(call, error)
                continue
            await _flush(session, batch, results)  # it may name an object the batch was about to make
            try:
                prepared = session.fields.prepare(tool, arguments)
            except ToolCallError as again:
                results[index] = _error(call, again)
                continue
        session.toolset.touch(call.name)
        if prepared.answer is not None:
            results[index] = ToolResult(call_id=call.id, name=call.name, value=prepared.answer)
            continue
        batch.append((index, call, prepared))
    await _flush(session, batch, results)
    return [r for r in results if r is not None]


def _read_tool(session: Session, call: ToolCall) -> Tool | None:
    """The tool when the call is a read-only field call that can join a batch, else None."""
    name = call.name
    if name not in session.catalogue or name not in session.toolset or name in session.extra_tools:
        return None
    tool = session.catalogue.tool(name)
    if not tool.read_only:
        return None
    try:
        parse_arguments(name, call.arguments)
    except ToolCallError:
        return None  # run on its own, which reports the error
    return tool


def _needs_earlier(session: Session, tool: Tool, arguments: dict[str, Any], batch: list[_Entry]) -> bool:
    if tool.object_parameter is None or arguments.get(tool.object_parameter) is not None:
        return False
    parent_type = tool.type_name or ""
    for _, _, prepared in batch:
        made = get_named_type(prepared.field_type).name
        if session.catalogue.is_of_type(parent_type, made) or session.catalogue.is_of_type(made, parent_type):
            return True
        connection = _connection_node(session, made)
        if connection is not None and session.catalogue.is_of_type(connection, parent_type):
            return True
    return False


def _connection_node(session: Session, type_name: str) -> str | None:
    from ._connections import connection_of

    connection = connection_of(session.catalogue, type_name)
    return connection.node_type if connection else None


def _error(call: ToolCall, error: ToolCallError) -> ToolResult:
    return ToolResult(call_id=call.id, name=call.name, value={"error": str(error)}, is_error=True)


async def _flush(session: Session, batch: list[_Entry], results: list[ToolResult | None]) -> None:
    entries = list(batch)
    batch.clear()
    if not entries:
        return
    if len(entries) == 1:
        index, call, prepared = entries[0]
        results[index] = await _run_one(session, call, prepared)
        return
    documents = [session.fields.document(p, alias=f"c{j}") for j, (_, _, p) in enumerate(entries)]
    text, variables = merge_documents(documents)
    try:
        response = await session.fields.send(text, variables)
    except ExecutorError as error:
        for index, call, prepared in entries:
            results[index] = _error(call, ToolCallError(unreachable(prepared.expression, error)))
        return
    if response.data is None and response.errors:
        for index, call, prepared in entries:  # one error took the whole answer down: run each alone
            results[index] = await _run_one(session, call, prepared)
        return
    unplaced = [e for e in response.errors if not e.get("path")]
    for j, (index, call, prepared) in enumerate(entries):
        alias = f"c{j}"
        root = prepared.steps[0].field  # errors name the field, as they would for the call alone
        errors = [{**e, "path": [root, *e["path"][1:]]} for e in response.errors if e.get("path") and e["path"][0] == alias] + unplaced
        try:
            value = session.fields.interpret(prepared, documents[j].path, response.data, errors)
        except ToolCallError as error:
            results[index] = _error(call, error)
        else:
            results[index] = ToolResult(call_id=call.id, name=call.name, value=value)


async def _run_one(session: Session, call: ToolCall, prepared: PreparedCall) -> ToolResult:
    try:
        value = await session.fields.run(prepared)
    except ToolCallError as error:
        return _error(call, error)
    return ToolResult(call_id=call.id, name=call.name, value=value)
