"""In-process execution over a graphql-core or strawberry schema, with parsed documents cached."""

from __future__ import annotations

from inspect import isawaitable
from typing import Any

from graphql import DocumentNode, GraphQLError, GraphQLSchema, execute, parse, validate

from .._errors import ExecutorError
from ._base import Response

__all__ = ["LocalExecutor"]

_CACHE_LIMIT = 512


class LocalExecutor:
    """Runs documents against a schema in this process.

    Documents dagtools builds are valid by construction, so they skip validation; pass
    `validate_documents=True` for documents a person wrote. Strawberry schemas run through their
    graphql-core schema, so the cost per call is graphql-core's own.
    """

    def __init__(self, schema: Any, *, context_value: Any = None, root_value: Any = None, validate_documents: bool = False) -> None:
        inner = getattr(schema, "_schema", None)
        self.schema: GraphQLSchema = inner if isinstance(inner, GraphQLSchema) else schema
        if not isinstance(self.schema, GraphQLSchema):
            raise TypeError(f"LocalExecutor needs a GraphQLSchema or strawberry Schema, not {type(schema).__name__}")
        self.context_value = context_value
        self.root_value = root_value
        self.validate_documents = validate_documents
        self._documents: dict[str, DocumentNode] = {}

    def _parse(self, document: str) -> DocumentNode | list[GraphQLError]:
        node = self._documents.get(document)
        if node is not None:
            return node
        try:
            node = parse(document)
        except GraphQLError as error:
            return [error]
        if self.validate_documents:
            errors = validate(self.schema, node)
            if errors:
                return errors
        if len(self._documents) >= _CACHE_LIMIT:
            self._documents.pop(next(iter(self._documents)))
        self._documents[document] = node
        return node

    async def execute(self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None) -> Response:
        node = self._parse(document)
        if isinstance(node, list):
            return Response(data=None, errors=[dict(e.formatted) for e in node])
        try:
            result = execute(
                self.schema,
                node,
                root_value=self.root_value,
                context_value=self.context_value,
                variable_values=variables,
                operation_name=operation_name,
            )
            if isawaitable(result):
                result = await result
        except GraphQLError as error:
            return Response(data=None, errors=[dict(error.formatted)])
        except Exception as error:  # a schema that cannot run at all is the host's problem, not the model's
            raise ExecutorError(f"The in-process schema failed to execute: {error}") from error
        errors = [dict(e.formatted) for e in result.errors or ()]
        return Response(data=result.data, errors=errors)

    async def aclose(self) -> None:
        return None
