"""A session kept in a store under a key: every turn runs on the latest stored state and is saved
before its results are returned. A turn saves what it changed (`Changes`): the objects it made or
read again (a write's answer replaces what was held of an object), the messages it added, the
objects it used (the order defaults come from) and the small fields that moved; a full snapshot is
written only once the log of changes outgrows the last snapshot four times over, so a call in a
session of 10,000 objects writes about what one in a session of 10 does.

One turn on a key runs at a time, across tasks and processes (the store's lease). A turn first
catches up with whatever another process saved since (only the version is read when nothing moved
on; when the store still holds the snapshot this process holds, only the changes after those it
holds are applied), runs, then saves against the version it started from. Should that save still lose (the lease
ran out under a very slow turn), nothing is saved, the session reloads on its next turn and the
caller gets `StoreConflictError`: the turn's calls are not run twice, since mutations run once.
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import ConfigError, StoreError
from ..stores._store import Lease, SessionStore, StoreConflictError, StoredState
from ._context import Message
from ._state import SessionState, apply_changes, message_json, object_json, order_of_use, unchanged_order

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["SessionKeeper", "StateEncoder", "decode_state", "encode_state"]

T = TypeVar("T")
logger = logging.getLogger("dagtools")


#: States larger than this are stored zlib-compressed (fast level): handles and IDs repeat a lot, and a
#: large session's save is dominated by the bytes written. Smaller ones stay readable JSON.
COMPRESS_ABOVE = 64 * 1024
#: What reading a damaged stored session raises (bad JSON or zlib, a field missing or of the wrong kind).
_DAMAGED = (ValueError, KeyError, TypeError, AttributeError, zlib.error)


def encode_state(state: SessionState) -> bytes:
    """Compact JSON: what a store keeps of a session."""
    return _pack(_dumps(state.fields()).encode())


def _pack(data: bytes) -> bytes:
    return zlib.compress(data, 1) if len(data) > COMPRESS_ABOVE else data


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_Cache = dict[int, tuple[Any, str]]  # id(item) -> (item, its JSON): the item is held so its id is not reused


class StateEncoder:
    """`encode_state(session.state())` without encoding again what did not change: objects never
    change once made, so each is encoded once; the context only grows, so its encoding is extended."""

    def __init__(self) -> None:
        self._objects: _Cache = {}
        self._context: tuple[int, Any, str] = (0, None, "")  # messages encoded, the last of them, their JSON

    def encode(self, session: Session) -> bytes:
        self._objects, objects = _reuse(self._objects, session.registry, object_json)
        context = self._encode_context(session.context.messages)
        rest = SessionState.of(session, bulk=False).fields()
        del rest["objects"], rest["context"]
        return _pack(f'{{"objects":[{objects}],"context":[{context}],{_dumps(rest)[1:]}'.encode())

    def _encode_context(self, messages: list[Message]) -> str:
        count, last, text = self._context
        if len(messages) < count or (count and messages[count - 1] is not last):  # rewritten, not grown
            count, text = 0, ""
        new = ",".join(_dumps(message_json(m)) for m in messages[count:])
        text = f"{text},{new}" if text and new else text or new
        self._context = (len(messages), messages[-1] if messages else None, text)
        return text


def _reuse(cache: _Cache, items: Iterable[Any], to_json: Callable[[Any], Any]) -> tuple[_Cache, str]:
    """The items' encodings joined, and the cache for next time (holding exactly these items)."""
    kept: _Cache = {}
    parts = []
    for item in items:
        hit = cache.get(id(item))
        text = hit[1] if hit is not None and hit[0] is item else _dumps(to_json(item))
        kept[id(item)] = (item, text)
        parts.append(text)
    return kept, ",".join(parts)


def decode_state(data: bytes, log: Iterable[bytes] = ()) -> SessionState:
    """The state a snapshot and the changes saved after it make."""
    try:
        state = _loads(data)
        if log:
            order = dict.fromkeys(state.get("recent") or ())
            at: dict[str, int] = {}  # where each object is in the list, by ID (made when a change needs it)
            for change in log:
                _apply(state, order, _loads(change), at)
            state["recent"] = list(order)
        return SessionState.from_json(state)
    except _DAMAGED as error:
        raise ConfigError(f"The stored session could not be read ({error}); delete it from the store and open a new one.") from None


