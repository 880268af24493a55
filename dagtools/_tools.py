"""The values that cross the session boundary: tool definitions, calls and results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Tool", "ToolCall", "ToolKind", "ToolResult"]

ToolKind = Literal["field", "selectTools", "save", "readResult", "client", "local", "api"]


@dataclass(frozen=True, kw_only=True, eq=False)
class Tool:
    """What the model sees (name, description, JSON Schema) and what runs it (kind and field)."""

    name: str
    description: str
    parameters: dict[str, Any]
    kind: ToolKind = "field"
    type_name: str | None = None
    field_name: str | None = None
    object_parameter: str | None = None
    returns: str | None = None
    read_only: bool = True
    destructive: bool = False


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One call the model made. `arguments` may be the raw JSON text a model produced."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a call gave back: the text the model reads and the parsed value the host can use."""

    call_id: str
    name: str
    value: Any
    is_error: bool = False
    pending: bool = False

    @classmethod
    def error(cls, call: ToolCall, message: str) -> ToolResult:
        """The result of a call that failed: the model reads `{"error": message}`."""
        return cls(call_id=call.id, name=call.name, value={"error": message}, is_error=True)

    @property
    def content(self) -> str:
        if isinstance(self.value, str):
            return self.value
        return json.dumps(self.value, ensure_ascii=False)
