"""OpenAI-compatible Chat Completions (OpenAI, vLLM, Ollama, llama.cpp servers) on the `openai` SDK."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._errors import ModelError
from .._tools import ToolCall
from ..session._context import Message
from ._base import ModelResponse, Reveals, Usage, arguments_text
from ._sdk import SdkModel

__all__ = ["OpenAIModel", "to_openai_messages"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: What the SDK is given as the key for a server that needs none (it refuses to start without one).
NO_KEY = "no-key"


class OpenAIModel(SdkModel):
    """`client.chat.completions.create(...)`. The key comes from `api_key` or `OPENAI_API_KEY`; a
    server at another `base_url` (a local one) may need none. Whenever tools are offered,
    `tool_choice` is "auto": some compatible servers leave the tools out of the prompt without it."""

    provider = "OpenAI-compatible server"
    key_variables = ("OPENAI_API_KEY",)
    default_base_url = DEFAULT_BASE_URL

    sdk_module = sdk_extra = "openai"
    sdk_error_name = "OpenAIError"
    base_url_variable = "OPENAI_BASE_URL"

    def __init__(self, name: str, *, strict: bool = False, parallel_tool_calls: bool | None = True, **options: Any) -> None:
        """`options`: `SdkModel`'s (base_url, api_key, max_tokens, temperature, extra, timeout, max_retries)."""
        super().__init__(name, **options)
        self.tool_format = "openai-strict" if strict else "openai"
        self.parallel_tool_calls = parallel_tool_calls

    def missing_key(self) -> str:
        if self.base_url != DEFAULT_BASE_URL:
            return NO_KEY
        raise ModelError("No OpenAI API key: set OPENAI_API_KEY or pass api_key (or point --base-url at a server that needs none).")

    def openai_client(self) -> Any:
        return self.stainless_client(self.sdk.AsyncOpenAI)

    async def request(self, messages: Sequence[Message], tools: list[dict[str, Any]], reveals: Reveals | None = None) -> ModelResponse:
        options: dict[str, Any] = {}
        if tools:
            options["tools"] = tools
            options["tool_choice"] = "auto"
            if self.parallel_tool_calls is not None:
                options["parallel_tool_calls"] = self.parallel_tool_calls
        options.update(self.sampling())
        completion = await self.openai_client().chat.completions.create(
            model=self.name, messages=to_openai_messages(messages), extra_body=self.extra or None, **options
        )
        return parse_openai_response(completion.to_dict())


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content})
        elif message.role == "assistant":
            # Text beside tool calls, "" when there is none: llama-cpp-python answers `"content": null` with a
            # 500, and its chat templates read `message.content`, so a message without the key fails too.
            item: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
            if message.tool_calls:
                item["tool_calls"] = [
                    {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments_text(call.arguments)}}
                    for call in message.tool_calls
                ]
            out.append(item)
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def parse_openai_response(data: dict[str, Any]) -> ModelResponse:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = data.get("error")
        detail = f": {error}" if error else f"; it sent keys {sorted(data)}"
        raise ModelError(f"The model's answer has no choices{detail}.")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ModelError("The model's answer has no message in its first choice.")
    if message.get("refusal"):
        raise ModelError(f"The model refused: {message['refusal']}")
    calls = []
    for index, raw in enumerate(message.get("tool_calls") or []):
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            raise ModelError(f"The model sent a malformed tool call: {raw!r}")
        arguments = function.get("arguments")
        if arguments is None:
            arguments = {}
        calls.append(ToolCall(name=str(function["name"]), arguments=arguments, id=str(raw.get("id") or f"call_{index}")))
    usage = data.get("usage") or {}
    finish = choice.get("finish_reason") or ("tool_calls" if calls else "end")
    if finish == "stop":
        finish = "end"
    elif finish == "length":
        finish = "max_tokens"
    elif finish == "content_filter" and not calls and not message.get("content"):
        raise ModelError("The model's answer was withheld by the provider's content filter.")
    return ModelResponse(
        text=message.get("content") or "",
        tool_calls=tuple(calls),
        stop_reason=str(finish),
        usage=Usage(input_tokens=int(usage.get("prompt_tokens") or 0), output_tokens=int(usage.get("completion_tokens") or 0)),
    )
