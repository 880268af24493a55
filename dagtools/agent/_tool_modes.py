"""Tool modes of an agent run: the session's growing tools, or one deferred list for the whole run.

- dynamic (the default): each turn offers the session's tools as they are then, so a selectTools call
  adds its tools to the next request's list. Any model can take it; each growth changes the start of
  the prompt, and the provider's prompt cache is lost from there on.
- deferred: each turn offers the same list, `session.deferred_tools()` rendered for the model's wire
  format, in which the catalogue's tools are declared but hidden; a selectTools call's result goes
  back as the items that reveal the tools it selected (Anthropic's `tool_reference` blocks, the
  Responses API's `tool_search_output`). The tool list is the same bytes on every request, so the
  cached prefix survives each selectTools. Only adapters with a `deferred_format` (anthropic:NAME,
  openai-responses:NAME) can take it: other wire formats cannot declare a tool without showing it,
  so the mode is refused there rather than quietly changed.

The reveal of each selectTools call is made once, right after the call, and kept with the session
(not recomputed from the tools active later), so each request repeats the bytes of the last.
"""

from __future__ import annotations

import weakref
from typing import Any, Literal

from .._errors import ConfigError
from .._tools import ToolCall, ToolResult
from ..models._base import Model
from ..session._session import Session

__all__ = ["TOOL_MODES", "DeferredRun", "ToolMode", "deferred_format_for"]

ToolMode = Literal["dynamic", "deferred"]
TOOL_MODES: tuple[str, ...] = ("dynamic", "deferred")

#: Per session and wire format: each selectTools call's id -> the items that answered it.
_REVEALS: weakref.WeakKeyDictionary[Session, dict[str, dict[str, list[dict[str, Any]]]]] = weakref.WeakKeyDictionary()


def deferred_format_for(model: Model, mode: str) -> str | None:
    """The wire format `model` defers tools in when `mode` is "deferred" (None for "dynamic"); a
    `ConfigError` that says what to use when the mode is unknown or the model cannot defer."""
    if mode not in TOOL_MODES:
        raise ConfigError(f"tools must be one of {', '.join(TOOL_MODES)}, not {mode!r}.")
    if mode == "dynamic":
        return None
    format = getattr(model, "deferred_format", None)
    if not isinstance(format, str) or not format:
        name = getattr(model, "name", type(model).__name__)
        raise ConfigError(
            f"Deferred tools need a model whose API can list a tool without showing it: anthropic:NAME or "
            f"openai-responses:NAME. The model {name} cannot; run it with the default dynamic tools "
            "(leave out --tools deferred, or pass tools='dynamic')."
        )
    return format


class DeferredRun:
    """One agent run's view of the session's deferred list: the tools to send, and the reveals."""

    def __init__(self, session: Session, format: str) -> None:
        self.format = format
        self.listed = session.deferred_tools()
        self.reveals = _REVEALS.setdefault(session, {}).setdefault(format, {})

    def tools(self) -> list[dict[str, Any]]:
        """The tool list for this turn: the same bytes every turn (unless a host tool came late)."""
        return self.listed.render(self.format)

    def record(self, call: ToolCall, result: ToolResult) -> None:
        """Keep the wire items that answer `call`, when it is a selectTools call."""
        if self.listed.selects(call.name):
            self.reveals[call.id] = self.listed.answer(call, result, self.format)
