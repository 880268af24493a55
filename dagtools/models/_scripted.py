"""Models for tests, demos and replays: `ScriptedModel` answers from a list of turns, `FunctionModel`
computes each answer from the conversation so far. Both keep a `history` of what they were sent.

A turn is text (`"All done."`), a list of calls (`[{tool, arguments, id?}]` or `ToolCall`s), or a
mapping `{text, calls}`. A file is YAML or JSON: `turns: [...]`, or a `dagtools call` script whose
`calls` become one turn each.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._closing import AsyncClosing
from .._errors import ConfigError
from .._tools import ToolCall
from .._yaml import read_data
from ..session._context import Message
from ..session._metatools import estimate_tokens
from ._base import ModelResponse, Usage

__all__ = ["FunctionModel", "ModelRequest", "ScriptedModel", "load_turns", "to_response"]

Turn = str | Sequence[Any] | Mapping[str, Any] | ModelResponse
END_OF_SCRIPT = "I have nothing more to do."


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """What a model was sent for one turn."""

    messages: tuple[Message, ...]
    tools: list[dict[str, Any]]

    @property
    def tool_names(self) -> list[str]:
        return [t.get("function", t).get("name", "") for t in self.tools]


def _call(item: Any, index: int) -> ToolCall:
    if isinstance(item, ToolCall):
        return item
    if isinstance(item, Mapping):
        name = item.get("tool") or item.get("name")
        if not name:
            raise ConfigError(f"A scripted call needs a `tool` name: {dict(item)!r}")
        arguments = item.get("arguments", {})
        return ToolCall(name=str(name), arguments=arguments if arguments is not None else {}, id=str(item.get("id") or ""))
    raise ConfigError(f"A scripted call must be a mapping with `tool` and `arguments`, not {item!r}.")


def to_response(turn: Any, messages: Sequence[Message] = (), tools: list[dict[str, Any]] | None = None) -> ModelResponse:
    """Normalise a turn (text, calls, `{text, calls}` or a `ModelResponse`) and estimate its usage."""
    if isinstance(turn, ModelResponse):
        return turn
    text, calls = "", []
    if isinstance(turn, str):
        text = turn
    elif isinstance(turn, ToolCall):
        calls = [turn]
    elif isinstance(turn, Mapping) and ("tool" in turn or "name" in turn):
        calls = [_call(turn, 0)]
    elif isinstance(turn, Mapping):
        unknown = set(turn) - {"text", "calls"}
        if unknown:
            raise ConfigError(f"A scripted turn has unknown keys {sorted(unknown)}; use text and calls.")
        text = str(turn.get("text") or "")
        calls = [_call(c, i) for i, c in enumerate(turn.get("calls") or [])]
    elif isinstance(turn, Sequence):
        calls = [_call(c, i) for i, c in enumerate(turn)]
    else:
        raise ConfigError(f"A scripted turn must be text, a list of calls or {{text, calls}}, not {turn!r}.")
    sent = json.dumps([m.content for m in messages] + [tools or []], ensure_ascii=False, default=str)
    said = text + json.dumps([[c.name, c.arguments] for c in calls], ensure_ascii=False, default=str)
    usage = Usage(input_tokens=estimate_tokens(sent), output_tokens=estimate_tokens(said))
    return ModelResponse(text=text, tool_calls=tuple(calls), usage=usage, stop_reason="tool_calls" if calls else "end")


def load_turns(source: str | Path | Mapping[str, Any] | Sequence[Any]) -> list[Any]:
    """Turns from a file or parsed data: `turns: [...]`, a bare list, or a call script's `calls`."""
    data: Any = source
    origin = "script"
    if isinstance(source, (str, Path)):
        origin = str(source)
        data = read_data(source, "Model script")
    if isinstance(data, Mapping):
        if "turns" in data:
            data = data["turns"]
        elif "calls" in data:
            data = [[call] for call in data["calls"] or []]
        else:
            raise ConfigError(f"Model script {origin} needs `turns` (or the `calls` of a dagtools call script).")
    if not isinstance(data, Sequence) or isinstance(data, str):
        raise ConfigError(f"Model script {origin} must be a list of turns.")
    for turn in data:
        if not isinstance(turn, BaseException):  # an exception is a turn where the model fails
            to_response(turn)  # check every turn up front, so a bad script fails before the run starts
    return list(data)


class ScriptedModel(AsyncClosing):
    """Answers with the next turn each time; once the turns run out, it says it is done (no calls)."""

    tool_format = "openai"

    def __init__(self, turns: str | Path | Mapping[str, Any] | Sequence[Any] = (), *, name: str = "script") -> None:
        self.name = name
        self.turns: list[Any] = load_turns(turns)
        self.history: list[ModelRequest] = []

    def enqueue(self, *turns: Any) -> None:
        for turn in turns:
            if not isinstance(turn, BaseException):
                to_response(turn)
        self.turns.extend(turns)

    async def complete(self, messages: Sequence[Message], tools: list[dict[str, Any]]) -> ModelResponse:
        self._check_open()
        self.history.append(ModelRequest(messages=tuple(messages), tools=list(tools)))
        turn = self.turns.pop(0) if self.turns else END_OF_SCRIPT
        if isinstance(turn, BaseException):
            raise turn
        return to_response(turn, messages, tools)

    async def aclose(self) -> None:
        self.closed = True


class FunctionModel(AsyncClosing):
    """`fn(messages, tools)` computes each answer (a turn, or an awaitable of one) from the conversation."""

    tool_format = "openai"

    def __init__(self, fn: Callable[[Sequence[Message], list[dict[str, Any]]], Any | Awaitable[Any]], *, name: str = "function") -> None:
        self.name = name
        self.fn = fn
        self.history: list[ModelRequest] = []

    async def complete(self, messages: Sequence[Message], tools: list[dict[str, Any]]) -> ModelResponse:
        self._check_open()
        self.history.append(ModelRequest(messages=tuple(messages), tools=list(tools)))
        turn = self.fn(messages, tools)
        if inspect.isawaitable(turn):
            turn = await turn
        return to_response(turn, messages, tools)

    async def aclose(self) -> None:
        self.closed = True
