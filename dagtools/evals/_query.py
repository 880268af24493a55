"""The baseline other bridges offer: one `query` tool that takes a GraphQL document and its variables.

It runs the document as written through the session's executor, so an eval compares the object-graph
tools with a raw query tool on the same API, model and task. It reads only: an operation that is not
a query is refused (nothing is sent) unless the host allowed mutations. Its answer is cut to the
session's result budget, like every other result.
"""

from __future__ import annotations

import json
from typing import Any

from graphql import FieldNode, GraphQLError, OperationDefinitionNode, parse

from .._errors import ToolCallError
from .._tools import Tool
from ..executors._base import Executor
from ..session._toolsets import Toolset

__all__ = ["QUERY_TOOL", "QueryToolset", "operation_kind"]

QUERY_TOOL = "query"


def operation_kind(document: str, operation_name: str | None = None) -> str:
    """The kind of operation `document` runs ("query", "mutation", "subscription"); ToolCallError
    when it does not parse or names no operation that can run."""
    return _operation(document, operation_name).operation.value


def _operation(document: str, operation_name: str | None) -> OperationDefinitionNode:
    try:
        parsed = parse(document)
    except GraphQLError as error:
        raise ToolCallError(f"The query does not parse: {error.message}. Fix the GraphQL syntax and call query again.") from None
    operations = [d for d in parsed.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name:
        operations = [o for o in operations if o.name is not None and o.name.value == operation_name]
    if len(operations) != 1:
        names = ", ".join(o.name.value for o in operations if o.name) or "none named"
        raise ToolCallError(f"The document must hold exactly one operation to run (or name one with operationName); it holds {names}.")
    return operations[0]


class QueryToolset(Toolset):
    """One tool, `query(query, variables?, operationName?)`, run by `executor`. `mutations`: False
    (reads only), True, or the names of the mutation fields allowed, as the catalogue takes them."""

    def __init__(self, executor: Executor, *, mutations: bool | list[str] = False, budget: int = 4000) -> None:
        self.executor = executor
        self.mutations = mutations
        self.budget = budget
        self.tool = Tool(
            name=QUERY_TOOL,
            description=(
                "Run a GraphQL operation on the API and get its JSON answer (data and errors). "
                + (
                    f"Queries and the mutations {', '.join(mutations)} are allowed. "
                    if isinstance(mutations, list) and mutations
                    else "Queries and mutations are allowed. "
                    if mutations
                    else "Only queries are allowed; mutations are refused. "
                )
                + "Pass values as variables. Ask for the fields you need: a long answer is cut. "
                "Use introspection (__schema, __type) to learn the API's types and fields."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The GraphQL document."},
                    "variables": {"type": "object", "description": "Values for the document's variables.", "default": {}},
                    "operationName": {"type": "string", "description": "Which operation to run, when the document has several."},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            kind="local",
            read_only=not mutations,
            destructive=bool(mutations),
        )

    def list_tools(self) -> list[Tool]:
        return [self.tool]

    def get(self, name: str) -> Tool | None:
        return self.tool if name == self.tool.name else None

    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        extra = sorted(set(arguments) - {"query", "variables", "operationName"})
        document, variables, name = arguments.get("query"), arguments.get("variables") or {}, arguments.get("operationName")
        if extra or not isinstance(document, str) or not isinstance(variables, dict) or not isinstance(name, (str, type(None))):
            raise ToolCallError(
                'query takes {"query": "<GraphQL document>", "variables": {...}, "operationName"?: "..."}'
                + (f"; it has no parameter {', '.join(extra)}." if extra else ".")
            )
        operation = _operation(document, name)
        kind = operation.operation.value
        if kind != "query" and not (kind == "mutation" and self.mutations):
            raise ToolCallError(
                f"This {kind} was not run: the query tool only reads here"
                + (" (subscriptions never run)." if kind == "subscription" else "; mutations are off for this API.")
                + " Ask with a query operation instead."
            )
        if kind == "mutation" and isinstance(self.mutations, list):
            fields = [s.name.value for s in operation.selection_set.selections if isinstance(s, FieldNode)]
            refused = [f for f in fields if f not in self.mutations] or ([] if fields else ["(fragments)"])
            if refused:
                raise ToolCallError(
                    f"This mutation was not run: {', '.join(refused)} is not allowed here; "
                    f"the mutations allowed are {', '.join(self.mutations) or 'none'}, each named as a field of the operation."
                )
        response = await self.executor.execute(document, variables or None, operation_name=name)
        answer: dict[str, Any] = {"data": response.data}
        if response.errors:
            answer["errors"] = response.errors
        text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        if len(text) <= self.budget:
            return answer
        return {
            "cut": text[: self.budget],
            "note": f"The answer has {len(text)} characters and was cut after {self.budget}. Ask for fewer fields, or page with arguments.",
        }
