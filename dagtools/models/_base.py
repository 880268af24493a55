"""What an agent needs from a model: one `complete(messages, tools)` call, and the shared HTTP plumbing.

Adapters convert the session's `Context` messages to their wire format and back. Transient failures
(429, 5xx, a dropped connection) are retried with backoff; everything else becomes a `ModelError`
whose message says what to fix.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import httpx

from .._errors import ModelError
from .._retries import Retryable, retry_after_seconds, retrying
from .._tools import ToolCall
from ..session._context import Message

__all__ = ["HttpModel", "Model", "ModelResponse", "StopReason", "Usage"]

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


class HttpModel:
    """Shared by the HTTP adapters: one client, JSON posts, retries and error messages."""

    name = "model"
    tool_format = "openai"
    provider = "model"
    key_variable = ""

    def __init__(
        self,
        *,
        base_url: str,
        timeout: float = 120.0,
        max_retries: int = 4,
        retry_wait: float = 1.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_wait = retry_wait
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def post(self, path: str, payload: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """POST JSON, retrying transient failures; the parsed answer or a `ModelError`."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout, transport=self._transport)
        url = f"{self.base_url}{path}"
        attempts = retrying(self.max_retries + 1, first=self.retry_wait, max_wait=30 * max(self.retry_wait, 0.01))
        try:
            async for attempt in attempts:
                with attempt:
                    return await self._post_once(url, payload, headers)
        except Retryable as error:
            raise ModelError(f"{self.provider} at {self.base_url} kept failing after {self.max_retries + 1} attempts: {error}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _post_once(self, url: str, payload: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        assert self._client is not None
        try:
            response = await self._client.post(url, json=payload, headers=headers)
        except (httpx.TransportError, httpx.TimeoutException) as error:
            raise Retryable(f"could not reach {url} ({type(error).__name__}: {error})") from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise Retryable(f"HTTP {status}: {_short(response.text)}", retry_after=retry_after_seconds(response.headers.get("Retry-After")))
        if status in (401, 403):
            hint = f" Check {self.key_variable} or the api_key option." if self.key_variable else ""
            raise ModelError(f"{self.provider} refused the credentials (HTTP {status}): {_short(response.text)}.{hint}")
        if status == 404:
            raise ModelError(
                f"{self.provider} has nothing at {url} (HTTP 404): {_short(response.text)}. Check the base URL and the model name."
            )
        if status >= 400:
            raise ModelError(f"{self.provider} rejected the request (HTTP {status}): {_short(response.text)}")
        try:
            data = response.json()
        except json.JSONDecodeError:
            raise ModelError(f"{self.provider} answered with something that is not JSON: {_short(response.text)}") from None
        if not isinstance(data, dict):
            raise ModelError(f"{self.provider} answered with JSON that is not an object: {_short(response.text)}")
        return data


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
