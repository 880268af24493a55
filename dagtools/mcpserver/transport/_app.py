"""The HTTP face of `dagtools mcp`: the SDK's streamable HTTP app behind one gate.

The gate, in order: checks `Host` and `Origin` against the allowed names (DNS-rebinding
protection, on whatever address the server is bound to); when the server checks callers (an
`Authenticator`: bearer tokens or an OAuth issuer), serves its protected-resource metadata, asks it who
the caller is (401 or 403 with a `WWW-Authenticate` challenge otherwise, 503 while the authorization
server cannot be asked) and marks the request with the caller's name; marks a caller that may not write
as read-only, and answers its call of a mutation tool with 403 `insufficient_scope`, so that its client
asks for the scope; and hands a server-issued session key back in a `Dagtools-Session` response header.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from .._config import McpConfig, is_loopback
from ..gate import CALLER_SCOPE_KEY, READ_ONLY_SCOPE_KEY, WELL_KNOWN, Authenticator, Refused, unauthorized
from ..sessions import ISSUED_SCOPE_KEY, REFUSED_SCOPE_KEY, SESSION_HEADER, MemoryReturn
from ._handshakes import Handshakes
from ._limits import mark_invalid_text

if TYPE_CHECKING:
    from .._server import McpToolServer

__all__ = ["allowed_hosts", "allowed_origins", "build_http_app"]

#: The HTTP server's own log, which uvicorn shows at warning level: where a failed request was told before.
server_log = logging.getLogger("uvicorn.error")

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS = ("", "0.0.0.0", "::", "[::]")


def allowed_hosts(config: McpConfig) -> list[str]:
    """`Host` values to accept: the configured ones, else loopback, the bound address and the public URL's host."""
    names = list(config.allowed_hosts) or [
        *_LOOPBACK_NAMES,
        *([] if config.host in _WILDCARDS or is_loopback(config.host) else [_bracketed(config.host)]),
        *([urlsplit(config.public_url).netloc] if config.public_url else []),
    ]
    hosts: list[str] = []
    for name in names:
        hosts += [name] if _has_port(name) else [name, f"{name}:*"]
    return list(dict.fromkeys(hosts))


def allowed_origins(config: McpConfig) -> list[str]:
    """`Origin` values to accept (browsers send one; most MCP clients send none): the configured ones,
    else http and https on the allowed hosts."""
    if config.allowed_origins:
        return list(config.allowed_origins)
    return [f"{scheme}://{host}" for host in allowed_hosts(config) for scheme in ("http", "https")]


def _has_port(name: str) -> bool:
    return "]:" in name if name.startswith("[") else ":" in name


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def build_http_app(server: McpToolServer, tokens: Authenticator | None) -> Any:
    """The SDK's streamable HTTP app for `server`, behind the gate; `tokens` checks callers (None: anyone may call)."""
    from mcp.server.transport_security import TransportSecuritySettings

    config = server.config
    if config.host in _WILDCARDS and not config.allowed_hosts and not config.public_url:
        print(
            f"dagtools mcp: bound to {config.host or 'every address'}, accepting only Host: {', '.join(_LOOPBACK_NAMES)}; "
            "name the others with --allowed-host or --public-url.",
            file=sys.stderr,
        )
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts(config), allowed_origins=allowed_origins(config)
    )
    # Handshake-era sessions (one per Mcp-Session-Id) have the same cap and idle time as keyed ones;
    # at the cap the SDK refuses a new one (503, given a `Retry-After` and a message by the gate)
    # rather than close someone else's.
    app = server.server.streamable_http_app(
        streamable_http_path=config.path,
        host=config.host,
        transport_security=security,
        max_sessions=config.max_sessions,
        session_idle_timeout=config.session_ttl,
    )
    handshakes = Handshakes(app, path=config.path, host=allowed_hosts(config)[0], timeout=config.handshake_timeout)
    gate = _Gate(app, config=config, security=security, tokens=tokens, name=server.server.title or "dagtools", memory=server.memory)
    if tokens is not None and tokens.write_scope and config.mutations:
        gate.mutates = lambda name: name in server.catalogue and not server.catalogue.tool(name).read_only
    gate.handshakes = handshakes
    return gate


