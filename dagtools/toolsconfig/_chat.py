"""Chat persistence through the API: `InternalSaveChatMessage` stores each message of a session's
context, `InternalGetChatMessages` loads a conversation back, so it can go on in another process.

The host drives it around each turn: `await store.load(session)` once before the first, and
`await store.save_new(session)` after each; the store remembers how much of each context it saved.
A message is saved as `role`, `content`, `function_call` (the assistant's tool calls as a JSON list
of `{"id", "name", "arguments"}`), `name` (the tool a result belongs to), `tool_call_id` and `is_error`
where the save query declares them, and the context fields. Only the parameters the save query declares are sent.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._closing import AsyncClosing
from .._errors import ConfigError, ToolCallError
from .._tools import ToolCall
from ..session._context import Context, Message
from ._apis import ApiTarget, ConfigApis
from ._format import GET_CHAT_MESSAGES, SAVE_CHAT_MESSAGE, ConfigSource, ToolEntry, context_values, load_tools_config

if TYPE_CHECKING:
    from ..session._session import Session

__all__ = ["ChatStore"]

_ROLES = ("system", "user", "assistant", "tool")


class ChatStore(AsyncClosing):
    """Saves and loads one conversation (the one the context values pick) through the API."""

    def __init__(self, config: ConfigSource, *, executors: Mapping[str, ApiTarget], context: Mapping[str, Any]) -> None:
        loaded = load_tools_config(config)
        self.save_entry = _require(loaded.save_chat_message, SAVE_CHAT_MESSAGE)
        self.get_entry = _require(loaded.get_chat_messages, GET_CHAT_MESSAGES)
        self.context = context
        self.apis = ConfigApis(executors)
        for entry in (self.save_entry, self.get_entry):
            context_values(entry, context)
            self.apis.check(entry)
        self._saved: weakref.WeakKeyDictionary[Context, int] = weakref.WeakKeyDictionary()

    async def save(self, message: Message) -> None:
        """Store one message; raises ConfigError when the API refuses it (the host's problem)."""
        fields = _message_fields(message)
        declared = self.save_entry.properties
        variables = {k: v for k, v in fields.items() if k in declared}
        variables.update(context_values(self.save_entry, self.context))
        await self._run(self.save_entry, variables)

    async def save_new(self, session: Session | Context) -> int:
        """Store the messages of the session's context not stored yet; returns how many."""
        context = session if isinstance(session, Context) else session.context
        start = self._saved.get(context, 0)
        new = context.messages[start:]
        for message in new:
            await self.save(message)
            self._saved[context] = self._saved.get(context, 0) + 1
        return len(new)

    async def messages(self) -> list[Message]:
        """The stored conversation, oldest first, as context messages."""
        data = await self._run(self.get_entry, context_values(self.get_entry, self.context))
        rows = _rows(data)
        if rows is None:
            raise ConfigError(f"{GET_CHAT_MESSAGES} answered without a list of messages: {json.dumps(data)[:200]}")
        return _messages(rows)

    async def load(self, session: Session | Context) -> int:
        """Put the stored conversation before whatever the context holds; returns how many messages."""
        context = session if isinstance(session, Context) else session.context
        loaded = await self.messages()
        context.messages[:0] = loaded
        self._saved[context] = self._saved.get(context, 0) + len(loaded)
        return len(loaded)

    async def aclose(self) -> None:
        await self.apis.aclose()

    async def _run(self, entry: ToolEntry, variables: dict[str, Any]) -> Any:
        try:
            return await self.apis.run(entry, variables)
        except ToolCallError as error:  # nothing a model did: the store or its config is at fault
            raise ConfigError(str(error)) from None


def _require(entry: ToolEntry | None, name: str) -> ToolEntry:
    if entry is None:
        raise ConfigError(f"A chat store needs a {name} entry in the tools config.")
    return entry


def _message_fields(message: Message) -> dict[str, Any]:
    function_call = None
    if message.tool_calls:
        function_call = json.dumps(
            [{"id": c.id, "name": c.name, "arguments": _arguments(c.arguments)} for c in message.tool_calls], ensure_ascii=False
        )
    return {
        "role": message.role,
        "content": message.content,
        "function_call": function_call,
        "name": message.name,
        "tool_call_id": message.tool_call_id,
        "is_error": message.is_error,
    }


def _arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _rows(data: Any) -> list[Any] | None:
    """The first list in the answer: `{"chatMessages": [...]}`, a bare list, or `{"result": [...]}`."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for value in data.values():
            found = _rows(value)
            if found is not None:
                return found
    return None


def _get(row: Mapping[str, Any], snake: str) -> Any:
    camel = snake.split("_")[0] + "".join(p.title() for p in snake.split("_")[1:])
    return row.get(snake, row.get(camel))


def _messages(rows: list[Any]) -> list[Message]:
    out: list[Message] = []
    unanswered: list[ToolCall] = []  # calls with no result yet, to pair results saved without tool_call_id
    for row in rows:
        if not isinstance(row, Mapping) or _get(row, "role") not in _ROLES:
            raise ConfigError(f"{GET_CHAT_MESSAGES} answered a message that is not one: {row!r}")
        role = _get(row, "role")
        content = _get(row, "content") or ""
        calls = _calls(_get(row, "function_call"))
        if calls:
            unanswered.extend(calls)
        call_id = _get(row, "tool_call_id")
        name = _get(row, "name")
        if role == "tool":
            match = next((c for c in unanswered if (c.id == call_id if call_id else c.name == name)), None)
            if match is not None:
                unanswered.remove(match)
                call_id = call_id or match.id
        is_error = _get(row, "is_error")
        if is_error is None:  # not stored: a result whose whole content is {"error": ...} was one
            is_error = role == "tool" and _is_error_content(content)
        out.append(
            Message(role=role, content=content, tool_calls=calls, tool_call_id=call_id or None, name=name or None, is_error=bool(is_error))
        )
    return out


def _is_error_content(content: str) -> bool:
    try:
        value = json.loads(content)
    except ValueError:
        return False
    return isinstance(value, dict) and list(value) == ["error"]


def _calls(raw: Any) -> tuple[ToolCall, ...]:
    if raw in (None, ""):
        return ()
    value = json.loads(raw) if isinstance(raw, str) else raw
    items = value if isinstance(value, list) else [value]
    return tuple(
        ToolCall(id=str(item.get("id") or ""), name=str(item["name"]), arguments=_arguments(item.get("arguments", {})))
        for item in items
        if isinstance(item, Mapping) and "name" in item
    )
