"""Execution over HTTP: POST the document as JSON, retry what is safe to retry, explain what failed.

Queries are retried with exponential backoff on connection errors, timeouts, 429 and 5xx answers,
waiting at least as long as a `Retry-After` header asks. A document whose operation is a mutation is
sent exactly once: a mutation that timed out may have run, and running it twice is worse than failing.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import httpx
from graphql import GraphQLError, OperationDefinitionNode, OperationType, parse

from .._errors import ExecutorError, HttpStatusError, TransportError
from .._retries import Retryable, retry_after_seconds, retrying
from ._base import Response

__all__ = ["HttpExecutor", "Progress", "env_headers", "merge_headers"]

Progress = Callable[[int, "int | None"], None]
"""Called as bytes of an answer arrive: (received so far, Content-Length or None)."""

#: How much of an unexpected body an error message quotes.
_EXCERPT = 200
#: Statuses worth asking again for: rate limited, or the server (or a proxy before it) failed.
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 520, 521, 522, 523, 524})
_HINTS = {
    400: "the server rejected the request; check that the URL is a GraphQL endpoint",
    401: "check the Authorization header (-H 'Authorization: Bearer ...' or DAGTOOLS_AUTHORIZATION)",
    403: "check the Authorization header and the token's permissions",
    404: "check the URL: GraphQL endpoints are often at /graphql",
    405: "the endpoint does not accept POST; check the URL",
    407: "a proxy wants credentials",
    413: "the request was too large",
    429: "the API is rate limiting requests; try again later",
}


class _Attempt(Retryable):
    """One failed attempt that may be retried; carries the error to raise when attempts run out."""

    def __init__(self, error: ExecutorError, *, retry_after: float | None = None) -> None:
        super().__init__(str(error), retry_after=retry_after)
        self.error = error


class HttpExecutor:
    """Runs documents against a GraphQL endpoint over HTTP, through one pooled `httpx.AsyncClient`.

    The client is made on first use inside the running event loop (an executor built in synchronous
    code works in the loop that later uses it) and closed by `aclose()`. A `client` passed in is used
    as is and left open: its owner closes it. `retries` counts attempts after the first; `backoff` is
    the first wait in seconds, doubling up to `max_wait`, which also caps a `Retry-After`.

    A GraphQL answer with `errors` (and maybe partial `data`) is returned, not raised, including the
    400 and 422 answers of servers that follow the GraphQL-over-HTTP spec; anything else that is not
    a GraphQL answer raises `TransportError`, `HttpStatusError` or `ExecutorError`.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        client: httpx.AsyncClient | None = None,
        backoff: float = 0.5,
        max_wait: float = 30.0,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        self.url = url
        self.headers = {"Accept": "application/graphql-response+json, application/json", **dict(headers or {})}
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait
        self._client = client
        self._owns_client = client is None
        self._loop: object | None = None

    def __repr__(self) -> str:
        return f"HttpExecutor({self.url!r})"

    async def execute(
        self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None, progress: Progress | None = None
    ) -> Response:
        payload: dict[str, Any] = {"query": document, "variables": variables or {}}
        if operation_name is not None:
            payload["operationName"] = operation_name
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        attempts = 1 if is_mutation(document, operation_name) else self.retries + 1
        tries = 0
        try:
            async for attempt in retrying(attempts, first=self.backoff, max_wait=self.max_wait):
                with attempt:
                    tries += 1
                    return await self._post(body, progress)
        except _Attempt as failed:
            error = failed.error
            error.args = (error.args[0].replace(_TRIES, f" (tried {tries} times)" if tries > 1 else ""),)
            raise error from failed.__cause__
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is None or not self._owns_client or self._loop is not _running_loop():
            return  # not ours, or made in a loop that has ended and taken its connections with it
        await client.aclose()

    # -- one attempt ---------------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        loop = _running_loop()
        if self._client is None or (self._owns_client and self._loop is not loop):
            # A client is tied to the loop it first ran in; a new loop (another anyio.run) needs its own.
            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=True)
            self._loop = loop
        return self._client

    async def _post(self, body: bytes, progress: Progress | None) -> Response:
        headers = {"Content-Type": "application/json", **self.headers}
        try:
            async with self._http().stream("POST", self.url, content=body, headers=headers) as answer:
                content = await _read(answer, progress)
        except httpx.TimeoutException as error:
            raise _Attempt(
                TransportError(
                    f"The API at {self.url} did not answer within {self.timeout:g}s{_TRIES}. Check that the server is up "
                    "and not overloaded, or allow more time (--timeout)."
                )
            ) from error
        except (httpx.TransportError, OSError) as error:
            raise _Attempt(
                TransportError(
                    f"The API at {self.url} could not be reached ({_describe(error)}){_TRIES}. Check the URL, that the "
                    "server is running, and the network or proxy between."
                )
            ) from error
        return self._answer(answer, content)

    def _answer(self, answer: httpx.Response, content: bytes) -> Response:
        status = answer.status_code
        parsed = _json(content)
        if not 200 <= status < 300:
            if status in (400, 422) and isinstance(parsed, dict) and isinstance(parsed.get("errors"), list):
                return _response(parsed)
            reason = answer.reason_phrase or ""
            hint = _HINTS.get(status) or ("the server failed; try again later" if status >= 500 else "check the URL and headers")
            message = f"The API at {self.url} answered HTTP {status} {reason}".rstrip()
            if status in _RETRY_STATUSES:
                message += _TRIES
            excerpt = _excerpt(content)
            if excerpt:
                message += f": {excerpt}"
            error = HttpStatusError(f"{message}. Hint: {hint}.", status_code=status, body=content[:4096].decode("utf-8", "replace"))
            if status in _RETRY_STATUSES:
                raise _Attempt(error, retry_after=retry_after_seconds(answer.headers.get("Retry-After")))
            raise error
        if parsed is _NOT_JSON:
            kind = answer.headers.get("Content-Type", "no content type")
            raise ExecutorError(
                f"The API at {self.url} answered with something that is not JSON ({kind}): "
                f"{_excerpt(content) or 'an empty body'}. Check that the URL is the GraphQL "
                "endpoint, not a web page."
            )
        if not isinstance(parsed, dict) or ("data" not in parsed and "errors" not in parsed):
            raise ExecutorError(
                f"The API at {self.url} answered JSON that is not a GraphQL response (no `data` "
                f"or `errors`): {_excerpt(content)}. Check that the URL is the GraphQL endpoint."
            )
        return _response(parsed)


