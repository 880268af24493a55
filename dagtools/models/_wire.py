"""What the model SDKs' own retries get wrong for agents, fixed under them in the HTTP transport.

The official SDKs (openai, anthropic, google-genai) retry timeouts, refused connections and every
5xx with backoff. Three of those retries hurt an agent run:

- a request that timed out is sent again while the server may still be generating the first answer,
  so identical requests queue up behind each other on a local server;
- a connection refused on the loopback interface means no server is running there, and retrying it
  five times only delays the message that says so;
- a 500 that repeats word for word is the server rejecting this request (llama.cpp-style servers
  dress validation errors as 500), so a third identical request is a waste.

`GuardedTransport` wraps the SDK's HTTP transport and ends those cases with a `ModelError` that is
also the SDK's own base error (`error_type`): the SDKs pass their own errors through without retrying
(anthropic 2.x retries any other exception from its HTTP client as a connection error). Everything
else (429, 503, a dropped connection to a remote host) keeps the SDK's retries and backoff.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import httpx2

from .._errors import ModelError
from .._limits import cap_text
from .._redact import redact

__all__ = ["GuardedTransport", "guarded_client", "is_loopback", "server_message"]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]", "0.0.0.0"})


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def server_message(body: Any, text: str = "", secrets: Iterable[str] = ()) -> str:
    """The part of an error answer that names the cause: `error.message` when the body has one (the
    OpenAI, Anthropic and Google shapes all do), else the whole text; never cut at a few hundred
    characters, never with a credential in it."""
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail")
            kind = error.get("type") or error.get("status")
            if message and isinstance(kind, str) and kind not in str(message):
                message = f"{message} ({kind})"
        elif isinstance(error, str):
            message = error
        if message is None and isinstance(body.get("detail"), (str, list)):
            message = body["detail"]
    if message is None:
        message = text or (json.dumps(body, ensure_ascii=False) if body is not None else "")
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    message = " ".join(message.split()) or "(no error text)"
    return cap_text(redact(message, secrets))


class GuardedTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that ends timeouts, refused loopback connections and repeated identical
    500s with a `ModelError` instead of letting the SDK above send the request again."""

    def __init__(
        self,
        provider: str,
        *,
        secrets: Iterable[str] = (),
        error_type: type[ModelError] = ModelError,
        inner: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.provider = provider
        self.error_type = error_type
        self.secrets = [s for s in secrets if s]
        self.inner = inner or httpx2.AsyncHTTPTransport()
        self._last_500: dict[str, str] = {}  # request fingerprint -> the error text it got

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = str(request.url.copy_with(query=None))
        try:
            response = await self.inner.handle_async_request(request)
        except httpx2.TimeoutException as error:
            raise self.error_type(
                f"{self.provider} at {url} sent no answer in time ({type(error).__name__}). The request was not sent again: the "
                "server may still be working on it. Allow more time (--turn-timeout) or use a smaller model."
            ) from None
        except httpx2.ConnectError as error:
            if not is_loopback(url):
                raise  # a remote host: the SDK's retries are right for a dropped connection
            raise self.error_type(
                f"Nothing answers at {url} ({redact(str(error), self.secrets) or 'connection refused'}). Check that the model "
                "server is running and listening on that port, and that --base-url points at it."
            ) from None
        if response.status_code != 500:
            return response
        await response.aread()
        key = _fingerprint(request)
        text = response.text
        if self._last_500.get(key) == text:
            self._last_500.pop(key, None)
            try:
                body = response.json()
            except ValueError:
                body = None
            raise self.error_type(
                f"{self.provider} answered HTTP 500 twice with the same error, so the server rejects this request rather than "
                f"failing for a moment: {server_message(body, text, self.secrets)}"
            )
        self._last_500[key] = text
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def _fingerprint(request: httpx2.Request) -> str:
    digest = hashlib.sha256(request.content).hexdigest()
    return f"{request.method} {request.url.copy_with(query=None)} {digest}"


def guarded_client(
    provider: str, *, timeout: float, secrets: Iterable[str] = (), error_type: type[ModelError] = ModelError
) -> httpx2.AsyncClient:
    """The HTTP client every SDK adapter hands its SDK: the guarded transport and one timeout."""
    return httpx2.AsyncClient(transport=GuardedTransport(provider, secrets=secrets, error_type=error_type), timeout=timeout)


def stop_error(sdk_error: type[Exception]) -> type[ModelError]:
    """A `ModelError` that is also `sdk_error`, so the SDK lets it through unretried and unwrapped."""
    return type(f"{sdk_error.__name__}Stop", (ModelError, sdk_error), {"__module__": __name__})
