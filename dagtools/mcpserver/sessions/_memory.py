"""Memory that closed sessions held, given back when it stalls no one.

A session's parts refer to each other (toolsets hold the session's bound methods, the registry its
handles), so what a closed session held is freed by Python's cycle collector, not at once. Left to
itself the collector runs when allocation triggers it, which can leave an idle server holding a
closed client's arguments for a long time. A full collection walks every live object, and on a busy
server it stalls every call in flight (once run per closed session, it took half the time of a
load run). So a collection is asked for here, once sessions have closed, and run only when no
request has started or ended for `quiet` seconds: a busy server leaves it to the collector's own
schedule, an idle one gives the memory back within a second or two. (A request that stays open,
such as a stream of notifications, does not count as activity: it would keep the memory forever.) `malloc_trim` (glibc) then
returns the freed pages to the system, in a worker thread (ctypes lets go of the GIL for it).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import time
from typing import Any

__all__ = ["MemoryReturn"]

logger = logging.getLogger("dagtools")


class MemoryReturn:
    """Notes when requests start and end (the HTTP gate tells it) and collects after sessions closed, when quiet."""

    def __init__(self, *, quiet: float = 1.0) -> None:
        self.quiet = quiet
        self.in_flight = 0
        self.collections = 0
        self._pending = False
        self._scheduled = False
        self._last_request = time.monotonic()

    def request_started(self) -> None:
        self.in_flight += 1
        self._last_request = time.monotonic()

    def request_ended(self) -> None:
        self.in_flight -= 1
        self._last_request = time.monotonic()

    async def release(self, state: dict[str, Any], name: str) -> None:
        """A closed connection lets go of its session at once (the one under `name` in the connection's
        state); what the session held is given back once the server is quiet. The callback takes the
        connection's state, not the session, so nothing else points at the session once it is popped."""
        client = state.pop(name, None)
        if client is None:
            return
        await client.session.aclose()
        del client
        self.session_closed()

    def session_closed(self) -> None:
        """A session was closed: give back what it held once the server is quiet."""
        self._pending = True
        self._schedule()

    def _schedule(self) -> None:
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving (a test, shutdown): the collector's own schedule will do
            return
        self._scheduled = True
        loop.call_later(self.quiet, self._run, loop)

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        self._scheduled = False
        if not self._pending:
            return
        waited = time.monotonic() - self._last_request
        if waited < self.quiet:
            self._scheduled = True
            loop.call_later(self.quiet - waited, self._run, loop)
            return
        self._pending = False
        self.collections += 1
        gc.collect()
        if _TRIM is not None:
            loop.run_in_executor(None, _TRIM, 0)


def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_TRIM = _malloc_trim()
