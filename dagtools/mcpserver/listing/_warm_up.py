"""`WarmUp`: what a start served from the compiled cache defers until its first tool list has gone out."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = ["WarmUp"]

logger = logging.getLogger("dagtools")


class WarmUp:
    """What a warm start defers (importing the session machinery, then `prepare`: restoring or compiling
    the catalogue), done once under a lock: by `start`'s daemon thread once the first tool list has gone
    out, or by the first request that needs it, which otherwise waits for the thread to finish. No
    request meets a half-done import or a catalogue compiled twice. A failed attempt is tried again by
    the next caller, who reports it."""

    def __init__(self, prepare: Callable[[], None]) -> None:
        self._prepare = prepare
        self._lock = threading.Lock()
        self.done = False

    def run(self) -> None:
        """Prepare, or wait for the thread that is preparing (blocks: in async code, `await ready()`)."""
        if self.done:
            return
        with self._lock:
            if not self.done:
                from ...session._open import open_session  # noqa: F401  (the session machinery, in one place)
                from ..sessions import FixedToolset, SessionPool  # noqa: F401

                self._prepare()
                self.done = True

    async def ready(self) -> None:
        """`run` off the event loop, so other clients are served while the warm-up finishes."""
        if not self.done:
            import anyio

            await anyio.to_thread.run_sync(self.run)

    def start(self, then: Callable[[], object]) -> None:
        """`run`, then `then` (building the schema, under its own lock), in a daemon thread: the first
        call finds both done."""

        def warm() -> None:
            try:
                self.run()
                then()
            except Exception as error:  # the request that needs it runs it again and reports the problem
                logger.debug("warming up failed: %s", error)

        threading.Thread(target=warm, name="dagtools-warm-up", daemon=True).start()
