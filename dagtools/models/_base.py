"""What an agent needs from a model: one `complete(messages, tools)` call, and what it answers.

Adapters convert the session's `Context` messages to their wire format and back (see `_sdk` for the
ones on official SDKs); failures become a `ModelError` whose message says what to fix.

A `DeferringModel` (Anthropic Messages, OpenAI Responses) can also take a constant tool list in
which selected tools are revealed in place: `complete(..., reveals=...)` maps the id of each
selectTools call to the wire items that answer it (see dagtools.session._deferred_tools).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._tools import ToolCall
from ..session._context import Message

__all__ = ["DeferringModel", "Model", "Reveals", "ModelResponse", "StopReason", "Usage", "arguments_object", "arguments_text"]

StopReason = str  # "tool_calls", "end", "max_tokens", or a provider's own reason


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Tokens a model call (or a whole run) cost, as the provider counted them."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(input_tokens=self.input_tokens + other.input_tokens, output_tokens=self.output_tokens + other.output_tokens)

    def to_json(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "total_tokens": self.total_tokens}


@dataclass(frozen=True, kw_only=True)
class ModelResponse:
    """One assistant turn: its text, the tool calls it made, what it cost and why it stopped."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end"


@runtime_checkable
class Model(Protocol):
    """Anything that answers a conversation. `tool_format` names the provider format its tools use."""

    name: str
    tool_format: str

    async def complete(self, messages: Sequence[Message], tools: list[dict[str, Any]]) -> ModelResponse: ...

    async def aclose(self) -> None:
        """Release the model's client (its connections); the models dagtools ships are also `async with`
        context managers."""
        ...


#: A selectTools call's id -> the wire items that answer it and reveal the tools it selected.
Reveals = Mapping[str, list[dict[str, Any]]]


@runtime_checkable
class DeferringModel(Protocol):
    """A model whose wire format can list a tool without showing it and reveal it later.

    `deferred_format` names that format ("anthropic" or "openai-responses"). With `reveals`, the tool
    list is the deferred rendering, and the selectTools results named in `reveals` are sent as those
    items instead of plain tool results."""

    name: str
    tool_format: str
    deferred_format: str

    async def complete(
        self, messages: Sequence[Message], tools: list[dict[str, Any]], *, reveals: Reveals | None = None
    ) -> ModelResponse: ...


def arguments_object(arguments: dict[str, Any] | str) -> dict[str, Any]:
    """A call's arguments as an object, for wire formats that need one even when the model sent bad JSON."""
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return {"_raw_arguments": arguments}
    return parsed if isinstance(parsed, dict) else {"_raw_arguments": arguments}


def arguments_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
