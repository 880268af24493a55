"""Handshake-era sessions whose client never came back after `initialize` end within a minute.

The MCP SDK keeps a handshake-era session (one `Mcp-Session-Id`) until it has been idle for the
session idle time, an hour here, so a client that opens sessions and walks away filled the server's
session cap and locked out every new handshake-era client for that hour. A session whose client has
sent nothing since the `initialize` that opened it is abandoned: `handshake_timeout` seconds after it
opened, it is ended the way a client ends one, with an HTTP DELETE of its `Mcp-Session-Id` through
the SDK's own app. A session whose client sent anything more keeps the usual idle time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

__all__ = ["Handshakes"]

logger = logging.getLogger("dagtools")
_SESSION_ID = b"mcp-session-id"


class Handshakes:
    """Sessions opened by `initialize` and not used since, ended once `timeout` seconds have passed."""

    def __init__(self, app: Any, *, path: str, host: str, timeout: float) -> None:
        self.app = app
        self.path = path
        self.host = host
        self.timeout = timeout
        self.ended = 0
        self._waiting: dict[str, tuple[float, Any]] = {}  # session ID -> (when it opened, the caller that opened it)
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def seen(self, scope: dict[str, Any]) -> None:
        """A request names a session: that session's client came back."""
        for name, value in scope.get("headers", ()):
            if name == _SESSION_ID:
                self._waiting.pop(value.decode("latin-1"), None)

    def opened(self, session_id: str, scope: dict[str, Any]) -> None:
        self._waiting[session_id] = (time.monotonic(), scope.get("user"))
        self._schedule(self.timeout)

    def _schedule(self, delay: float) -> None:
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(delay, self._check)

    def _check(self) -> None:
        self._timer = None
        now = time.monotonic()
        due = [(sid, user) for sid, (opened, user) in self._waiting.items() if now - opened >= self.timeout]
        for sid, _ in due:
            del self._waiting[sid]
        if due:
            task = asyncio.get_running_loop().create_task(self._end(due))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if self._waiting:
            first = min(opened for opened, _ in self._waiting.values())
            self._schedule(max(0.05, first + self.timeout - now))

    async def _end(self, sessions: list[tuple[str, Any]]) -> None:
        for sid, user in sessions:
            try:
                await self._delete(sid, user)
                self.ended += 1
            except Exception as error:  # one session that will not end must not keep the others
                logger.debug("ending abandoned session failed: %s", error)
        if sessions:
            logger.info("ended %d handshake-era sessions abandoned after initialize", len(sessions))

    async def _delete(self, sid: str, user: Any) -> None:
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": self.path,
            "raw_path": self.path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [(b"host", self.host.encode()), (_SESSION_ID, sid.encode())],
            "client": ("127.0.0.1", 0),
            "server": ("127.0.0.1", 0),
        }
        if user is not None:  # the SDK ends a session only for the caller that opened it
            scope["user"] = user
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.Event().wait()  # nothing more: the request has no body
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            pass

        await self.app(scope, receive, send)
