"""Where sessions live between calls: one small async interface, and the store in this process.

A store keeps each session's plain data under a key: a snapshot (`SessionState` as JSON bytes) and a
log of what each call changed since it (a call saves its change, not the whole session; session
persistence writes a new snapshot once the log outgrows the last one). Every save names the version it follows:
a save against a version that moved on fails with `StoreConflictError`, so no update is ever lost.
A shared store also keeps leases (`take_lease`, `renew_lease`, `release_lease`, `lease_holder`, and
`save_and_release`, a turn's last write): primitives only, each one round trip where the store can;
waiting for a lease, renewing it while a turn runs and giving it back belong to session persistence
(`dagtools.session._persistence`), which decides when each happens. Sessions idle longer than
`idle_ttl` seconds are removed. Credentials are never part of what is stored: they belong to requests.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from .._closing import AsyncClosing
from .._errors import ConfigError, StoreBusyError, StoreConflictError

__all__ = [
    "DEFAULT_IDLE_TTL",
    "MemoryStore",
    "SessionStore",
    "StoreBusyError",
    "StoreConflictError",
    "StoredState",
    "Taken",
    "new_session_key",
]

#: A week: long enough for an agent that pauses, short enough that abandoned sessions go.
DEFAULT_IDLE_TTL = 7 * 24 * 3600.0


@dataclass(frozen=True, kw_only=True, slots=True)
class StoredState:
    """What a load gives back: the version, and the data unless the caller already holds that version."""

    version: int
    data: bytes | None
    #: The changes saved since the snapshot `data`, oldest first (with `data` only).
    log: tuple[bytes, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Taken:
    """What an attempt at a lease gives back: held, or who holds it; and what was loaded with it."""

    held: bool
    holder: str | None = None
    stored: StoredState | None = None


class SessionStore(AsyncClosing, ABC):
    """Sessions' plain data by key, with optimistic concurrency through versions."""

    #: Whether other processes reach the same sessions, so that turns need a lease in the store itself.
    shared = True

    def __init__(self, *, idle_ttl: float = DEFAULT_IDLE_TTL, lock_timeout: float = 60.0) -> None:
        if idle_ttl <= 0:
            raise ConfigError("A store's idle time must be a positive number of seconds.")
        self.idle_ttl = idle_ttl
        self.lock_timeout = lock_timeout
        #: Tasks at work on this store in the background (leases renewed or given back): a store that
        #: closes its connections cancels them first.
        self.background: set[asyncio.Task[None]] = set()

    @abstractmethod
    async def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        """The session under `key`, or None. When its version is `known`, `data` is None (nothing to read)."""

    @abstractmethod
    async def save(self, key: str, data: bytes, *, version: int, change: bool = False) -> int:
        """Write `data` if the stored version is `version` (0: the key must be new); the new version.
        A snapshot replaces the session and its log; a `change` is appended to the log (the session
        must exist). Raises `StoreConflictError` otherwise, and writes nothing."""

    @abstractmethod
    async def delete(self, key: str) -> bool:
        """Forget a session; whether there was one."""

    @abstractmethod
    async def expire(self) -> int:
        """Remove sessions idle longer than `idle_ttl`; how many went (stores that expire keys themselves say 0)."""

    async def aclose(self) -> None:
        """Release connections; the stored sessions stay."""

    # Lease primitives, what a shared store implements; each is one round trip (a script, a transaction)
    # where it can be. A store that is not `shared` is leased by the task lock alone and needs none.

    async def take_lease(self, key: str, token: str, seconds: float, *, load: bool, known: int | None) -> Taken:
        """Take the lease on `key` for `seconds` unless another token holds it (then say which), and with
        `load`, read the session as `load(key, known=known)` does once it is taken."""
        return Taken(held=True, stored=await self.load(key, known=known) if load else None)

    async def renew_lease(self, key: str, token: str, seconds: float) -> None:
        """Hold the lease `seconds` more, if `token` still holds it (a lease given back stays so)."""

    async def save_and_release(self, key: str, token: str, data: bytes, *, version: int, change: bool) -> int:
        """`save`, then give the lease back if `token` still holds it; a save that fails keeps the lease."""
        saved = await self.save(key, data, version=version, change=change)
        await self.release_lease(key, token)
        return saved

    async def release_lease(self, key: str, token: str) -> None:
        """Give the lease back if `token` still holds it."""

    async def lease_holder(self, key: str) -> str | None:
        """The token that holds the lease on `key` now, if any (see `dagtools.session._persistence._holders`)."""
        return None

    async def check(self) -> None:
        """Write, read back and delete a probe session: a store that cannot be written is refused at start,
        with an error that names it and what to do, not at a client's first call."""
        key = f"dagtools-probe-{secrets.token_hex(8)}"
        await self.save(key, b"{}", version=0)
        try:
            if await self.load(key) is None:
                raise ConfigError(f"The session store {self!r} did not keep what was written to it; check its settings.")
        finally:
            await self.delete(key)


class MemoryStore(SessionStore):
    """Sessions in this process's memory, encoded as the other stores encode them. The task lock is the lease."""

    shared = False

    def __init__(self, **options: float) -> None:
        super().__init__(**options)
        self._sessions: dict[str, tuple[int, bytes, float]] = {}
        self._logs: dict[str, list[bytes]] = {}

    async def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        found = self._sessions.get(key)
        if found is None:
            return None
        version, data, _ = found
        self._sessions[key] = (version, data, time.time())
        if version == known:
            return StoredState(version=version, data=None)
        return StoredState(version=version, data=data, log=tuple(self._logs.get(key, ())))

    async def save(self, key: str, data: bytes, *, version: int, change: bool = False) -> int:
        current, snapshot, _ = self._sessions.get(key, (0, b"", 0.0))
        if current != version or (change and not current):
            raise StoreConflictError(f"Session {key!r} is at version {current}, not {version}.")
        if change:
            self._logs.setdefault(key, []).append(data)
            data = snapshot
        else:
            self._logs.pop(key, None)
        self._sessions[key] = (version + 1, data, time.time())
        return version + 1

    async def delete(self, key: str) -> bool:
        self._logs.pop(key, None)
        return self._sessions.pop(key, None) is not None

    async def expire(self) -> int:
        cutoff = time.time() - self.idle_ttl
        idle = [key for key, (_, _, used) in self._sessions.items() if used < cutoff]
        for key in idle:
            del self._sessions[key]
            self._logs.pop(key, None)
        return len(idle)

    def __len__(self) -> int:
        return len(self._sessions)


def new_session_key() -> str:
    """An unguessable key: whoever holds it holds the session."""
    return secrets.token_urlsafe(24)