def _loads(data: bytes) -> Any:
    return json.loads(data if data[:1] == b"{" else zlib.decompress(data))


def _apply(state: dict[str, Any], order: dict[str, None], change: dict[str, Any], at: dict[str, int]) -> None:
    objects = state["objects"]
    for item in change.get("objects", ()):  # a new object, or one the call read again: it replaces the one held
        if not at and objects:
            at.update((o["id"], n) for n, o in enumerate(objects))
        where = at.setdefault(item["id"], len(objects))
        if where == len(objects):
            objects.append(item)
        else:
            objects[where] = item
    if "context" in change:
        state["context"] = state["context"][: change["context_from"]] + change["context"]
    for object_id in change.get("recent", ()):  # used or made by the call: now the most recent, in this order
        order.pop(object_id, None)
        order[object_id] = None
    state.update(change.get("rest", {}))


def _readable(stored: StoredState) -> bool:
    """Whether the stored snapshot and its log decode whole: what tells damage in the store from a fault in
    the code that read them."""
    assert stored.data is not None
    try:
        decode_state(stored.data, stored.log)
    except ConfigError:
        return False
    return True


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


class Changes:
    """What a session changed since it last matched the store: objects only grow, the context only grows
    (else a snapshot is due), the order of use moves used objects last, the rest is small."""

    def __init__(self) -> None:
        self._base: tuple[int, int, Message | None, list[str], dict[str, str]] | None = None
        #: What `encode` found the session to be, for the `mark` that follows a save of it.
        self._encoded: tuple[int, int, Message | None, list[str], dict[str, str]] | None = None
        self._refreshed: tuple[str, ...] = ()  # the objects made before the base that `encode` wrote again

    def mark(self, session: Session, stored: SessionState | None = None) -> None:
        """The session as the store now holds it: as it is (just saved), or as `stored` (just restored,
        perhaps with messages of the host's after it that the store does not hold yet)."""
        messages = session.context.messages
        encoded, self._encoded = self._encoded, None
        refreshed, self._refreshed = self._refreshed, ()
        if stored is None:
            now = (len(session.registry), len(messages), messages[-1] if messages else None)
            if encoded is not None and encoded[:3] == now:  # saved as just encoded: nothing ran in between
                self._base = encoded
                session.registry.settle(refreshed)
            else:
                self._base = (*now, order_of_use(session), _rest(session))
                session.registry.settle()
            return
        session.registry.settle()
        fields = stored.fields()
        rest = {name: _dumps(value) for name, value in fields.items() if name not in ("objects", "context", "recent")}
        count = len(stored.context)
        self._base = (len(stored.objects), count, messages[count - 1] if count else None, list(stored.recent), rest)

    def rebase(self, session: Session, count: int, rest: dict[str, str]) -> None:
        """The store's changes were applied to the session: it holds them, the first `count` messages and `rest`."""
        messages = session.context.messages
        self._encoded, self._refreshed = None, ()
        session.registry.settle()
        self._base = (len(session.registry), count, messages[count - 1] if count else None, order_of_use(session), rest)

    def stored_rest(self) -> dict[str, str] | None:
        """The small fields as the store holds them (JSON texts), when known."""
        return None if self._base is None else self._base[4]

    def forget(self) -> None:
        self._base = self._encoded = None

    def encode(self, session: Session) -> bytes | None:
        """The change since `mark`, or None when only a snapshot will do (nothing marked, a rewritten context)."""
        if self._base is None:
            return None
        objects, count, last, order, rest = self._base
        messages = session.context.messages
        if len(session.registry) < objects or len(messages) < count or (count and messages[count - 1] is not last):
            return None
        change: dict[str, Any] = {"change": 1}
        made = list(islice(session.registry, objects, None))
        fresh = {e.id for e in made}
        self._refreshed = tuple(i for i in session.registry.replaced() if i not in fresh)
        again = [session.registry.get(i) for i in self._refreshed]  # made before, read again since (a write's answer)
        if made or again:
            change["objects"] = [object_json(e) for e in (*made, *again) if e is not None]
        if len(messages) > count:
            change["context_from"], change["context"] = count, [message_json(m) for m in messages[count:]]
        now = order_of_use(session)
        tail = now[unchanged_order(order, now) :]
        if tail:
            change["recent"] = tail
        rest_now = _rest(session)
        moved = {name: json.loads(text) for name, text in rest_now.items() if rest.get(name) != text}
        if moved:
            change["rest"] = moved
        self._encoded = (len(session.registry), len(messages), messages[-1] if messages else None, now, rest_now)
        return _pack(_dumps(change).encode())


