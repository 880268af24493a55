"""OpenAI-compatible Chat Completions (OpenAI, vLLM, Ollama, llama.cpp servers) over httpx."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import httpx

from .._errors import ModelError
from .._tools import ToolCall
from ..session._context import Message
from ._base import HttpModel, ModelResponse, Usage, arguments_text

__all__ = ["OpenAIModel", "to_openai_messages"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIModel(HttpModel):
    """`POST {base_url}/chat/completions`. The key comes from `api_key` or `OPENAI_API_KEY`; local
    servers that need none work without it."""

    provider = "OpenAI-compatible server"
    key_variable = "OPENAI_API_KEY"

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        strict: bool = False,
        parallel_tool_calls: bool | None = True,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra: dict[str, Any] | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        retry_wait: float = 1.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
            timeout=timeout,
            max_retries=max_retries,
            retry_wait=retry_wait,
            transport=transport,
        )
        self.name = name
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.tool_format = "openai-strict" if strict else "openai"
        self.parallel_tool_calls = parallel_tool_calls
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.extra = dict(extra or {})

    async def complete(self, messages: Sequence[Message], tools: list[dict[str, Any]]) -> ModelResponse:
        if not self.api_key and self.base_url == DEFAULT_BASE_URL:
            raise ModelError("No OpenAI API key: set OPENAI_API_KEY or pass api_key (or point base_url at a local server that needs none).")
        payload: dict[str, Any] = {"model": self.name, "messages": to_openai_messages(messages)}
        if tools:
            payload["tools"] = tools
            if self.parallel_tool_calls is not None:
                payload["parallel_tool_calls"] = self.parallel_tool_calls
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        payload.update(self.extra)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        data = await self.post("/chat/completions", payload, headers)
        return parse_openai_response(data)


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content})
        elif message.role == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                item["tool_calls"] = [
                    {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments_text(call.arguments)}}
                    for call in message.tool_calls
                ]
            elif not message.content:
                item["content"] = ""
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