class _Gate:
    def __init__(
        self, app: Any, *, config: McpConfig, security: Any, tokens: Authenticator | None, name: str, memory: MemoryReturn
    ) -> None:
        from mcp.server.transport_security import TransportSecurityMiddleware

        self.app = app
        self.config = config
        self.checks = TransportSecurityMiddleware(security)
        self.tokens = tokens
        self.name = name
        self.memory = memory
        self.handshakes: Handshakes | None = None
        self.mutates: Callable[[str], bool] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request

        refused = await self.checks.validate_request(Request(scope), is_post=False)
        if refused is not None:
            await refused(scope, receive, send)
            return
        path = scope.get("path", "")
        if self.tokens is not None and path.startswith(WELL_KNOWN):
            await self._metadata(scope, send)
            return
        if self.tokens is not None:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            try:
                user = await self.tokens.authenticate(headers)
            except Refused as refusal:
                await _respond(send, *unauthorized(self._resource(scope), given="authorization" in headers, refused=refusal))
                return
            from starlette.authentication import AuthCredentials

            scope["user"], scope["auth"] = user, AuthCredentials(list(user.scopes))
            scope[CALLER_SCOPE_KEY] = self.tokens.caller_of(user)
            if not self.tokens.may_write(user):
                scope[READ_ONLY_SCOPE_KEY] = True
                if self.mutates is not None and scope.get("method") == "POST":
                    receive = await self._without_mutations(scope, receive, send, self.tokens, self.mutates)
                    if receive is None:
                        return
        if self.handshakes is not None:
            self.handshakes.seen(scope)
        if scope.get("method") == "GET":  # a stream that may stay open for hours: not a request in flight
            # ... but not forever: an open stream keeps its session from idling out, so an abandoned one
            # would hold the session for good. After `session_ttl` it ends; a live client opens another.
            with anyio.move_on_after(self.config.session_ttl):
                await self.app(scope, receive, self._answering(scope, send))
            return
        self.memory.request_started()
        try:
            if scope.get("method") == "POST":
                receive = await _whole_body(scope, receive)
                if receive is None:
                    return
            await self.app(scope, receive, self._answering(scope, send))
        finally:
            self.memory.request_ended()

    def _resource(self, scope: dict[str, Any]) -> str:
        """This server's URL as its clients reach it: `public_url`, else the (checked) Host it was asked by."""
        if self.config.public_url:
            return self.config.public_url
        host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1") or f"{self.config.host}:{self.config.port}"
        return f"{scope.get('scheme', 'http')}://{host}{self.config.path}"

    async def _metadata(self, scope: dict[str, Any], send: Any) -> None:
        if scope.get("method") not in ("GET", "HEAD", "OPTIONS"):
            await _respond(send, 405, [(b"allow", b"GET, HEAD, OPTIONS")], b"")
            return
        assert self.tokens is not None
        body = json.dumps(self.tokens.metadata(self._resource(scope), self.name)).encode()
        await _respond(send, 200, [(b"content-type", b"application/json"), (b"cache-control", b"max-age=3600")], body)

    async def _without_mutations(
        self, scope: dict[str, Any], receive: Any, send: Any, tokens: Authenticator, mutates: Callable[[str], bool]
    ) -> Any:
        """`receive` for the app, with the body read here, when the request calls no mutation tool; else
        answers 403 `insufficient_scope` naming the write scope and gives None. The session such a
        caller opens has no mutation tools either way: this answer is what makes its client ask."""
        messages, size, limit = [], 0, self.config.max_argument_bytes + 65536
        while size <= limit:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        if size <= limit and any(mutates(name) for name in _tools_called(b"".join(m.get("body", b"") for m in messages))):
            await _respond(send, *unauthorized(self._resource(scope), given=True, refused=tokens.needs_write()))
            return None

        async def replay() -> dict[str, Any]:
            return messages.pop(0) if messages else await receive()

        return replay

    def _answering(self, scope: dict[str, Any], send: Any) -> Any:
        """`send` for the app: hands a server-issued key back in a header, and turns a refusal for want of
        room into 503 with `Retry-After` and a message that says what to do."""
        held: list[dict[str, Any]] = []

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                issued = scope.get(ISSUED_SCOPE_KEY)
                if issued:
                    headers.append((SESSION_HEADER.lower().encode(), issued.encode()))
                if self.handshakes is not None and message.get("status", 500) < 400:
                    opened = _session_opened(scope, headers)
                    if opened:
                        self.handshakes.opened(opened, scope)
                refused = scope.get(REFUSED_SCOPE_KEY)
                if refused is not None:
                    message = {**message, "status": 503, "headers": [*headers, (b"retry-after", str(refused).encode())]}
                elif message.get("status") == 503:  # the SDK's own refusal of a handshake-era session: say more
                    held.append({**message, "headers": headers})
                    return
                else:
                    message = {**message, "headers": headers}
            elif held and message["type"] == "http.response.body":
                start = held.pop()
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": _full_message(self.config)}}).encode()
                kept = [(k, v) for k, v in start["headers"] if k.lower() not in (b"content-length", b"retry-after")]
                retry = str(max(1, int(min(self.config.session_ttl, self.config.handshake_timeout)))).encode()
                await send({**start, "headers": [*kept, (b"content-length", str(len(body)).encode()), (b"retry-after", retry)]})
                message = {"type": "http.response.body", "body": body}
            await send(message)

        return sending