def _rest(session: Session) -> dict[str, str]:
    fields = SessionState.of(session, bulk=False).fields()
    return {name: _dumps(value) for name, value in fields.items() if name not in ("objects", "context", "recent")}


#: A snapshot is written instead of a change once the log would pass this many times the last
#: snapshot's size (and at least `_LOG_FLOOR` bytes): resuming reads at most about five snapshots'
#: worth, and a call's share of snapshot writes stays a fraction of its own change.
_LOG_PER_SNAPSHOT = 4
_LOG_FLOOR = 64 * 1024


class SessionKeeper:
    """Binds one `Session` object to `key` in `store`."""

    def __init__(self, store: SessionStore, key: str) -> None:
        self.store = store
        self.key = key
        #: The stored version this session holds: None when unknown (load before use), 0 when not stored yet.
        self.version: int | None = None
        self.encoder = StateEncoder()
        self.changes = Changes()
        self._mark: tuple[int, Message | None] = (0, None)  # the context's length and last message when last stored
        self._snapshot_bytes = 0
        self._log_bytes = 0
        #: The snapshot and the log of changes after it that the session holds (to catch up on the log alone).
        self._held: tuple[bytes, tuple[bytes, ...]] = (b"", ())
        #: Bytes the last save wrote, a change or a snapshot (for benches).
        self.last_written = 0
        #: When this process last found the session in the store or saved it (to say why it is gone).
        self._seen = time.monotonic()

    def _remember(self, session: Session, stored: SessionState | None = None) -> None:
        messages = session.context.messages
        count = len(stored.context) if stored is not None else len(messages)
        self._mark = (count, messages[count - 1] if count else None)
        self.changes.mark(session, stored)

    def _restore(self, session: Session, stored: StoredState, keep: list[Message] | None = None) -> None:
        assert stored.data is not None
        if self._advance(session, stored):
            return
        state = decode_state(stored.data, stored.log)
        session.restore(state, keep=keep or ())
        self._snapshot_bytes, self._log_bytes = len(stored.data), sum(len(change) for change in stored.log)
        self._held = (stored.data, stored.log)
        self.version = stored.version
        self._remember(session, state)

    def _advance(self, session: Session, stored: StoredState) -> bool:
        """Apply only the changes saved after those the session holds, when the store still holds its
        snapshot and its log only grew; False, for a full restore, in any other case."""
        snapshot, log = self._held
        rest = self.changes.stored_rest()
        count, last = self._mark
        messages = session.context.messages
        if self.version is None or rest is None or len(stored.log) < len(log) or stored.data != snapshot or stored.log[: len(log)] != log:
            return False
        if len(messages) < count or (count and messages[count - 1] is not last):
            return False
        keep = messages[count:]
        try:
            changes = [_loads(change) for change in stored.log[len(log) :]]
            rest = {**rest, **{name: _dumps(value) for change in changes for name, value in change.get("rest", {}).items()}}
            state = SessionState.from_json({"objects": (), "context": (), **{name: json.loads(text) for name, text in rest.items()}})
            applied = apply_changes(session, changes, count)
        except Exception as error:
            if not _readable(stored):
                return False  # damaged: the full restore says so, naming what to do
            _catch_up_failed(error)  # the store holds a readable session: the catch-up itself is wrong
            return False
        if applied is None:
            return False
        session.restore(state, keep=keep, whole=False)
        self._log_bytes += sum(len(change) for change in stored.log[len(log) :])
        self._held = (snapshot, stored.log)
        self.version = stored.version
        self._mark = (applied, messages[applied - 1] if applied else None)
        self.changes.rebase(session, applied, rest)
        return True

    def _unsaved_messages(self, session: Session) -> list[Message]:
        """Messages the host appended since the last save (an agent's prompt and replies): kept across a
        catch-up, since the context only grows. None survive a failed turn or a rewritten context."""
        count, last = self._mark
        messages = session.context.messages
        if self.version is None or len(messages) < count or (count and messages[count - 1] is not last):
            return []
        return messages[count:]

    async def open(self, session: Session, create: Callable[[], Awaitable[None]]) -> bool:
        """Resume the stored session, or run `create` and store the result; whether it was resumed."""
        async with self.store.lock(self.key, load=True) as lease:
            stored = lease.loaded
            if stored is not None and stored.data is not None:
                self._restore(session, stored)
                return True
            self.version = 0
            self.changes.forget()
            await self._run_and_save(session, create, lease)
            return False

    async def run(self, session: Session, action: Callable[[], Awaitable[T]]) -> T:
        """Run one turn on the latest stored state and save what it changed before returning."""
        async with self.store.lock(self.key, load=True, known=self.version) as lease:  # read as the lease is taken
            self._caught_up(session, lease.loaded)
            return await self._run_and_save(session, action, lease)

    async def catch_up(self, session: Session) -> None:
        """Restore what another process saved since, without running anything or taking the lease: a
        load is atomic, and this task's own turns on `session` are not running (the caller's lock)."""
        await self._catch_up(session)

    async def _catch_up(self, session: Session) -> None:
        self._caught_up(session, await self.store.load(self.key, known=self.version))

    def _caught_up(self, session: Session, stored: StoredState | None) -> None:
        if stored is None:
            raise ConfigError(self._gone_message())
        self._seen = time.monotonic()
        if stored.data is not None:
            self._restore(session, stored, keep=self._unsaved_messages(session))
            logger.debug("session %s caught up to version %d", self.key, stored.version)
        self.version = stored.version

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

    async def save(self, session: Session) -> None:
        """Store what the host changed outside a turn (`select`, `tool_call_result`)."""
        async with self.store.lock(self.key) as lease:
            await self._save(session, lease)

    async def _run_and_save(self, session: Session, action: Callable[[], Awaitable[T]], lease: Lease) -> T:
        try:
            result = await action()
        except BaseException:
            self.version = None  # what the session holds may be ahead of the store: reload before the next turn
            self.changes.forget()
            raise
        await self._save(session, lease)
        return result

    async def _save(self, session: Session, lease: Lease) -> None:
        """Save what changed, as the turn's last step: the lease goes back with it."""
        if self.version is None:
            raise ConfigError(f"Session {self.key!r} must be reloaded before it is saved; run a call first.")
        change = self.changes.encode(session) if self.version else None
        if change is not None and self._log_bytes + len(change) > max(_LOG_PER_SNAPSHOT * self._snapshot_bytes, _LOG_FLOOR):
            change = None  # the log has outgrown the snapshot: write a new one
        data = change if change is not None else self.encoder.encode(session)
        try:
            self.version = await lease.save(data, version=self.version, change=change is not None)
        except StoreConflictError:
            self.version = None
            self.changes.forget()
            raise StoreConflictError(
                f"Session {self.key!r} was changed by another process while this call ran; "
                "nothing of this call was saved. Run the call again."
            ) from None
        except BaseException as error:
            self.version = None
            self.changes.forget()
            if isinstance(error, StoreError) and not error.ran:  # the turn's calls ran before this save
                raise StoreError(str(error), ran=True) from error
            raise
        if change is not None:
            self._log_bytes += len(data)
            self._held = (self._held[0], (*self._held[1], data))
        else:
            self._snapshot_bytes, self._log_bytes = len(data), 0
            self._held = (data, ())
        self.last_written = len(data)
        self._seen = time.monotonic()
        self._remember(session)


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"
