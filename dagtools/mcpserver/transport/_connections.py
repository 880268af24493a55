"""Connections `dagtools mcp` holds for its HTTP clients: every wait bounded, every address capped.

uvicorn bounds the wait between requests on a kept-alive connection (`timeout_keep_alive`), but not
the time a client may take to send a request: a client that sends its headers a byte at a time, or
announces a body longer than it sends, held its connection forever. This protocol (uvicorn's h11
protocol with deadlines) closes a connection whose request headers have not all arrived
`header_timeout` seconds after it opened or after its last response (answering 408 first), and one
whose request body has not all arrived `body_timeout` seconds after its headers. A stream the server
sends (an open GET of the handshake era) is not a read, and is not timed.

An address may hold `max_connections_per_address` connections at once: the next one is answered
503 with `Retry-After` and closed. Many users behind one proxy share an address, so the cap is high
(it bounds what one address may take of the process's file descriptors, not one user's share).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from .._config import McpConfig

__all__ = ["guarded_protocol"]

_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s"
_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s"
)


def guarded_protocol(config: McpConfig) -> type[asyncio.Protocol]:
    """The HTTP protocol class for one server: its own count of connections per address."""
    per_address: Counter[str] = Counter()
    header_timeout, body_timeout, cap = config.header_timeout, config.body_timeout, config.max_connections_per_address

    class Guarded(H11Protocol):
        _address: str | None = None
        _deadline: asyncio.TimerHandle | None = None
        _reading: str = ""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            address = self.client[0] if self.client else "unknown"
            if per_address[address] >= cap:
                text = f"This address holds {cap} connections, the most one may (max_connections_per_address); close some or try again."
                transport.write(_FULL % (len(text), text.encode()))
                transport.close()
                return
            self._address = address
            per_address[address] += 1
            self._expect("headers", header_timeout)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._address is not None:
                per_address[self._address] -= 1
                if per_address[self._address] <= 0:
                    del per_address[self._address]
                self._address = None
            self._expect("", 0)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                if self._reading != "headers":  # the first bytes of the next request
                    self._expect("headers", header_timeout)
            elif cycle.more_body:
                if self._reading != "body":
                    self._expect("body", body_timeout)
            else:
                self._expect("", 0)  # the whole request is in: the app's turn, however long it takes

        def on_response_complete(self) -> None:
            super().on_response_complete()  # arms uvicorn's keep-alive timeout for the wait to the next request
            self._expect("", 0)

        def _expect(self, what: str, seconds: float) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._reading = what
            if what and self.transport is not None and not self.transport.is_closing():
                self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _too_slow(self) -> None:
            self._deadline = None
            if self.transport is None or self.transport.is_closing():
                return
            if self._reading == "headers" and (self.cycle is None or self.cycle.response_complete):
                limit = f"header_timeout, {header_timeout:g} s"
                text = f"The request's headers did not all arrive in time ({limit}); send them at once."
                self.transport.write(_TIMEOUT % (len(text), text.encode()))
            self.transport.close()  # a body cut short: the app reads a disconnect

    return Guarded
