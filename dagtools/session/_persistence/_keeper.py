"""The kept session's state machine: one `Standing` value says where a session stands against its
store, and each event the package docstring draws (a load, a turn, a save) is one method here that
replaces it. Nothing else in the keeper decides whether to catch up, restore whole, append or
compact: those choices read the standing and nothing else.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from ..._errors import ConfigError, StoreError
from ...stores._store import SessionStore, StoreConflictError, StoredState
from .._context import Message
from ._lease import Lease, hold
from ._log import Changes, StateEncoder, apply_changes, decode_state

if TYPE_CHECKING:
    from .._session import Session

__all__ = ["Phase", "SessionKeeper", "Standing"]

T = TypeVar("T")
logger = logging.getLogger("dagtools")

#: A snapshot is written instead of a change once the log would pass this many times the last
#: snapshot's size (and at least `_LOG_FLOOR` bytes): resuming reads at most about five snapshots'
#: worth, and a call's share of snapshot writes stays a fraction of its own change.
_LOG_PER_SNAPSHOT = 4
_LOG_FLOOR = 64 * 1024


class Phase(Enum):
    """The states of the package docstring's drawing."""

    #: Nothing held is known to match the store (not loaded yet, or a turn failed or lost its save): the
    #: next load restores whole, and nothing is saved before it.
    ADRIFT = "adrift"
    #: Not in the store yet, the lease held while the session is made: its save writes the first snapshot.
    NEW = "new"
    #: Holds what the store held at `version`: a load of a later version catches up on the log.
    IN_STEP = "in step"
    #: In step and holding the lease for one turn: its save appends a change (or compacts) and gives the lease back.
    LEASED = "leased"


