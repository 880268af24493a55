"""The Anthropic Messages API on the `anthropic` SDK: `tool_use` / `tool_result` blocks and a top-level system prompt.

With `reveals` (a deferred run), the tool list marks the catalogue's tools `defer_loading`, and each
selectTools result goes back as the `tool_result` of `tool_reference` blocks that reveals the tools it
selected (made once by `DeferredTools.answer`, so each request repeats the same bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._errors import ModelError
from .._tools import ToolCall
from ..session._context import Message
from ._base import ModelResponse, Reveals, Usage, arguments_object
from ._sdk import SdkModel

__all__ = ["AnthropicModel", "to_anthropic_messages"]

DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicModel(SdkModel):
    """`client.messages.create(...)` with the key from `api_key` or `ANTHROPIC_API_KEY`."""

    provider = "Anthropic"
    key_variables = ("ANTHROPIC_API_KEY",)
    tool_format = "anthropic"
    default_base_url = DEFAULT_BASE_URL
    deferred_format = "anthropic"

    sdk_module = sdk_extra = "anthropic"
    sdk_error_name = "AnthropicError"
    base_url_variable = "ANTHROPIC_BASE_URL"
    default_max_tokens = 4096

    def __init__(self, name: str, **options: Any) -> None:
        """`options`: `SdkModel`'s (base_url, api_key, max_tokens, temperature, extra, timeout, max_retries)."""
        super().__init__(name, **options)
        if self.base_url.endswith("/v1"):  # accept either form of the base URL: the SDK adds /v1
            self.base_url = self.base_url[:-3]

    async def request(self, messages: Sequence[Message], tools: list[dict[str, Any]], reveals: Reveals | None = None) -> ModelResponse:
        client = self.stainless_client(self.sdk.AsyncAnthropic)
        system, wire = to_anthropic_messages(messages, reveals)
        options: dict[str, Any] = {}
        if system:
            options["system"] = system
        if tools:
            options["tools"] = tools
            options["tool_choice"] = {"type": "auto"}
        options.update(self.sampling())
        message = await client.messages.create(model=self.name, messages=wire, extra_body=self.extra or None, **options)
        return parse_anthropic_response(message.to_dict())


def to_anthropic_messages(messages: Sequence[Message], reveals: Reveals | None = None) -> tuple[str, list[dict[str, Any]]]:
    """System text, and user/assistant turns that alternate as the API requires (tool results ride in
    user turns, merged with any text that follows them). A result whose call is in `reveals` is sent
    as the blocks found there."""
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for message in messages:
        if message.role == "system":
            system.append(message.content)
        elif message.role == "tool" and reveals and message.tool_call_id and message.tool_call_id in reveals:
            push("user", reveals[message.tool_call_id])
        elif message.role == "tool":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}
            if message.is_error:
                block["is_error"] = True
            push("user", [block])
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
            blocks += [
                {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments_object(call.arguments)}
                for call in message.tool_calls
            ]
            push("assistant", blocks or [{"type": "text", "text": "(no answer)"}])
        else:
            push("user", [{"type": "text", "text": message.content or "(empty)"}])
    # Tool results must come first in their user turn.
    for item in out:
        if item["role"] == "user":
            item["content"].sort(key=lambda b: 0 if b.get("type") == "tool_result" else 1)
    return "\n\n".join(s for s in system if s), out


def parse_anthropic_response(data: dict[str, Any]) -> ModelResponse:
    if data.get("type") == "error":
        raise ModelError(f"Anthropic returned an error: {data.get('error')}")
    content = data.get("content")
    if not isinstance(content, list):
        raise ModelError(f"Anthropic's answer has no content list; it sent keys {sorted(data)}.")
    stop = str(data.get("stop_reason") or "end")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        if not isinstance(block, dict):
            raise ModelError(f"Anthropic sent a malformed content block: {block!r}")
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            if not block.get("name") or not block.get("id"):
                raise ModelError(f"Anthropic sent a tool_use block without a name or id: {block!r}")
            arguments = block.get("input")
            calls.append(ToolCall(name=str(block["name"]), id=str(block["id"]), arguments=arguments if isinstance(arguments, dict) else {}))
    if stop == "refusal":
        raise ModelError("The model refused: " + (" ".join(texts) or "no reason given"))
    if stop == "end_turn":
        stop = "end"
    elif stop == "tool_use":
        stop = "tool_calls"
    usage = data.get("usage") or {}
    return ModelResponse(
        text="\n".join(t for t in texts if t),
        tool_calls=tuple(calls),
        stop_reason=stop,
        usage=Usage(input_tokens=int(usage.get("input_tokens") or 0), output_tokens=int(usage.get("output_tokens") or 0)),
    )
