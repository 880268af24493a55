"""Gemini's `generateContent` on the `google-genai` SDK: `functionCall` / `functionResponse` parts.

Tools are declared with their JSON Schema as it is (`parameters_json_schema`), so the catalogue's
schemas need no translation into Gemini's own schema type. Gemini asks for the `thought_signature`
of each function call back with the call; `ToolCall` has no room for it, so the model keeps them by
call id for the rest of the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._errors import ModelError
from .._tools import ToolCall
from ..session._context import Message
from ._base import ModelResponse, Reveals, Usage, arguments_object
from ._sdk import SdkModel

__all__ = ["GeminiModel", "to_gemini_contents"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"


class GeminiModel(SdkModel):
    """`client.aio.models.generate_content(...)` with the key from `api_key`, `GEMINI_API_KEY` or
    `GOOGLE_API_KEY`. `retry_wait` is the SDK's first delay between attempts (seconds)."""

    provider = "Gemini"
    key_variables = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    tool_format = "gemini"
    default_base_url = DEFAULT_BASE_URL

    sdk_module = "google.genai"
    sdk_extra = "gemini"
    base_url_variable = "GOOGLE_GEMINI_BASE_URL"

    def __init__(self, name: str, *, retry_wait: float = 1.0, **options: Any) -> None:
        """`options`: `SdkModel`'s (base_url, api_key, max_tokens, temperature, extra, timeout, max_retries)."""
        super().__init__(name, **options)
        self.retry_wait = retry_wait
        self.signatures: dict[str, Any] = {}  # call id -> the thought_signature Gemini sent with it

    async def request(self, messages: Sequence[Message], tools: list[dict[str, Any]], reveals: Reveals | None = None) -> ModelResponse:
        types = self.sdk.types
        if self.client is None:
            self.http = self.http_client()
            options = types.HttpOptions(
                base_url=self.base_url,
                timeout=int(self.timeout * 1000),
                retry_options=types.HttpRetryOptions(attempts=self.max_retries + 1, initial_delay=self.retry_wait, jitter=self.retry_wait),
                httpx_async_client=self.http,
                extra_body=self.extra or None,
            )
            self.client = self.sdk.Client(api_key=self.api_key, http_options=options)
        system, contents = to_gemini_contents(messages, self.signatures)
        config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        if system:
            config["system_instruction"] = system
        if tools:
            declarations = [
                types.FunctionDeclaration(name=t["name"], description=t.get("description"), parameters_json_schema=t.get("parameters"))
                for t in tools
            ]
            config["tools"] = [types.Tool(function_declarations=declarations)]
            config["tool_config"] = {"function_calling_config": {"mode": "AUTO"}}
        config.update(self.sampling("max_output_tokens"))
        response = await self.client.aio.models.generate_content(
            model=self.name, contents=contents, config=types.GenerateContentConfig(**config)
        )
        return self.parse(response)

    def parse(self, response: Any) -> ModelResponse:
        candidates = response.candidates or []
        if not candidates:
            feedback = response.prompt_feedback
            reason = getattr(feedback, "block_reason", None) if feedback is not None else None
            raise ModelError(f"Gemini gave no answer{f' (blocked: {reason})' if reason else ''}.")
        candidate = candidates[0]
        texts: list[str] = []
        calls: list[ToolCall] = []
        for part in (candidate.content.parts if candidate.content else None) or []:
            if part.function_call is not None:
                call = part.function_call
                if not call.name:
                    raise ModelError(f"Gemini sent a function call without a name: {call!r}")
                call_id = call.id or f"gemini_{len(self.signatures) + 1}"
                if part.thought_signature:
                    self.signatures[call_id] = part.thought_signature
                calls.append(ToolCall(name=call.name, arguments=dict(call.args or {}), id=call_id))
            elif part.text and not part.thought:
                texts.append(part.text)
        finish = str(getattr(candidate.finish_reason, "value", candidate.finish_reason) or "STOP")
        if finish in ("SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII") and not calls:
            raise ModelError(f"Gemini withheld its answer ({finish}).")
        stop = "tool_calls" if calls else "max_tokens" if finish == "MAX_TOKENS" else "end" if finish == "STOP" else finish.lower()
        usage = response.usage_metadata
        output = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0) if usage else 0
        return ModelResponse(
            text="\n".join(texts),
            tool_calls=tuple(calls),
            stop_reason=stop,
            usage=Usage(input_tokens=(usage.prompt_token_count or 0) if usage else 0, output_tokens=output),
        )

    async def aclose(self) -> None:
        self.closed = True
        if self.client is not None:
            await self.client.aio.aclose()
            await self.http.aclose()
            self.client = None


def to_gemini_contents(messages: Sequence[Message], signatures: dict[str, Any] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """System text, and `user` / `model` contents; function responses ride in user contents, named
    after their call (Gemini matches them by name and order, and by id where it sent one)."""
    signatures = signatures or {}
    system: list[str] = []
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}

    def push(role: str, parts: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": list(parts)})

    for message in messages:
        if message.role == "system":
            system.append(message.content)
        elif message.role == "assistant":
            parts: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
            for call in message.tool_calls:
                names[call.id] = call.name
                part: dict[str, Any] = {"function_call": {"id": call.id, "name": call.name, "args": arguments_object(call.arguments)}}
                if call.id in signatures:
                    part["thought_signature"] = signatures[call.id]
                parts.append(part)
            push("model", parts or [{"text": "(no answer)"}])
        elif message.role == "tool":
            call_id = message.tool_call_id or ""
            name = message.name or names.get(call_id, "")
            push("user", [{"function_response": {"id": call_id, "name": name, "response": _response_object(message.content)}}])
        else:
            push("user", [{"text": message.content or "(empty)"}])
    return "\n\n".join(s for s in system if s), out


def _response_object(content: str) -> dict[str, Any]:
    """Gemini wants an object: a result that is one is sent as it is, anything else under `output`."""
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        value = content
    return value if isinstance(value, dict) else {"output": value}
