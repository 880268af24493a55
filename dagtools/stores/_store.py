"""Where sessions live between calls: one small async interface, and the store in this process.

A store keeps each session's plain data under a key: a snapshot (`SessionState` as JSON bytes) and a
log of what each call changed since it (a call saves its change, not the whole session; the keeper
writes a new snapshot once the log outgrows the last one). Every save names the version it follows:
a save against a version that moved on fails with `StoreConflictError`, so no update is ever lost.
Turns on one key are serialised by a lease (`lock`): mutations run exactly once, so a turn cannot
simply be run again after losing a race. Sessions idle longer than `idle_ttl` seconds are removed.
Credentials are never part of what is stored: they belong to requests.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio

from .._closing import AsyncClosing
from .._errors import ConfigError, StoreBusyError, StoreConflictError, StoreError
from ._holders import holder_gone, new_token

__all__ = [
    "DEFAULT_IDLE_TTL",
    "Lease",
    "MemoryStore",
    "SessionStore",
    "StoreBusyError",
    "StoreConflictError",
    "StoredState",
    "Taken",
    "new_session_key",
]

logger = logging.getLogger("dagtools")

#: A week: long enough for an agent that pauses, short enough that abandoned sessions go.
DEFAULT_IDLE_TTL = 7 * 24 * 3600.0
#: How long a lease holds a key without renewal; renewed every third of it while a turn runs, so a
#: killed holder blocks its key for at most this long.
LEASE_SECONDS = 15.0
#: Seconds between two attempts at giving back a lease the store could not be told of (its node down).
RELEASE_RETRY_EVERY = 0.2


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


class Lease:
    """One turn's hold on a key: what was read as it was taken, and the save that ends the turn."""

    def __init__(self, store: SessionStore, key: str, token: str | None) -> None:
        self.store = store
        self.key = key
        self.token = token
        #: The session as it was when the lease was taken (with `lock(..., load=True)`).
        self.loaded: StoredState | None = None
        #: Whether the store still holds the lease for this turn (it goes with the turn's save).
        self.held = token is not None

    async def save(self, data: bytes, *, version: int, change: bool = False) -> int:
        """The turn's last write (`SessionStore.save`), which gives the lease back with it: one round trip
        for both where the store can. Nothing of the turn may touch the store after it."""
        if not self.held:
            return await self.store.save(self.key, data, version=version, change=change)
        assert self.token is not None
        saved = await self.store._save_and_release(self.key, self.token, data, version=version, change=change)
        self.held = False
        return saved


