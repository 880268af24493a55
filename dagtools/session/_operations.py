"""A host's named operations as tools of one session (see catalogue._operations).

They are not listed up front: selectTools finds them by name and its search finds them by words, and
a selected operation is listed from then on (fixed mode's callTool runs one without selecting). A
call checks its variables against their GraphQL types before anything is sent, sends the document
once with the variables as they are (a `Type#N` held for an ID variable stands for its id), and
mints every object of the answer that carries an identity, so field tools chain from it.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from graphql import OperationDefinitionNode, parse
from graphql.execution.values import get_variable_values

from .._errors import ToolCallError
from .._tools import Tool
from ..calls._field import UNANSWERED, FieldCalls, not_answered
from ..catalogue._operations import ID_ALIAS, TYPE_ALIAS, Operation, OperationSet, operations_of
from ..executors._base import format_error
from ..registry._identity import Met
from ..registry._registry import Registry
from ._toolsets import Toolset, close_names

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["OperationToolset", "operation_toolset"]

_OBJECT_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*#[1-9][0-9]*$")
_MAX_DEPTH = 64
#: The key an answer's object carries its handle under (the API's own keys stay as they are).
HANDLE_KEY = "object"


def operation_toolset(session: Session, source: str) -> OperationToolset:
    """The session's operations from `source`, read and checked once per catalogue and source."""
    return OperationToolset(operations_of(session.catalogue, source), session.fields.calls, session.registry)


class OperationToolset(Toolset):
    """Named operations: found by selectTools and search, listed once selected."""

    def __init__(self, operations: OperationSet, calls: FieldCalls, registry: Registry) -> None:
        self.operations = operations
        self.calls = calls
        self.registry = registry
        self.selected: dict[str, None] = {}
        self._definitions: dict[str, OperationDefinitionNode] = {}

    def list_tools(self) -> list[Tool]:
        return [self.operations.operations[name].tool for name in self.selected]

    def version(self) -> Hashable:
        return tuple(self.selected)

    def get(self, name: str) -> Tool | None:
        found = self.operations.get(name)
        return found.tool if found is not None else None

    def claim(self, name: str) -> bool:
        """Select `name` when it is one of these operations (selectTools hands every name here first)."""
        if name not in self.operations:
            return False
        self.selected[name] = None
        return True

    def suggest(self, name: str) -> list[str]:
        return close_names(name, self.operations.names())

    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        operation = self.operations.operations[tool.name]
        variables = self._variables(operation, arguments)
        try:
            response = await self.calls.executor.execute(operation.document, variables, operation_name=operation.name)
        except UNANSWERED as error:  # the API is down or answered nonsense: the model can only wait
            raise not_answered(error, operation.name) from error
        errors = [format_error(error) for error in response.errors]
        if response.data is None:
            raise ToolCallError(f"{operation.name} failed: " + ("; ".join(errors) or "the API answered no data."))
        written = self._definition(operation).operation.value == "mutation"  # what it returns replaces what was held
        data = self._mint(response.data, operation.name, 0, "mutation" if written else "query")
        result = self.calls.long_values.present(data, operation.name)
        if errors:
            result["errors"] = errors
        return result

    # -- variables -----------------------------------------------------------------------------------

    def _variables(self, operation: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
        definition = self._definition(operation)
        declared = {v.variable.name.value for v in definition.variable_definitions or ()}
        extra = sorted(set(arguments) - declared)
        if extra:
            takes = ", ".join(sorted(declared)) or "no parameters"
            raise ToolCallError(f"{operation.name} has no parameter {', '.join(extra)}; it takes {takes}.")
        values = {name: self._resolve(value) for name, value in arguments.items()}
        checked = get_variable_values(self.calls.catalogue.schema, definition.variable_definitions or (), values, max_errors=5)
        if isinstance(checked, list):
            raise ToolCallError(f"{operation.name}: " + " ".join(error.message for error in checked) + " Nothing was sent.")
        return values

    def _resolve(self, value: Any) -> Any:
        """A `Type#N` the session holds stands for the id the API gave that object."""
        if isinstance(value, list):
            return [self._resolve(item) for item in value]
        if isinstance(value, str) and _OBJECT_ID.match(value):
            entry = self.registry.get(value)
            if entry is None:
                raise ToolCallError(f"There is no object {value}; selectTools lists the objects you hold.")
            if entry.identity is None:
                raise ToolCallError(f"{value} has no id the API gave, so an operation cannot take it; pass the value itself.")
            return entry.identity
        return value

    def _definition(self, operation: Operation) -> OperationDefinitionNode:
        if operation.name not in self._definitions:
            document = parse(operation.document, no_location=True)
            self._definitions[operation.name] = next(
                d for d in document.definitions if isinstance(d, OperationDefinitionNode) and d.name and d.name.value == operation.name
            )
        return self._definitions[operation.name]

    # -- answers -------------------------------------------------------------------------------------

    def _mint(self, value: Any, where: str, depth: int, kind: str = "query") -> Any:
        """The answer as the operation asked for it, each object that has an identity shown with its
        `Type#N` first (the fields added to read them are dropped). `kind` is the operation's: a
        mutation's answer replaces what the session held of the objects it returns."""
        if depth > _MAX_DEPTH:
            return value
        if isinstance(value, list):
            return [self._mint(item, f"{where}[{number}]", depth + 1, kind) for number, item in enumerate(value)]
        if not isinstance(value, dict):
            return value
        shown = {
            key: self._mint(item, f"{where}.{key}", depth + 1, kind) for key, item in value.items() if key not in (TYPE_ALIAS, ID_ALIAS)
        }
        type_name, id_value = value.get(TYPE_ALIAS), value.get(ID_ALIAS)
        identity = self.calls.catalogue.identity(type_name) if isinstance(type_name, str) else None
        if identity is None or id_value is None or HANDLE_KEY in shown:
            return shown
        met = Met.WRITE_LINKED if kind == "mutation" else Met.READ
        entry = self.calls.mint({**value, "__typename": type_name, identity.field: id_value}, (), met, where, "")
        return {HANDLE_KEY: entry.id, **shown}
