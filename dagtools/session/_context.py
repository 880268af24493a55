"""The conversation a session owns while it runs tools (seed 001): messages, calls and results."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from .._tools import ToolCall, ToolResult

__all__ = ["Context", "Message", "Role"]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, kw_only=True)
class Message:
    """One turn: text, the tool calls an assistant made, or the result of one call."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False


class Context:
    """An append-only list of messages with the bookkeeping tool calls need."""

    def __init__(self, messages: list[Message] | None = None) -> None:
        self.messages: list[Message] = list(messages or [])
        # The ids of the calls in messages[:_indexed], whose last message was _last: every call asks
        # whether it is already here, and scanning the whole conversation each time made a long
        # session's calls ever slower. Hosts may edit `messages` in place; a prefix that changed is read again.
        self._call_ids: set[str] = set()
        self._indexed = 0
        self._last: Message | None = None

    def insert(self, message: Message) -> None:
        self.messages.append(message)

    def add_user(self, text: str) -> None:
        self.insert(Message(role="user", content=text))

    def add_assistant(self, text: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> None:
        self.insert(Message(role="assistant", content=text, tool_calls=tuple(tool_calls)))

    def add_result(self, result: ToolResult) -> None:
        self.insert(Message(role="tool", content=result.content, tool_call_id=result.call_id, name=result.name, is_error=result.is_error))

    def has_call(self, call_id: str) -> bool:
        if not call_id:
            return False
        messages, indexed = self.messages, self._indexed
        if indexed > len(messages) or (indexed and messages[indexed - 1] is not self._last):
            self._call_ids.clear()
            indexed = 0
        for message in messages[indexed:]:
            self._call_ids.update(call.id for call in message.tool_calls)
        self._indexed, self._last = len(messages), messages[-1] if messages else None
        return call_id in self._call_ids

    def has_result(self, call_id: str) -> bool:
        return any(m.role == "tool" and m.tool_call_id == call_id for m in self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)
