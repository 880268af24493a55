"""Reads that share one request: each call built as its own document under an alias (`c0`, `c1`, ...)
with its own variables, sent as ONE document, and the answer split back per call.

Errors stay with their call: GraphQL errors are told apart by the alias at the head of their path,
and each call judges its own (an error on what it asked fails it, one on what was read beside it is
a note on its result; see calls/_partial.py).
Where one error nulls the whole answer (a non-null root field), each call is run again on its own,
so one bad call never fails the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphql import get_named_type

from .._errors import ToolCallError
from .._tools import Tool
from ..catalogue._catalogue import Catalogue
from ._connections import connection_of
from ._documents import Document
from ._field import UNANSWERED, FieldCalls, PreparedCall, Result, not_answered

__all__ = ["merge_documents", "needs_earlier", "run_reads"]


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


async def run_reads(calls: FieldCalls, reads: Sequence[PreparedCall]) -> list[Result | ToolCallError]:
    """Run prepared read calls in one request; each gets its result or its own error, in order."""
    if len(reads) == 1:
        return [await _run_one(calls, reads[0])]
    documents = [calls.document(p, alias=f"c{j}") for j, p in enumerate(reads)]
    text, variables = merge_documents(documents)
    try:
        response = await calls.executor.execute(text, variables)
    except UNANSWERED as error:
        return [not_answered(error, p.expression) for p in reads]
    if response.data is None and response.errors:
        return [await _run_one(calls, p) for p in reads]  # one error took the whole answer down: run each alone
    unplaced = [e for e in response.errors if not e.get("path")]
    out: list[Result | ToolCallError] = []
    for j, prepared in enumerate(reads):
        alias = f"c{j}"  # its errors keep the alias: interpret judges them by path, and names the field
        errors = [e for e in response.errors if e.get("path") and e["path"][0] == alias] + unplaced
        try:
            out.append(calls.interpret(prepared, documents[j].path, response.data, errors))
            calls.read_field(prepared)  # as a call alone would: a value read on its own stays a column
        except ToolCallError as error:
            out.append(await _run_one(calls, prepared) if unplaced and calls.reads_unasked(prepared) else error)
    return out


async def _run_one(calls: FieldCalls, prepared: PreparedCall) -> Result | ToolCallError:
    try:
        return await calls.run(prepared)
    except ToolCallError as error:
        return error


def needs_earlier(catalogue: Catalogue, tool: Tool, arguments: dict[str, Any], batch: Sequence[PreparedCall]) -> bool:
    """Whether a call's object parameter, left to default to the most recent object of its type, may
    name an object a read of `batch` is about to make: then the batch is sent first."""
    if tool.object_parameter is None or arguments.get(tool.object_parameter) is not None:
        return False
    parent_type = tool.type_name or ""
    for prepared in batch:
        made = get_named_type(prepared.field_type).name
        if catalogue.is_of_type(parent_type, made) or catalogue.is_of_type(made, parent_type):
            return True
        connection = connection_of(catalogue, made)
        if connection is not None and catalogue.is_of_type(connection.node_type, parent_type):
            return True
    return False
