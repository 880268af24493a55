"""The stateless era's keyed sessions, held in memory up to a capacity; a live session is never pushed out.

Many users behind one proxy share an address, so an address is never an identity and has no quota:
the pool counts sessions, not addresses. When it holds `max_sessions`:
- sessions idle longer than `ttl` go first (they also go on their own, swept every few seconds);
- with a store, the least recently used session that no request is using leaves memory: it is in
  the store (every call is saved before its result returns), and its next request resumes it there;
- without a store, a new session is refused with `SessionsFull`, which the HTTP face answers with
  503 and `Retry-After` (the time until the least recently used session may expire).
An authenticated caller holds at most `per_caller` sessions at once, the same way: its next one is
refused (or, with a store, its own least recently used one leaves memory), never anyone else's.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from ..._errors import SessionsFull
from ...session._session import Session
from ...session._toolsets import Toolset
from ._keys import SessionKey

__all__ = ["ClientState", "SessionPool", "SessionsFull"]

logger = logging.getLogger("dagtools")

#: Idle sessions are looked for at most this often (and whenever the pool is full).
SWEEP_EVERY = 5.0


@dataclass(eq=False)
class ClientState:
    """One MCP client's dagtools session, and where its tool-list changes go in the stateless era."""

    session: Session
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    bus: Any = None
    listen: Any = None
    #: What the client sees of the session, made once (the server's `toolset_of`).
    toolset: Toolset | None = None
    #: The tools last listed to this client and the toolset version they were listed at: listed again
    #: as they were until the version moves, which is when the client is told the list changed.
    listed: tuple[Any, list[Any]] | None = None

    @property
    def busy(self) -> bool:
        return self.lock.locked()


class SessionPool:
    """Keyed sessions by key digest, in least-recently-used order (overall and per owner)."""

    def __init__(
        self, *, ttl: float, max_sessions: int, per_caller: int, stored: bool = False, on_close: Callable[[], None] = lambda: None
    ) -> None:
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.per_caller = per_caller
        #: Whether every session is also in a store, so one may leave memory and come back.
        self.stored = stored
        self.on_close = on_close
        self._states: OrderedDict[str, ClientState] = OrderedDict()
        self._owner_of: dict[str, str] = {}
        self._by_owner: dict[str, OrderedDict[str, None]] = {}
        self._opening: dict[str, anyio.Event] = {}
        self._last_sweep = time.monotonic()
        #: Closers of sessions that left the pool, run by the next request (drop is synchronous).
        self._to_close: list[Session] = []

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, digest: object) -> bool:
        return digest in self._states

    def owned_by(self, owner: str) -> int:
        return len(self._by_owner.get(owner, ()))

    async def get(self, key: SessionKey, open_session: Callable[[], Awaitable[Session]]) -> ClientState:
        """The session under `key`, opened with `open_session` on first use; `SessionsFull` when there is no room."""
        self._sweep()
        await self._close_dropped()
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
        self._states.move_to_end(key.digest)
        # The owner it was opened by: a session is found by its digest alone, whoever asks for it now.
        self._by_owner[self._owner_of[key.digest]].move_to_end(key.digest)
        state.last_used = time.monotonic()
        return state

    def _admit(self, owner: str) -> None:
        """Make room for one more session of `owner`, from idle or stored sessions only; else refuse."""
        limited = owner.startswith("caller:")  # an address is never an identity: only callers have a quota
        if limited and self.owned_by(owner) >= self.per_caller:
            self._sweep(force=True)
            if self.owned_by(owner) >= self.per_caller and not self._leave_memory(self._by_owner[owner]):
                raise SessionsFull(
                    f"This caller holds {self.per_caller} sessions, the most one caller may hold (max_sessions_per_caller), "
                    f"and none has been idle {self.ttl:g} s yet; no live session is closed to make room. Reuse a session key you "
                    "already have, or try again later.",
                    self._retry_after(self._by_owner[owner]),
                )
        if len(self._states) + len(self._opening) >= self.max_sessions:
            self._sweep(force=True)
        if len(self._states) + len(self._opening) >= self.max_sessions and not self._leave_memory(self._states):
            raise SessionsFull(
                f"This server holds {self.max_sessions} sessions, the most it keeps (max_sessions), and none has been idle "
                f"{self.ttl:g} s yet; no live session is closed to make room. Try again later, or reuse a session key you already have.",
                self._retry_after(self._states),
            )

    def _leave_memory(self, digests: Any) -> bool:
        """With a store, let the least recently used idle session among `digests` leave memory (its next
        request resumes it from the store); whether one did."""
        if not self.stored:
            return False
        for digest in list(digests):
            state = self._states.get(digest)
            if state is not None and not state.busy:
                self.drop(digest)
                return True
        return False

    def _retry_after(self, digests: Any) -> float:
        """Seconds until the least recently used of `digests` has been idle `ttl` (when it may be dropped)."""
        first = next(iter(digests), None)
        state = self._states.get(first) if first is not None else None
        return self.ttl - (time.monotonic() - state.last_used) if state is not None else 1.0

    def _sweep(self, *, force: bool = False) -> None:
        """Drop the sessions idle longer than the TTL (at most every `SWEEP_EVERY` s unless forced)."""
        now = time.monotonic()
        if not force and now - self._last_sweep < SWEEP_EVERY:
            return
        self._last_sweep = now
        for digest, state in list(self._states.items()):  # least recently used first: stop at the first fresh one
            if now - state.last_used <= self.ttl:
                break
            if not state.busy:
                self.drop(digest)

    def drop(self, digest: str) -> ClientState | None:
        """Forget one session; its listen stream, if any, is closed, and the session itself soon after."""
        state = self._states.pop(digest, None)
        owner = self._owner_of.pop(digest, None)
        if state is not None:
            logger.info("MCP session dropped (%d held)", len(self._states))
            self._to_close.append(state.session)
        if owner is not None:
            owned = self._by_owner[owner]
            owned.pop(digest, None)
            if not owned:
                del self._by_owner[owner]
        if state is not None and state.listen is not None:
            state.listen.close()
        return state

    async def _close_dropped(self) -> None:
        if not self._to_close:
            return
        closing, self._to_close = self._to_close, []
        while closing:
            await closing.pop().aclose()
        self.on_close()  # what they held goes back once the server is quiet (`_memory`)

    async def aclose(self) -> None:
        """Drop every session and close what each one owns."""
        for digest in list(self._states):
            self.drop(digest)
        await self._close_dropped()