#: The transitions the drawing allows: from each phase, the phases it may go to.
_NEXT: dict[Phase, frozenset[Phase]] = {
    Phase.ADRIFT: frozenset({Phase.NEW, Phase.IN_STEP}),
    Phase.NEW: frozenset({Phase.IN_STEP, Phase.ADRIFT}),
    Phase.IN_STEP: frozenset({Phase.IN_STEP, Phase.LEASED}),
    Phase.LEASED: frozenset({Phase.LEASED, Phase.IN_STEP, Phase.ADRIFT}),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Standing:
    """Where a kept session stands against the store: replaced whole at every transition, never edited."""

    phase: Phase
    #: The stored version held (0: not stored yet).
    version: int = 0
    #: The snapshot held, the log of changes after it that the session holds, and the log's size.
    snapshot: bytes = b""
    log: tuple[bytes, ...] = ()
    log_bytes: int = 0
    #: How many messages of the context the store holds, and the last of them: messages after them are
    #: the host's, not saved yet; a different last one means the context was rewritten.
    messages: int = 0
    last: Message | None = None

    def unsaved(self, messages: list[Message]) -> list[Message] | None:
        """The messages the host appended since the store last matched (kept across a load, since the
        context only grows); None when nothing is known to match or the context was rewritten."""
        if self.phase is Phase.ADRIFT or len(messages) < self.messages or (self.messages and messages[self.messages - 1] is not self.last):
            return None
        return messages[self.messages :]

    def continued_by(self, stored: StoredState) -> bool:
        """Whether `stored` is what this standing holds with only changes appended: the same snapshot (no
        other writer compacted the log) and the held log at the front of its log."""
        held = len(self.log)
        return self.phase in (Phase.IN_STEP, Phase.LEASED) and stored.data == self.snapshot and stored.log[:held] == self.log


def _held(stored: StoredState, messages: list[Message], count: int, phase: Phase) -> Standing:
    """In step with `stored`, whose context is the first `count` of `messages`; leased or not as before."""
    assert stored.data is not None
    return Standing(
        phase=Phase.LEASED if phase is Phase.LEASED else Phase.IN_STEP,
        version=stored.version,
        snapshot=stored.data,
        log=stored.log,
        log_bytes=sum(len(change) for change in stored.log),
        messages=count,
        last=messages[count - 1] if count else None,
    )


_reported: set[str] = set()


def _catch_up_failed(error: Exception) -> None:
    """Log, once per kind of fault and place, a catch-up that failed on a readable stored session: the call
    goes on with a full restore, but a fault there is a bug to fix, not a slowdown to live with."""
    where = error.__traceback__
    while where is not None and where.tb_next is not None:
        where = where.tb_next
    kind = f"{type(error).__name__}@{where.tb_frame.f_code.co_filename}:{where.tb_lineno}" if where is not None else type(error).__name__
    if kind in _reported:
        return
    _reported.add(kind)
    logger.error(
        "Catching a session up on the changes saved since failed on a readable stored session; it was restored whole "
        "instead, as every such catch-up will be. This is a fault in dagtools: please report it with this traceback.",
        exc_info=error,
    )


def _readable(stored: StoredState) -> bool:
    """Whether the stored snapshot and its log decode whole: what tells damage in the store from a fault in
    the code that read them."""
    assert stored.data is not None
    try:
        decode_state(stored.data, stored.log)
    except ConfigError:
        return False
    return True


class SessionKeeper:
    """Binds one `Session` object to `key` in `store`, through the states the package docstring draws."""

    def __init__(self, store: SessionStore, key: str) -> None:
        self.store = store
        self.key = key
        self.standing = Standing(phase=Phase.ADRIFT)
        self.encoder = StateEncoder()
        self.changes = Changes()
        #: Bytes the last save wrote, a change or a snapshot (for benches).
        self.last_written = 0
        #: When this process last found the session in the store or saved it (to say why it is gone).
        self._seen = time.monotonic()

    @property
    def version(self) -> int | None:
        """The stored version this session holds: None when unknown (load before use), 0 when not stored yet."""
        return None if self.standing.phase is Phase.ADRIFT else self.standing.version

    def _move(self, to: Standing) -> None:
        """The one place the standing changes, along the drawing's arrows only."""
        assert to.phase in _NEXT[self.standing.phase], f"{self.standing.phase} -> {to.phase}"
        self.standing = to

    def _drift(self) -> None:
        """What the session holds may be ahead of the store (a turn failed, its save was lost or refused):
        nothing of it is saved, and the next load restores whole."""
        self._move(Standing(phase=Phase.ADRIFT))
        self.changes.forget()

    # -- events ------------------------------------------------------------------------------------------

    async def open(self, session: Session, create: Callable[[], Awaitable[None]]) -> bool:
        """Resume the stored session, or run `create` and store the result; whether it was resumed."""
        async with hold(self.store, self.key, load=True) as lease:
            stored = lease.loaded
            if stored is not None and stored.data is not None:
                self._restore(session, stored, [])
                return True
            self._move(Standing(phase=Phase.NEW))
            self.changes.forget()
            await self._turn(session, create, lease)
            return False

    async def run(self, session: Session, action: Callable[[], Awaitable[T]]) -> T:
        """Run one turn on the latest stored state and save what it changed before returning."""
        async with hold(self.store, self.key, load=True, known=self.version) as lease:  # read as the lease is taken
            self._loaded(session, lease.loaded)
            self._move(replace(self.standing, phase=Phase.LEASED))
            return await self._turn(session, action, lease)

    async def catch_up(self, session: Session) -> None:
        """Restore what another process saved since, without running anything or taking the lease: a
        load is atomic, and this task's own turns on `session` are not running (the caller's lock)."""
        self._loaded(session, await self.store.load(self.key, known=self.version))

    async def save(self, session: Session) -> None:
        """Store what the host changed outside a turn (`select`, `tool_call_result`)."""
        async with hold(self.store, self.key) as lease:
            if self.standing.phase is Phase.ADRIFT:
                raise ConfigError(f"Session {self.key!r} must be reloaded before it is saved; run a call first.")
            self._move(replace(self.standing, phase=Phase.LEASED))
            await self._save(session, lease)

    # -- a load: in step already, stale and caught up on the log, or restored whole ----------------------

    def _loaded(self, session: Session, stored: StoredState | None) -> None:
        if stored is None:
            raise ConfigError(self._gone_message())
        self._seen = time.monotonic()
        if stored.data is None:  # the version held: nothing moved on
            return
        unsaved = self.standing.unsaved(session.context.messages)
        if unsaved is None or not self.standing.continued_by(stored) or not self._catch_up(session, stored, unsaved):
            self._restore(session, stored, unsaved or [])
        logger.debug("session %s caught up to version %d", self.key, stored.version)

    def _catch_up(self, session: Session, stored: StoredState, unsaved: list[Message]) -> bool:
        """Stale, with the store's log continuing the one held: apply only the changes after those held.
        False, nothing changed, when they do not fit or cannot be read (a full restore follows)."""
        rest = self.changes.stored_rest()
        assert rest is not None  # in step: marked
        try:
            applied = apply_changes(session, stored.log[len(self.standing.log) :], self.standing.messages, rest)
        except Exception as error:
            if _readable(stored):  # the store holds a readable session: the catch-up itself is wrong
                _catch_up_failed(error)
            return False  # when damaged, the full restore says so, naming what to do
        if applied is None:
            return False
        count, rest, state = applied
        session.restore(state, keep=unsaved, whole=False)
        self._move(_held(stored, session.context.messages, count, self.standing.phase))
        self.changes.rebase(session, count, rest)
        return True

    def _restore(self, session: Session, stored: StoredState, unsaved: list[Message]) -> None:
        """Take the stored snapshot and log whole, keeping the host's unsaved messages after them."""
        assert stored.data is not None
        state = decode_state(stored.data, stored.log)
        session.restore(state, keep=unsaved)
        self._move(_held(stored, session.context.messages, len(state.context), self.standing.phase))
        self.changes.mark(session, state)

    def _gone_message(self) -> str:
        idle, ttl = time.monotonic() - self._seen, self.store.idle_ttl
        if idle < ttl:  # it cannot have expired: it was deleted, or the store itself forgot it
            why = (
                f"it was used {_duration(idle)} ago, too recently to have expired ({_duration(ttl)} idle), so it was deleted or the store "
                "lost its data (a Redis server restarted without persistence starts empty)"
            )
        else:
            why = f"it was idle {_duration(idle)}, longer than the store keeps a session ({_duration(ttl)}), or it was deleted"
        return (
            f"The session store no longer has session {self.key!r}: {why}. What the session held is gone; "
            "open a new session (send a new key, or none) to go on."
        )

    # -- a turn and its save: a change appended, or a new snapshot (compaction); the lease goes back with it

    async def _turn(self, session: Session, action: Callable[[], Awaitable[T]], lease: Lease) -> T:
        try:
            result = await action()
        except BaseException:
            self._drift()
            raise
        await self._save(session, lease)
        return result

    async def _save(self, session: Session, lease: Lease) -> None:
        """Save what changed, as the turn's last step: the lease goes back with it."""
        standing = self.standing
        try:
            change = self.changes.encode(session) if standing.phase is Phase.LEASED else None
            if change is not None and standing.log_bytes + len(change) > max(_LOG_PER_SNAPSHOT * len(standing.snapshot), _LOG_FLOOR):
                change = None  # the log has outgrown the snapshot: compact it into a new one
            data = change if change is not None else self.encoder.encode(session)
        except BaseException:  # nothing written: the store holds what it held, and the next save includes this turn's change
            if standing.phase is Phase.LEASED:
                self._move(replace(standing, phase=Phase.IN_STEP))
            else:
                self._drift()
            raise
        try:
            version = await lease.save(data, version=standing.version, change=change is not None)
        except StoreConflictError:
            self._drift()
            raise StoreConflictError(
                f"Session {self.key!r} was changed by another process while this call ran; "
                "nothing of this call was saved. Run the call again."
            ) from None
        except BaseException as error:
            self._drift()
            if isinstance(error, StoreError) and not error.ran:  # the turn's calls ran before this save
                raise StoreError(str(error), ran=True) from error
            raise
        messages = session.context.messages
        if change is not None:
            log, log_bytes, snapshot = (*standing.log, data), standing.log_bytes + len(data), standing.snapshot
        else:
            log, log_bytes, snapshot = (), 0, data
        self._move(
            Standing(
                phase=Phase.IN_STEP,
                version=version,
                snapshot=snapshot,
                log=log,
                log_bytes=log_bytes,
                messages=len(messages),
                last=messages[-1] if messages else None,
            )
        )
        self.last_written = len(data)
        self._seen = time.monotonic()
        self.changes.mark(session)


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"
