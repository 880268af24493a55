"""The stateless era's keyed sessions, with quotas per caller so no caller can push out another's.

Each owner (an authenticated caller, else a client address; see `_keys`) holds at most
`per_caller` sessions: its next one pushes out its own least recently used. All owners together
hold at most `max_sessions`: when that many are open, sessions idle longer than `ttl` go first,
and if none has, a new session is refused with a message rather than taken from someone else.
A dropped session is forgotten at once, so what it held (objects, long values, the arguments of
its calls) is freed with it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from .._errors import ConfigError
from ..session._session import Session
from ._keys import SessionKey

__all__ = ["ClientState", "SessionPool", "release_memory"]

logger = logging.getLogger("dagtools")


@dataclass(eq=False)
class ClientState:
    """One MCP client's dagtools session, and where its tool-list changes go in the stateless era."""

    session: Session
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    bus: Any = None
    listen: Any = None


class SessionPool:
    """Keyed sessions by key digest, in least-recently-used order per owner."""

    def __init__(self, *, ttl: float, max_sessions: int, per_caller: int) -> None:
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.per_caller = per_caller
        self._states: dict[str, ClientState] = {}
        self._owner_of: dict[str, str] = {}
        self._by_owner: dict[str, OrderedDict[str, None]] = {}
        self._opening: dict[str, anyio.Event] = {}
        self._last_sweep = time.monotonic()

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, digest: object) -> bool:
        return digest in self._states

    def owned_by(self, owner: str) -> int:
        return len(self._by_owner.get(owner, ()))

    async def get(self, key: SessionKey, open_session: Callable[[], Awaitable[Session]]) -> ClientState:
        """The session under `key`, opened with `open_session` on first use."""
        self._sweep()
        while key.digest in self._opening:  # another request of this client is opening its session
            await self._opening[key.digest].wait()
        state = self._states.get(key.digest)
        if state is None:
            self._admit(key.owner)
            opened = self._opening[key.digest] = anyio.Event()
            try:
                state = ClientState(session=await open_session())
                logger.info("MCP session opened (%d held)", len(self._states) + 1)
                self._states[key.digest] = state
                self._owner_of[key.digest] = key.owner
                self._by_owner.setdefault(key.owner, OrderedDict())[key.digest] = None
            finally:
                del self._opening[key.digest]
                opened.set()
        self._by_owner[key.owner].move_to_end(key.digest)
        state.last_used = time.monotonic()
        return state

    def _admit(self, owner: str) -> None:
        """Make room for one more session of `owner`, from its own sessions or idle ones only."""
        mine = self._by_owner.get(owner)
        if mine and len(mine) >= self.per_caller:
            while mine and len(mine) >= self.per_caller:
                self.drop(next(iter(mine)))
            release_memory()
        if len(self._states) + len(self._opening) >= self.max_sessions:
            self._sweep(force=True)
        if len(self._states) + len(self._opening) >= self.max_sessions:
            raise ConfigError(
                f"This server holds {self.max_sessions} sessions, the most it keeps, and none is idle yet; "
                f"try again once one has been idle {self.ttl:g} s, or reuse a session key you already have."
            )

    def _sweep(self, *, force: bool = False) -> None:
        """Drop the sessions idle longer than the TTL (at most every 30 s unless forced)."""
        now = time.monotonic()
        if not force and now - self._last_sweep < 30:
            return
        self._last_sweep = now
        idle = [d for d, s in self._states.items() if now - s.last_used > self.ttl]
        for digest in idle:
            self.drop(digest)
        if idle:
            release_memory()

    def drop(self, digest: str) -> ClientState | None:
        """Forget one session; its listen stream, if any, is closed."""
        state = self._states.pop(digest, None)
        owner = self._owner_of.pop(digest, None)
        if state is not None:
            logger.info("MCP session dropped (%d held)", len(self._states))
        if owner is not None:
            owned = self._by_owner[owner]
            owned.pop(digest, None)
            if not owned:
                del self._by_owner[owner]
        if state is not None and state.listen is not None:
            state.listen.close()
        return state

    async def aclose(self) -> None:
        """Drop every session and close what each one owns."""
        for digest in list(self._states):
            state = self.drop(digest)
            if state is not None:
                await _close(state.session)
            del state  # nothing may hold a dropped session when the collection runs
        release_memory()


async def _close(session: Session) -> None:
    await session.aclose()


def release_memory() -> None:
    """Give back at once what dropped sessions held.

    A session's objects reference each other in cycles that Python's collector reaches only after
    many more allocations, so an idle server kept a closed client's arguments (hundreds of MB from
    large ones). Collecting now frees them; on glibc, `malloc_trim` then returns the freed pages to
    the system. `serve_mcp` freezes what it loaded first, so a collection scans the sessions only.
    """
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)


def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_TRIM = _malloc_trim()
