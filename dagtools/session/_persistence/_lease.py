"""The lease: one turn on a session's key at a time, against this process's other tasks (a task lock
per store and key) and other processes alike (the store's lease, for a store that is `shared`).

A turn takes the lease, reading the session with it where the store can (`hold(..., load=True)`);
while the turn runs the lease is renewed every third of `LEASE_SECONDS`, so a killed holder blocks its
key for at most that long, and a holder known to be gone (`_holders`) is not waited for at all. The
turn's save gives the lease back in the same round trip (`Lease.save`); a turn that ends without one
gives it back at the end, and one the store could not be told of is given back in the background as
soon as the store answers. A lease that could not be taken within the store's `lock_timeout` is
`StoreBusyError`. The store holds only the primitives (`take_lease`, `renew_lease`, `release_lease`,
`lease_holder`, `save_and_release`); when each is used is decided here.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from ..._errors import StoreBusyError, StoreError
from ...stores._store import SessionStore, StoredState
from ._holders import holder_gone, new_token

__all__ = ["LEASE_SECONDS", "RELEASE_RETRY_EVERY", "Lease", "hold"]

logger = logging.getLogger("dagtools")

#: How long a lease holds a key without renewal; renewed every third of it while a turn runs, so a
#: killed holder blocks its key for at most this long.
LEASE_SECONDS = 15.0
#: Seconds between two attempts at giving back a lease the store could not be told of (its node down).
RELEASE_RETRY_EVERY = 0.2

#: Per store, the task lock of each key in use in this process and how many tasks use it.
_local: weakref.WeakKeyDictionary[SessionStore, dict[str, tuple[anyio.Lock, int]]] = weakref.WeakKeyDictionary()
#: Leases being given back in the background, as (key, token).
_releasing: set[tuple[str, str]] = set()


class Lease:
    """One turn's hold on a key: what was read as it was taken, and the save that ends the turn."""

    def __init__(self, store: SessionStore, key: str, token: str | None) -> None:
        self.store = store
        self.key = key
        self.token = token
        #: The session as it was when the lease was taken (with `hold(..., load=True)`).
        self.loaded: StoredState | None = None
        #: Whether the store still holds the lease for this turn (it goes with the turn's save).
        self.held = token is not None

    async def save(self, data: bytes, *, version: int, change: bool = False) -> int:
        """The turn's last write (`SessionStore.save`), which gives the lease back with it: one round trip
        for both where the store can. Nothing of the turn may touch the store after it."""
        if not self.held:
            return await self.store.save(self.key, data, version=version, change=change)
        assert self.token is not None
        saved = await self.store.save_and_release(self.key, self.token, data, version=version, change=change)
        self.held = False
        return saved


@asynccontextmanager
async def hold(store: SessionStore, key: str, *, load: bool = False, known: int | None = None) -> AsyncIterator[Lease]:
    """Hold `key` for one turn, against this process's other tasks and other processes alike. With
    `load`, the session is read as the lease is taken (`Lease.loaded`, as `load(key, known=known)`
    gives it), in the same round trip where the store can."""
    local = _local.setdefault(store, {})
    lock, users = local.get(key) or (anyio.Lock(), 0)
    local[key] = (lock, users + 1)
    try:
        async with lock:
            if not store.shared:
                lease = Lease(store, key, None)
                if load:
                    lease.loaded = await store.load(key, known=known)
                yield lease
                return
            async with _leased(store, key, load, known) as lease:
                yield lease
    finally:
        lock, users = local[key]
        if users == 1:
            del local[key]
        else:
            local[key] = (lock, users - 1)


@asynccontextmanager
async def _leased(store: SessionStore, key: str, load: bool, known: int | None) -> AsyncIterator[Lease]:
    """Between processes: take the lease, keep renewing it while the turn runs, give it back (with
    the turn's save, or at the end)."""
    token = new_token()
    lease = Lease(store, key, token)
    deadline = time.monotonic() + store.lock_timeout
    pause, checked = 0.002, 0.0
    while True:
        with anyio.CancelScope(shield=True):  # a lease taken is given back (below) even if the turn is cancelled meanwhile
            try:
                taken = await store.take_lease(key, token, LEASE_SECONDS, load=load, known=known)
            except StoreError:
                _release_later(store, key, token)  # the take may have been done before its answer was lost
                raise
        if taken.held:
            break
        if time.monotonic() > deadline:
            raise StoreBusyError(f"Session {key!r} stayed busy for {store.lock_timeout:g}s in another process; try the call again later.")
        if time.monotonic() - checked > 0.1:  # a holder known to be gone (killed) is not waited for
            checked = time.monotonic()
            holder = taken.holder if taken.holder is not None else await store.lease_holder(key)
            if holder is not None and holder_gone(holder):
                await store.release_lease(key, holder)
                continue
        await anyio.sleep(pause)
        pause = min(pause * 2, 0.05)
    lease.loaded = taken.stored
    store_failed = False
    try:
        async with _renewed(lease):
            yield lease
    except StoreError:
        store_failed = True
        raise
    finally:
        if lease.held and store_failed:  # the store failed just now: not waited for again, the call has its answer
            _release_later(store, key, token)
        elif lease.held:
            with anyio.CancelScope(shield=True):
                try:
                    await store.release_lease(key, token)
                except StoreError:  # the call's own outcome stands; the lease is given back once the store answers
                    _release_later(store, key, token)


def _release_later(store: SessionStore, key: str, token: str) -> None:
    """Give the lease back in the background, as soon as the store answers (a failed-over Redis primary's
    replica holds what the dead one had, this lease included), trying every `RELEASE_RETRY_EVERY` seconds
    until it would have run out anyway. Without it, the session's next call, on any worker, waits the
    whole `LEASE_SECONDS` for a holder that is alive and done."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # not on asyncio: the lease runs out
    if (key, token) in _releasing:
        return
    _releasing.add((key, token))

    async def release() -> None:
        until = time.monotonic() + LEASE_SECONDS
        try:
            while time.monotonic() < until:
                await asyncio.sleep(RELEASE_RETRY_EVERY)
                try:
                    await store.release_lease(key, token)
                    return
                except StoreError:
                    continue
        finally:
            _releasing.discard((key, token))

    task = loop.create_task(release())
    store.background.add(task)  # held until done: the loop keeps only a weak reference
    task.add_done_callback(store.background.discard)


@asynccontextmanager
async def _renewed(lease: Lease) -> AsyncIterator[None]:
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
                group.start_soon(_renew_forever, lease)
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
        lease.store.background.add(task)  # held until done: the loop keeps only a weak reference
        task.add_done_callback(lease.store.background.discard)

    async def renew() -> None:
        nonlocal timer
        assert lease.token is not None
        try:
            await lease.store.renew_lease(lease.key, lease.token, LEASE_SECONDS)
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


async def _renew_forever(lease: Lease) -> None:
    assert lease.token is not None
    while lease.held:
        await anyio.sleep(LEASE_SECONDS / 3)
        if lease.held:
            await lease.store.renew_lease(lease.key, lease.token, LEASE_SECONDS)
