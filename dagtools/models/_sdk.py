"""What the adapters on official SDKs share: keys, options, the guarded HTTP client and error messages.

Each adapter builds its SDK's client once, with the SDK's own retries (`max_retries`) and timeout,
over `guarded_client` (see `_wire`). Errors the SDKs raise become one `ModelError` whose message
names the cause: the HTTP status and the server's own error text, what to check next, never a key.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from typing import Any

from .._closing import AsyncClosing
from .._errors import ConfigError, ModelError, install_command
from .._redact import redact
from ..session._context import Message
from ._base import ModelResponse, Reveals

__all__ = ["SdkModel", "import_sdk"]

#: Statuses the SDKs retry on their own; an error with one of these has used up its retries.
RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


def import_sdk(module: str, extra: str) -> Any:
    """The SDK module, or a `ConfigError` that says which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"This model needs the {module} package: {install_command(extra)}.") from None


class SdkModel(AsyncClosing):
    """Options every adapter takes. `extra` is merged into each request body (provider options such
    as temperature, top_k or tool_choice), after dagtools' own fields, so it can override them."""

    name = "model"
    tool_format = "openai"
    provider = "model"
    key_variables: tuple[str, ...] = ()
    default_base_url = ""

    #: The SDK's import name, the extra that installs it, and its base exception's name.
    sdk_module = ""
    sdk_extra = ""
    sdk_error_name = ""
    #: The environment variable the SDK itself reads its base URL from, if any.
    base_url_variable: str | None = None
    #: `max_tokens` when none is given (Anthropic requires one).
    default_max_tokens: int | None = None

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra: dict[str, Any] | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
    ) -> None:
        self.sdk: Any = import_sdk(self.sdk_module, self.sdk_extra) if self.sdk_module else None
        if self.sdk_error_name:
            self.sdk_error = getattr(self.sdk, self.sdk_error_name)
        if max_retries < 0:
            raise ConfigError("max_retries must be 0 or more.")
        if timeout <= 0:
            raise ConfigError("timeout must be more than 0 seconds.")
        self.name = name
        from_environment = os.environ.get(self.base_url_variable) if self.base_url_variable else None
        self.base_url = (base_url or from_environment or self.default_base_url).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.extra = dict(extra or {})
        self.max_tokens = max_tokens if max_tokens is not None else self.default_max_tokens
        self.temperature = temperature
        self.client: Any = None
        self.api_key = api_key if api_key is not None else next((os.environ[v] for v in self.key_variables if os.environ.get(v)), None)
        if not self.api_key:
            self.api_key = self.missing_key()

    def sampling(self, max_tokens_key: str = "max_tokens") -> dict[str, Any]:
        """The request's length and temperature options, where set (each wire names the first its way)."""
        options: dict[str, Any] = {}
        if self.max_tokens is not None:
            options[max_tokens_key] = self.max_tokens
        if self.temperature is not None:
            options["temperature"] = self.temperature
        return options

    def stainless_client(self, factory: Any) -> Any:
        """The OpenAI or Anthropic SDK's async client (`factory`), made once, over the guarded HTTP client."""
        if self.client is None:
            self.client = factory(
                api_key=self.api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
                http_client=self.http_client(),
            )
        return self.client

    def missing_key(self) -> str:
        """Called at construction without a key: a placeholder for servers that need none, or an error
        raised before anything else happens (so a run fails before it starts, not after)."""
        variables = " or ".join(self.key_variables)
        raise ModelError(f"No {self.provider} API key: set {variables} or pass api_key.")

    async def complete(self, messages: Sequence[Message], tools: list[dict[str, Any]], *, reveals: Reveals | None = None) -> ModelResponse:
        """One model turn. `reveals` (adapters with a `deferred_format` only): `tools` is a deferred
        list, and these selectTools results go back as the items that reveal tools."""
        self._check_open()
        if reveals is not None and self.deferred_format is None:
            raise ConfigError(f"The {self.provider} wire format cannot defer tools; send the session's tools instead.")
        try:
            return await self.request(messages, tools, reveals)
        except ModelError:
            raise
        except Exception as error:
            raise self.model_error(error) from None

    #: The wire format in which this adapter can defer tools, if it can (see `DeferringModel`).
    deferred_format: str | None = None

    async def request(self, messages: Sequence[Message], tools: list[dict[str, Any]], reveals: Reveals | None = None) -> ModelResponse:
        raise NotImplementedError

    def model_error(self, error: Exception) -> ModelError:
        """An SDK's exception as a `ModelError`: the status, the server's words, and what to check."""
        status = getattr(error, "status_code", None) or getattr(error, "code", None)
        if not isinstance(status, int):
            return self.other_error(error)
        response = getattr(error, "response", None)
        text = getattr(response, "text", "") if response is not None else ""
        from ._wire import server_message

        body = getattr(error, "body", None)
        if body is None:
            body = getattr(error, "details", None)
        cause = server_message(body, text or str(error), [self.api_key or ""])
        where = f"{self.provider} at {self.base_url}"
        if status in (401, 403):
            hint = f" Check {' or '.join(self.key_variables)} (or the api_key option)." if self.key_variables else ""
            return ModelError(f"{where} refused the credentials (HTTP {status}): {cause}.{hint}")
        if status == 404:
            return ModelError(f"{where} has no such model or endpoint (HTTP 404): {cause}. Check the model name and --base-url.")
        if status in RETRIED_STATUSES:
            tries = f" after {self.max_retries + 1} attempts" if self.max_retries else ""
            return ModelError(f"{where} kept failing{tries} (HTTP {status}): {cause}")
        return ModelError(f"{where} rejected the request (HTTP {status}): {cause}")

    def other_error(self, error: Exception) -> ModelError:
        text = redact(str(error), [self.api_key or ""]) or type(error).__name__
        cause = error.__cause__ or error.__context__
        if cause is not None and str(cause) and str(cause) not in text:
            text += f" ({type(cause).__name__}: {redact(str(cause), [self.api_key or ''])})"
        if "timed out" in text.lower() or "timeout" in type(error).__name__.lower():
            return ModelError(f"{self.provider} at {self.base_url} sent no answer in time: {text}. Allow more time (--turn-timeout).")
        if "connection" in type(error).__name__.lower():
            return ModelError(f"Could not reach {self.provider} at {self.base_url}: {text}. Check --base-url and the network.")
        return ModelError(f"{self.provider} failed: {type(error).__name__}: {text}")

    #: The SDK's base exception class, when it retries or wraps any other exception from its HTTP client.
    sdk_error: type[Exception] | None = None

    def http_client(self) -> Any:
        from ._wire import guarded_client, stop_error

        error_type = stop_error(self.sdk_error) if self.sdk_error is not None else ModelError
        return guarded_client(self.provider, timeout=self.timeout, secrets=[self.api_key or ""], error_type=error_type)

    async def aclose(self) -> None:
        """Close the SDK's client (the Stainless SDKs close the HTTP client they were given with it)."""
        self.closed = True
        client = getattr(self, "client", None)
        if client is not None:
            await client.close()
            self.client = None
