"""Forwarded credentials travel with the MCP request that carries them, never with a session.

An MCP client's forwarded headers (`forward_headers`, such as a user's own API token) are read from
each incoming request and put in a context variable for as long as that request runs; the one HTTP
client every session shares adds them to each upstream request it sends in that context. A session
therefore holds no credential: a later request with another token goes upstream with that token,
and a request with none goes with none, even on the same session (the handshake era keeps one
session per connection, whatever the requests on it carry).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

__all__ = ["UpstreamClient", "forwarded_headers", "request_headers", "use_forwarded"]

_NONE: Mapping[str, str] = MappingProxyType({})
_forwarded: ContextVar[Mapping[str, str]] = ContextVar("dagtools.forwarded", default=_NONE)


def forwarded_headers(headers: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    """The allow-listed headers of one request (`headers` has lower-case names), under their configured names."""
    return {name: headers[name.lower()] for name in names if name.lower() in headers}


def request_headers(ctx: Any) -> dict[str, str]:
    """The HTTP headers of the request a handler serves (lower-case names); none outside HTTP."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if not headers:
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


async def _add_forwarded(request: Any) -> None:
    for name, value in _forwarded.get().items():
        request.headers[name] = value


class UpstreamClient:
    """The one pooled `httpx.AsyncClient` that every session's `HttpExecutor` sends through.

    It carries the operator's headers (environment, then configuration) as defaults and adds the
    current request's forwarded headers on the way out. Made on first use inside the serving loop;
    closed with the server. Redirects are not followed here: a redirect must never carry a
    forwarded credential to another host.
    """

    def __init__(self, headers: Mapping[str, str], *, timeout: float = 30.0) -> None:
        self._headers = dict(headers)
        self._timeout = timeout
        self._client: Any = None

    def get(self) -> Any:
        import httpx

        from ...executors._tls import tls_context

        if self._client is None:
            self._client = httpx.AsyncClient(
                headers=self._headers,
                timeout=self._timeout,
                follow_redirects=False,
                verify=tls_context(),
                event_hooks={"request": [_add_forwarded]},
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def use_forwarded(headers: Mapping[str, str]) -> None:
    """Upstream requests made from now on in this context (one MCP request's handler) carry `headers`.
    Each request's handler runs in a context of its own and sets this first, so none borrows another's."""
    _forwarded.set(MappingProxyType(dict(headers)) if headers else _NONE)
