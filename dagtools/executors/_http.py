"""Execution over HTTP: POST the document as JSON, retry what is safe to retry, explain what failed.

Queries are retried with exponential backoff on connection errors, timeouts, 429 and 5xx answers,
waiting at least as long as a `Retry-After` header asks. A document whose operation is a mutation is
sent exactly once: a mutation that timed out may have run, and running it twice is worse than failing.

The API is untrusted, so every call is bounded: `timeout` is a deadline for the whole call (every
attempt, every wait between them, and a body that trickles in), an answer is read only up to
`max_response_bytes`, and a redirect is followed only within the same origin (scheme, host and
port), keeping every header; one to another origin stops the call, so no header, query or variable
reaches a host nobody configured. Error texts go through `redact` with the configured credentials.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import re
import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import anyio
import httpx
from graphql import GraphQLError, OperationDefinitionNode, OperationType, parse

from .._closing import AsyncClosing
from .._errors import ExecutorError, HttpStatusError, TransportError
from .._limits import MAX_RESPONSE_BYTES
from .._redact import RedactingFilter, redact, redact_json, secrets_of
from .._retries import Retryable, retry_after_seconds, retrying
from .._telemetry import active_telemetry, note_answer, note_attempt
from ._base import Response
from ._bodies import Progress, encode_json, read_capped
from ._headers import env_headers, merge_headers
from ._tls import tls_context
from ._urls import meant_host, unknown_host

__all__ = ["HttpExecutor", "Progress", "env_headers", "merge_headers"]


logger = logging.getLogger("dagtools")

#: How much of an unexpected body an error message quotes.
_EXCERPT = 200
#: Same-origin redirects followed in one attempt before giving up (a loop, most likely).
_MAX_REDIRECTS = 5
_DEFAULT_PORTS = {"http": 80, "https": 443}
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
    501: "the server does not take POST requests, so it is not a GraphQL endpoint (a static file server, perhaps); "
    "check that the URL is the API's GraphQL endpoint, often ending in /graphql",
}
#: What a web page says of itself, quoted instead of its markup.
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)

# httpx logs every URL it requests at INFO, user, password and token included.
if not any(isinstance(f, RedactingFilter) for f in logging.getLogger("httpx").filters):
    logging.getLogger("httpx").addFilter(RedactingFilter())


class _Attempt(Retryable):
    """One failed attempt that may be retried; carries the error to raise when attempts run out."""

    def __init__(self, error: ExecutorError, *, retry_after: float | None = None) -> None:
        super().__init__(str(error), retry_after=retry_after)
        self.error = error


class HttpExecutor(AsyncClosing):
    """Runs documents against a GraphQL endpoint over HTTP, through one pooled `httpx.AsyncClient`.

    The client is made on first use inside the running event loop (an executor built in synchronous
    code works in the loop that later uses it) and closed by `aclose()`. A `client` passed in is used
    as is and left open: its owner closes it. `retries` counts attempts after the first; `backoff` is
    the first wait in seconds, doubling up to `max_wait`, which also caps a `Retry-After`. `timeout`
    bounds the whole call, retries included; `max_response_bytes` bounds one answer (16 MB by default).

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
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        if not timeout > 0:
            raise ValueError("timeout must be more than 0 seconds")
        if max_response_bytes < 1:
            raise ValueError("max_response_bytes must be at least 1")
        self.url = url
        self.headers = {"Accept": "application/graphql-response+json, application/json", **dict(headers or {})}
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.max_response_bytes = max_response_bytes
        self._secrets = secrets_of(self.headers, url)
        #: The URL as messages show it: without user, password or token.
        self.shown_url = redact(url, self._secrets)
        self._client = client
        self._owns_client = client is None
        self._loop: object | None = None

    def __repr__(self) -> str:
        return f"HttpExecutor({self.shown_url!r})"

    def redact(self, text: str) -> str:
        """`text` without this executor's credentials, as any text about its API must be shown."""
        return redact(text, self._secrets)

    async def execute(
        self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None, progress: Progress | None = None
    ) -> Response:
        self._check_open()
        telemetry = active_telemetry()
        if telemetry is None:
            return await self._execute(document, variables, operation_name, progress)
        operation = "mutation" if is_mutation(document, operation_name) else "query"
        with telemetry.request(document, operation, self.url, operation_name) as request:
            response = await self._execute(document, variables, operation_name, progress)
            request.answered(response.errors)
            return response

    async def _execute(
        self, document: str, variables: dict[str, Any] | None, operation_name: str | None, progress: Progress | None
    ) -> Response:
        payload: dict[str, Any] = {"query": document, "variables": variables or {}}
        if operation_name is not None:
            payload["operationName"] = operation_name
        body = encode_json(payload)
        attempts = 1 if is_mutation(document, operation_name) else self.retries + 1
        tries = 0
        try:
            try:
                with anyio.fail_after(self.timeout):
                    deadline = time.monotonic() + self.timeout
                    async for attempt in retrying(attempts, first=self.backoff, max_wait=self.max_wait, deadline=deadline):
                        with attempt:
                            tries += 1
                            return await self._post(body, progress)
            except TimeoutError:
                raise TransportError(
                    f"The API at {self.shown_url} did not answer within {self.timeout:g}s{_tried(tries)}, the time allowed for "
                    "one call, retries included. Check that the server is up and not overloaded, or allow more time (--timeout)."
                ) from None
            except _Attempt as failed:
                error = failed.error
                error.args = (error.args[0].replace(_TRIES, _tried(tries)),)
                raise error from failed.__cause__
        except ExecutorError as error:
            error.args = (self.redact(str(error.args[0])),)
            if isinstance(error, HttpStatusError):
                error.body = self.redact(error.body)
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        self.closed = True
        client, self._client = self._client, None
        if client is None or not self._owns_client or self._loop is not _running_loop():
            return  # not ours, or made in a loop that has ended and taken its connections with it
        await client.aclose()

    # -- one attempt ---------------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        loop = _running_loop()
        if self._client is None or (self._owns_client and self._loop is not loop):
            # A client is tied to the loop it first ran in; a new loop (another anyio.run) needs its own.
            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, verify=tls_context())
            self._loop = loop
        return self._client

    async def _post(self, body: bytes, progress: Progress | None) -> Response:
        logger.debug("POST %s (%d bytes)", self.shown_url, len(body))
        note_attempt(len(body))
        headers = {"Content-Type": "application/json", **self.headers}
        url = httpx.URL(self.url)
        try:
            for _ in range(_MAX_REDIRECTS + 1):
                async with self._http().stream("POST", url, content=body, headers=headers, follow_redirects=False) as answer:
                    if answer.has_redirect_location:
                        url = self._redirect(url, answer)
                        continue
                    content = await read_capped(answer, self.max_response_bytes, progress, who=f"The API at {self.shown_url}")
                note_answer(answer.status_code, len(content))
                return self._answer(answer, content)
        except httpx.TimeoutException as error:
            raise _Attempt(
                TransportError(
                    f"The API at {self.shown_url} did not answer within {self.timeout:g}s{_TRIES}. Check that the server is up "
                    "and not overloaded, or allow more time (--timeout)."
                )
            ) from error
        except (httpx.ConnectError, ConnectionRefusedError) as error:
            if unknown_host(error):  # a name that does not resolve will not resolve on the next try either
                raise TransportError(self._no_such_host(url)) from error
            if not _is_loopback(url.host):
                raise _Attempt(TransportError(self._unreachable(error))) from error
            # Nothing listens on this machine's port: no wait will change that, so it is said at once.
            raise TransportError(
                f"The API at {self.shown_url} could not be reached: the connection was refused, so nothing listens on "
                f"{url.host}:{url.port or (443 if url.scheme == 'https' else 80)} (refused connections on this machine are not retried). "
                "Start the API's server, or check the URL and its port."
            ) from error
        except (httpx.TransportError, OSError) as error:
            raise _Attempt(TransportError(self._unreachable(error))) from error
        raise ExecutorError(
            f"The API at {self.shown_url} redirected more than {_MAX_REDIRECTS} times in a row (a redirect loop?). "
            "Point dagtools at the URL the API finally answers on."
        )

    def _unreachable(self, error: BaseException) -> str:
        return (
            f"The API at {self.shown_url} could not be reached ({_describe(error)}){_TRIES}. Check the URL, that the "
            "server is running, and the network or proxy between."
        )

    def _no_such_host(self, url: httpx.URL) -> str:
        host = meant_host(url.host)
        meant = f" Did you mean {redact(str(url.copy_with(host=host)), self._secrets)}?" if host else ""
        return (
            f"The API at {self.shown_url} could not be reached: the host name {url.host} does not resolve to an address "
            f"(not retried: it would not resolve on another try).{meant} Check the host name in the URL."
        )

    def _redirect(self, url: httpx.URL, answer: httpx.Response) -> httpx.URL:
        """Where a redirect within the API's origin leads; any other redirect ends the call."""
        location = answer.headers["Location"]
        try:
            target = url.join(location)
        except httpx.InvalidURL:
            raise ExecutorError(
                f"The API at {self.shown_url} redirected (HTTP {answer.status_code}) to a URL that cannot be read. "
                "Check the URL: point dagtools at the address the API answers on."
            ) from None
        if _origin(target) != _origin(url):
            scheme, host, port = _origin(target)
            where = f"{scheme}://{host}" + ("" if port == _DEFAULT_PORTS.get(scheme) else f":{port}")
            raise ExecutorError(
                f"The API at {self.shown_url} redirected (HTTP {answer.status_code}) to another origin, {where}, and dagtools "
                "does not follow a redirect to another scheme, host or port: nothing was sent there, so no header, query or "
                f"variable left for a host nobody configured. If the API now lives at {where}, point dagtools at that URL."
            )
        return target

    def _answer(self, answer: httpx.Response, content: bytes | bytearray) -> Response:
        status = answer.status_code
        parsed = _json(content)
        if not 200 <= status < 300:
            if status in (400, 422) and isinstance(parsed, dict) and isinstance(parsed.get("errors"), list):
                return self._response(parsed)
            reason = answer.reason_phrase or ""
            hint = _HINTS.get(status) or ("the server failed; try again later" if status >= 500 else "check the URL and headers")
            message = f"The API at {self.shown_url} answered HTTP {status} {reason}".rstrip()
            if status in _RETRY_STATUSES:
                message += _TRIES
            page = _web_page(answer, content) if parsed is _NOT_JSON else None
            excerpt = _excerpt(content)
            if page is not None:  # its markup says nothing; that it is a page says the URL is no GraphQL endpoint
                message += f" with a web page{f' ({page})' if page else ''}, not a GraphQL response"
                if status not in (404, 405, 501):
                    hint += "; and check that the URL is the API's GraphQL endpoint, not a web site"
            elif excerpt:
                message += f": {excerpt}"
            error = HttpStatusError(f"{message}. Hint: {hint}.", status_code=status, body=content[:4096].decode("utf-8", "replace"))
            if status in _RETRY_STATUSES:
                raise _Attempt(error, retry_after=retry_after_seconds(answer.headers.get("Retry-After")))
            raise error
        if parsed is _NOT_JSON:
            kind = answer.headers.get("Content-Type", "no content type")
            raise ExecutorError(
                f"The API at {self.shown_url} answered with something that is not JSON ({kind}): "
                f"{_excerpt(content) or 'an empty body'}. Check that the URL is the GraphQL "
                "endpoint, not a web page."
            )
        if not isinstance(parsed, dict) or ("data" not in parsed and "errors" not in parsed):
            raise ExecutorError(
                f"The API at {self.shown_url} answered JSON that is not a GraphQL response (no `data` "
                f"or `errors`): {_excerpt(content)}. Check that the URL is the GraphQL endpoint."
            )
        return self._response(parsed)

    def _response(self, parsed: dict[str, Any]) -> Response:
        """The answer, its error texts redacted: an API may quote the request's credentials in them."""
        data = parsed.get("data")
        errors = parsed.get("errors") or []
        if not isinstance(errors, list):
            errors = [errors]
        errors = [redact_json(e, self._secrets) if isinstance(e, dict) else {"message": redact(str(e), self._secrets)} for e in errors]
        return Response(data=data if isinstance(data, dict) else None, errors=errors)


def _running_loop() -> object | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme)


def _tried(tries: int) -> str:
    return f" (tried {tries} times)" if tries > 1 else ""


_NOT_JSON: Any = object()
#: Where an error message says how many attempts were made, once that is known.
_TRIES = "\x00tries\x00"


def _json(content: bytes | bytearray) -> Any:
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _NOT_JSON


def _web_page(answer: httpx.Response, content: bytes | bytearray) -> str | None:
    """The title of an HTML answer ("" when it has none), or None when the answer is no web page."""
    head = bytes(content[:4096])
    if "html" not in answer.headers.get("Content-Type", "").lower() and not head.lstrip()[:1] == b"<":
        return None
    title = _TITLE.search(head)
    return _excerpt(title.group(1)) if title else ""


def _excerpt(content: bytes | bytearray) -> str:
    text = " ".join(bytes(content[: _EXCERPT * 4]).decode("utf-8", "replace").split())
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "..."


def _is_loopback(host: str) -> bool:
    """This machine: a refused connection there means nothing listens, not a network having a moment."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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