def _tools_called(body: bytes) -> list[str]:
    """The tool names a JSON-RPC body's `tools/call` requests name: the tool, and the tools a fixed-mode
    `callTool` or `callChain` runs."""
    try:
        data = json.loads(body)
    except ValueError:
        return []
    names: list[str] = []
    for request in data if isinstance(data, list) else [data]:
        params = request.get("params") if isinstance(request, dict) and request.get("method") == "tools/call" else None
        if not isinstance(params, dict):
            continue
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        steps = [v for value in arguments.values() if isinstance(value, list) for v in value if isinstance(v, dict)]
        names += [n for n in (params.get("name"), arguments.get("tool"), *(s.get("tool") for s in steps)) if isinstance(n, str)]
    return names


async def _whole_body(scope: dict[str, Any], receive: Any) -> Any:
    """`receive` for the app once the whole body is in, with a call's invalid text marked
    (`mark_invalid_text`); None when the client went away first (the body deadline of `_connections`,
    or a client that gave up): there is no one to answer, and one line in the log says so. A body past
    the SDK's limit is not held: it goes on as it came, for the SDK to refuse (413)."""
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

    chunks: list[bytes] = []
    total = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            client = scope.get("client") or ("unknown",)
            server_log.warning(
                "dagtools mcp: a request body from %s did not all arrive (cut at body_timeout, or the client went away); nothing was run",
                client[0],
            )
            return None
        chunks.append(message.get("body", b""))
        total += len(chunks[-1])
        if not message.get("more_body", False):
            break
        if total > DEFAULT_MAX_REQUEST_BODY_SIZE:
            return _replay(chunks, receive, more=True)
    body = b"".join(chunks)
    return _replay([mark_invalid_text(body) or body], receive, more=False)


def _replay(chunks: list[bytes], receive: Any, *, more: bool) -> Any:
    """`receive` that gives `chunks` again, then whatever `receive` gives (the rest, or a disconnect)."""
    waiting = list(chunks)

    async def replay() -> dict[str, Any]:
        if waiting:
            body = waiting.pop(0)
            return {"type": "http.request", "body": body, "more_body": more or bool(waiting)}
        return await receive()

    return replay


def _session_opened(scope: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> str | None:
    """The `Mcp-Session-Id` a response hands out to a request that named none: a session just opened."""
    if any(name == b"mcp-session-id" for name, _ in scope.get("headers", ())):
        return None
    return next((value.decode("latin-1") for name, value in headers if name.lower() == b"mcp-session-id"), None)


def _full_message(config: McpConfig) -> str:
    return (
        f"This server holds {config.max_sessions} handshake-era sessions, the most it keeps (max_sessions); no live "
        f"session is closed to make room. Try again after Retry-After seconds, and end sessions you no longer use "
        f"(HTTP DELETE with their Mcp-Session-Id)."
    )


async def _respond(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
