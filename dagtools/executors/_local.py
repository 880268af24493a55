"""In-process execution over a graphql-core or strawberry schema, with what a document needs prepared once.

graphql-core's `execute()` does three things on every call: find the operation in the document,
coerce the variables to the schema's types, and run the resolvers. The first two give the same
answer every time for the same document and the same variables, and a session sends the same few
documents over and over (an object's identity is the same variable in every call on it). So they
are done once and kept: the parsed document with its operation per text, and the coerced
variables per text and values, where those are plain immutable values that no resolver can change
for the next call. The resolvers run every time, through the same executor class `execute()` uses.
"""

from __future__ import annotations

from enum import Enum
from inspect import isawaitable
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLSchema,
    default_field_resolver,
    default_type_resolver,
    execute,
    parse,
    validate,
)
from graphql.execution import Executor as GraphQLExecutor

try:  # the executor class graphql-core's own execute() uses, so every call runs exactly as it would there
    from graphql.execution.incremental.incremental_executor import IncrementalExecutor as _RunWith
except ImportError:  # pragma: no cover - a graphql-core that moved it: its public base class runs the same
    _RunWith = GraphQLExecutor  # type: ignore[misc,assignment]

from .._closing import AsyncClosing
from .._errors import ExecutorError
from ._base import Response

__all__ = ["LocalExecutor"]

_CACHE_LIMIT = 512
_PLAIN = frozenset((str, int, float, bool, type(None)))


class LocalExecutor(AsyncClosing):
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
        self._built: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # (fragment definitions, fragments, operation, variables)
        # execute() refuses schemas that declare @defer or @stream; such a schema keeps going through it.
        self._prepares = not (self.schema.get_directive("defer") or self.schema.get_directive("stream"))

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
        _keep(self._documents, document, node)
        return node

    def _run(self, node: DocumentNode, document: str, variables: dict[str, Any] | None, operation_name: str | None) -> Any:
        """What `execute()` gives for this call, with the operation and coerced variables of an
        earlier call of the same document and values reused."""
        if not self._prepares:
            return execute(self.schema, node, self.root_value, self.context_value, variable_values=variables, operation_name=operation_name)
        key = _key(document, operation_name, variables)
        kept = self._built.get(key) if key is not None else None
        if kept is None:
            made = _RunWith.build(self.schema, node, self.root_value, self.context_value, variables, operation_name)
            if isinstance(made, list):
                return ExecutionResult(None, errors=made)
            if key is not None and all(_immutable(v) for v in made.variable_values.coerced.values()):
                _keep(self._built, key, (made.fragment_definitions, made.fragments, made.operation, made.variable_values))
            return made.execute_operation()
        definitions, fragments, operation, coerced = kept
        # A fresh executor per call, as execute() makes: errors and work in flight are never shared between calls.
        fresh = _RunWith(
            self.schema,
            definitions,
            fragments,
            self.root_value,
            self.context_value,
            operation,
            coerced,
            default_field_resolver,
            default_type_resolver,
            default_field_resolver,
        )
        return fresh.execute_operation()

    async def execute(self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None) -> Response:
        self._check_open()
        node = self._parse(document)
        if isinstance(node, list):
            return Response(data=None, errors=[dict(e.formatted) for e in node])
        try:
            result = self._run(node, document, variables, operation_name)
            if not isinstance(result, ExecutionResult) and isawaitable(result):
                result = await result
        except GraphQLError as error:
            return Response(data=None, errors=[dict(error.formatted)])
        except Exception as error:  # a schema that cannot run at all is the host's problem, not the model's
            raise ExecutorError(f"The in-process schema failed to execute: {error}") from error
        if not isinstance(result, ExecutionResult):  # incremental delivery, which execute() refuses too
            raise ExecutorError("The in-process schema answered in parts (@defer or @stream), which dagtools does not read.")
        errors = [dict(e.formatted) for e in result.errors or ()]
        return Response(data=result.data, errors=errors)

    async def aclose(self) -> None:
        self.closed = True


def _key(document: str, operation_name: str | None, variables: dict[str, Any] | None) -> tuple[Any, ...] | None:
    """The call as a key when its variables are plain values, with their types where text alone
    would not tell them apart (1, 1.0 and true coerce differently); None when one is a list or an
    object, which is coerced afresh each time."""
    if not variables:
        return document, operation_name
    values = tuple(variables.items())
    texts = True
    for _, value in values:
        kind = type(value)
        if kind is not str:
            if kind not in _PLAIN:
                return None
            texts = False
    return (document, operation_name, values) if texts else (document, operation_name, values, tuple([type(v) for _, v in values]))


def _immutable(value: Any) -> bool:
    """Whether a coerced value can be handed to resolvers again: a custom scalar may coerce a plain
    string into an object a resolver could change."""
    return type(value) in _PLAIN or isinstance(value, Enum)


def _keep(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.pop(next(iter(cache)))
    cache[key] = value