def _running_loop() -> object | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_NOT_JSON: Any = object()
#: Where an error message says how many attempts were made, once that is known.
_TRIES = "\x00tries\x00"


async def _read(answer: httpx.Response, progress: Progress | None) -> bytes:
    if progress is None:
        return await answer.aread()
    length = answer.headers.get("Content-Length")
    total = int(length) if length and length.isdigit() else None
    chunks: list[bytes] = []
    received = 0
    async for chunk in answer.aiter_bytes():
        chunks.append(chunk)
        received += len(chunk)
        progress(received, total)
    return b"".join(chunks)


def _json(content: bytes) -> Any:
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return _NOT_JSON


def _response(parsed: dict[str, Any]) -> Response:
    data = parsed.get("data")
    errors = parsed.get("errors") or []
    if not isinstance(errors, list):
        errors = [errors]
    errors = [e if isinstance(e, dict) else {"message": str(e)} for e in errors]
    return Response(data=data if isinstance(data, dict) else None, errors=errors)


def _excerpt(content: bytes) -> str:
    text = " ".join(content.decode("utf-8", "replace").split())
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "..."


def _describe(error: BaseException) -> str:
    text = str(error).strip()
    name = type(error).__name__
    if isinstance(error, httpx.ConnectError):
        name = "connection refused or host unknown"
    elif isinstance(error, (httpx.ReadError, httpx.RemoteProtocolError, ConnectionResetError)):
        name = "connection closed or reset by the server"
    return f"{name}: {text}" if text else name


@lru_cache(maxsize=512)
def is_mutation(document: str, operation_name: str | None = None) -> bool:
    """Whether the operation that would run is a mutation; True when unsure, so nothing is repeated."""
    try:
        node = parse(document, no_location=True)
    except GraphQLError:
        return True
    operations = [d for d in node.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is not None:
        operations = [o for o in operations if o.name is not None and o.name.value == operation_name]
    if len(operations) != 1:
        return any(o.operation == OperationType.MUTATION for o in operations) or not operations
    return operations[0].operation == OperationType.MUTATION


# -- headers from the environment ------------------------------------------------------------------------


def env_headers(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Headers from `DAGTOOLS_HEADERS` (a JSON object) and `DAGTOOLS_AUTHORIZATION` (the Authorization value)."""
    environ = os.environ if environ is None else environ
    headers: dict[str, str] = {}
    raw = environ.get("DAGTOOLS_HEADERS", "").strip()
    if raw:
        try:
            value = json.loads(raw)
        except ValueError as error:
            raise ExecutorError(
                f'DAGTOOLS_HEADERS is not valid JSON ({error}); set it to an object such as {{"X-Api-Key": "..."}}.'
            ) from None
        if not isinstance(value, dict):
            raise ExecutorError('DAGTOOLS_HEADERS must be a JSON object such as {"X-Api-Key": "..."}.')
        headers = merge_headers(headers, {str(k): str(v) for k, v in value.items()})
    authorization = environ.get("DAGTOOLS_AUTHORIZATION", "").strip()
    if authorization:
        headers = merge_headers(headers, {"Authorization": authorization})
    return headers


def merge_headers(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """Later layers win; names compare case-insensitively, as HTTP says, keeping the later spelling."""
    merged: dict[str, tuple[str, str]] = {}
    for layer in layers:
        for name, value in (layer or {}).items():
            merged[name.lower()] = (name, value)
    return dict(merged.values())