class SessionStore(AsyncClosing, ABC):
    """Sessions' plain data by key, with optimistic concurrency through versions."""

    #: Whether other processes reach the same sessions, so that turns need a lease in the store itself.
    shared = True

    def __init__(self, *, idle_ttl: float = DEFAULT_IDLE_TTL, lock_timeout: float = 60.0) -> None:
        if idle_ttl <= 0:
            raise ConfigError("A store's idle time must be a positive number of seconds.")
        self.idle_ttl = idle_ttl
        self.lock_timeout = lock_timeout
        self._local: dict[str, tuple[anyio.Lock, int]] = {}
        self._renewals: set[asyncio.Task[None]] = set()
        self._releasing: set[tuple[str, str]] = set()  # leases being given back in the background

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

    @asynccontextmanager
    async def lock(self, key: str, *, load: bool = False, known: int | None = None) -> AsyncIterator[Lease]:
        """Hold `key` for one turn, against this process's other tasks and other processes alike. With
        `load`, the session is read as the lease is taken (`Lease.loaded`, as `load(key, known=known)`
        gives it), in the same round trip where the store can."""
        lock, users = self._local.get(key) or (anyio.Lock(), 0)
        self._local[key] = (lock, users + 1)
        try:
            async with lock:
                if not self.shared:
                    lease = Lease(self, key, None)
                    if load:
                        lease.loaded = await self.load(key, known=known)
                    yield lease
                    return
                async with self._lease(key, load, known) as lease:
                    yield lease
        finally:
            lock, users = self._local[key]
            if users == 1:
                del self._local[key]
            else:
                self._local[key] = (lock, users - 1)

    @asynccontextmanager
    async def _lease(self, key: str, load: bool, known: int | None) -> AsyncIterator[Lease]:
        """Between processes: take the lease, keep renewing it while the turn runs, give it back (with
        the turn's save, or at the end)."""
        token = new_token()
        lease = Lease(self, key, token)
        deadline = time.monotonic() + self.lock_timeout
        pause, checked = 0.002, 0.0
        while True:
            with anyio.CancelScope(shield=True):  # a lease taken is given back (below) even if the turn is cancelled meanwhile
                try:
                    taken = await self._take(key, token, LEASE_SECONDS, load=load, known=known)
                except StoreError:
                    self._release_later(key, token)  # the take may have been done before its answer was lost
                    raise
            if taken.held:
                break
            if time.monotonic() > deadline:
                raise StoreBusyError(
                    f"Session {key!r} stayed busy for {self.lock_timeout:g}s in another process; try the call again later."
                )
            if time.monotonic() - checked > 0.1:  # a holder known to be gone (killed) is not waited for
                checked = time.monotonic()
                holder = taken.holder if taken.holder is not None else await self._holder(key)
                if holder is not None and holder_gone(holder):
                    await self._release(key, holder)
                    continue
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.05)
        lease.loaded = taken.stored
        store_failed = False
        try:
            async with self._renewed(lease):
                yield lease
        except StoreError:
            store_failed = True
            raise
        finally:
            if lease.held and store_failed:  # the store failed just now: not waited for again, the call has its answer
                self._release_later(key, token)
            elif lease.held:
                with anyio.CancelScope(shield=True):
                    try:
                        await self._release(key, token)
                    except StoreError:  # the call's own outcome stands; the lease is given back once the store answers
                        self._release_later(key, token)

    def _release_later(self, key: str, token: str) -> None:
        """Give the lease back in the background, as soon as the store answers (a failed-over Redis primary's
        replica holds what the dead one had, this lease included), trying every `RELEASE_RETRY_EVERY` seconds
        until it would have run out anyway. Without it, the session's next call, on any worker, waits the
        whole `LEASE_SECONDS` for a holder that is alive and done."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not on asyncio: the lease runs out
        if (key, token) in self._releasing:
            return
        self._releasing.add((key, token))

        async def release() -> None:
            until = time.monotonic() + LEASE_SECONDS
            try:
                while time.monotonic() < until:
                    await asyncio.sleep(RELEASE_RETRY_EVERY)
                    try:
                        await self._release(key, token)
                        return
                    except StoreError:
                        continue
            finally:
                self._releasing.discard((key, token))

        task = loop.create_task(release())
        self._renewals.add(task)  # held until done: the loop keeps only a weak reference
        task.add_done_callback(self._renewals.discard)

    @asynccontextmanager
    async def _renewed(self, lease: Lease) -> AsyncIterator[None]:
        """Renew `lease` every third of its time until the turn ends (a renewal that meets the lease given
        back with the save leaves it so). On asyncio a timer does it, and a task only once a renewal is
        due, since nearly every turn ends long before (a task beside each turn cost a fifth of a stored
        call); elsewhere a task beside the turn does."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._renew_forever, lease)
                    try:
                        yield
                    finally:
                        group.cancel_scope.cancel()
            except BaseExceptionGroup as errors:  # the turn's own error, not wrapped by the renewing task's group
                if len(errors.exceptions) == 1:
                    raise errors.exceptions[0] from None
                raise
            return
        running = loop
        over = False
        timer: asyncio.TimerHandle | None = None

        def due() -> None:
            task = running.create_task(renew())
            self._renewals.add(task)  # held until done: the loop keeps only a weak reference
            task.add_done_callback(self._renewals.discard)

        async def renew() -> None:
            nonlocal timer
            assert lease.token is not None
            try:
                await self._renew(lease.key, lease.token, LEASE_SECONDS)
            except Exception as error:  # the turn goes on; its save finds out whether the lease held
                logger.warning("renewing the lease on session %s failed: %s", lease.key, error)
            if not over:
                timer = running.call_later(LEASE_SECONDS / 3, due)

        timer = loop.call_later(LEASE_SECONDS / 3, due)
        try:
            yield
        finally:
            over = True
            timer.cancel()

    async def _renew_forever(self, lease: Lease) -> None:
        assert lease.token is not None
        while lease.held:
            await anyio.sleep(LEASE_SECONDS / 3)
            if lease.held:
                await self._renew(lease.key, lease.token, LEASE_SECONDS)

    # What a shared store implements; each is one round trip (a script, a transaction) where it can be.

    async def _take(self, key: str, token: str, seconds: float, *, load: bool, known: int | None) -> Taken:
        """Take the lease on `key` for `seconds` unless another token holds it (then say which), and with
        `load`, read the session as `load(key, known=known)` does once it is taken."""
        return Taken(held=True, stored=await self.load(key, known=known) if load else None)

    async def _renew(self, key: str, token: str, seconds: float) -> None:
        """Hold the lease `seconds` more, if `token` still holds it (a lease given back stays so)."""

    async def _save_and_release(self, key: str, token: str, data: bytes, *, version: int, change: bool) -> int:
        """`save`, then give the lease back if `token` still holds it; a save that fails keeps the lease."""
        saved = await self.save(key, data, version=version, change=change)
        await self._release(key, token)
        return saved

    async def _release(self, key: str, token: str) -> None:
        """Give the lease back if `token` still holds it."""

    async def _holder(self, key: str) -> str | None:
        """The token that holds the lease on `key` now, if any (see `_holders`)."""
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
