"""Deferred renderings: the whole tool list is sent once, and a selected tool is revealed in place.

Providers cache the prompt prefix, and the tool list comes first in it. In dynamic mode each
`selectTools` grows the list, so every later request misses the cache from its first byte. Two wire
formats can declare a tool without showing it to the model, and show it later without touching the
list:

- Anthropic Messages: a tool with `"defer_loading": true` stays out of the model's context until a
  `tool_result` holding `{"type": "tool_reference", "tool_name": ...}` blocks names it; the tool keeps
  its flag afterwards, so the list stays byte-identical.
- OpenAI Responses: deferred functions (`"defer_loading": true`) need a `tool_search` tool beside them.
  Here `selectTools` itself is that tool, run by the client (`"execution": "client"`): the model's
  `tool_search_call` is a selectTools call, and the `tool_search_output` that answers it carries the
  definitions of the tools it selected.

Other formats (Chat Completions, Gemini, MCP) have no such channel: there a constant list means
fixed mode's small set of tools. `DEFERRED_FORMATS` names the formats this module renders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._tools import Tool
from ._render import render_tool

__all__ = ["DEFERRED_FORMATS", "deferred_format", "render_deferred", "reveal_anthropic", "reveal_openai_responses"]

DEFERRED_FORMATS: tuple[str, ...] = ("anthropic", "openai-responses")


def deferred_format(format: str) -> str:
    """`format`, when it can defer tools; otherwise a ValueError that says what to use instead."""
    if format not in DEFERRED_FORMATS:
        raise ValueError(
            f"The {format!r} tool format cannot declare a tool without showing it, so it has no deferred rendering "
            f"(formats that do: {', '.join(DEFERRED_FORMATS)}). For a constant tool list there, use fixed mode's tools."
        )
    return format


def render_deferred(
    search: Tool, shown: Sequence[Tool], deferred: Sequence[Tool], format: str, *, late: Sequence[Tool] = ()
) -> list[dict[str, Any]]:
    """The tool list of a deferred run: `search` (the tool whose calls reveal, selectTools) and `shown`
    as usual, then every `deferred` tool flagged, then `late`.

    `late` holds tools shown after the list was first sent (host tools added later, a selected tool the
    list left out): they are appended, so the list before them stays a cached prefix.
    On `openai-responses` the search tool becomes the client-run `tool_search` tool.
    """
    deferred_format(format)
    rendered: list[dict[str, Any]]
    if format == "openai-responses":
        rendered = [{"type": "tool_search", "execution": "client", "description": search.description, "parameters": search.parameters}]
    else:
        rendered = [render_tool(search, format)]
    rendered += [render_tool(tool, format) for tool in shown]
    rendered += [{**render_tool(tool, format), "defer_loading": True} for tool in deferred]
    rendered += [render_tool(tool, format) for tool in late]
    return rendered


def reveal_anthropic(call_id: str, names: Sequence[str], text: str, *, is_error: bool = False) -> list[dict[str, Any]]:
    """The user-turn content blocks that answer a selectTools call on Anthropic.

    The `tool_result` holds only `tool_reference` blocks (what reveals the tools); a note beyond a
    plain "ok" (names that were not found, tools dropped to stay under the cap) follows as a text
    block of the same user turn (after all of the turn's `tool_result` blocks, as Anthropic requires).
    With nothing revealed, the result is the text itself.
    """
    if not names:
        result = {"type": "tool_result", "tool_use_id": call_id, "content": [{"type": "text", "text": text or "ok"}]}
        return [{**result, "is_error": True} if is_error else result]
    blocks: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": call_id, "content": [{"type": "tool_reference", "tool_name": name} for name in names]}
    ]
    if text and text != "ok":
        blocks.append({"type": "text", "text": text})
    return blocks


def reveal_openai_responses(call_id: str, tools: Sequence[Tool], text: str) -> list[dict[str, Any]]:
    """The input items that answer a selectTools `tool_search_call` on the OpenAI Responses API.

    A `tool_search_output` carries the revealed definitions, flagged as they are in the list; a note
    beyond "ok" (or an error) follows as a user message, since the output item has no text of its own.
    """
    items: list[dict[str, Any]] = [
        {
            "type": "tool_search_output",
            "call_id": call_id,
            "execution": "client",
            "status": "completed",
            "tools": [{**render_tool(tool, "openai-responses"), "defer_loading": True} for tool in tools],
        }
    ]
    if text and text != "ok":
        items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    return items
