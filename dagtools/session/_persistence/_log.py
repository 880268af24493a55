"""The stored form of a session: a snapshot (`encode_state`, `StateEncoder`), the log of changes saved
after it (`Changes`), and both read back, into plain data (`decode_state`) or into a live session that
holds an earlier part of the same log (`apply_changes`).

A change is one JSON object: the objects a call made or read again (a write's answer replaces what was
held of an object), the messages it added (`context_from` and `context`), the objects it used in order
(`recent`: the order defaults come from) and the small fields that moved (`rest`). Applying the log to
the snapshot, as plain data or to a live session, gives what encoding the session whole would have.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..._errors import ConfigError
from .._context import Message
from .._state import SessionState, message_from_json, message_json, object_entry, object_json, order_of_use, unchanged_order

if TYPE_CHECKING:
    from .._session import Session

__all__ = ["Changes", "StateEncoder", "apply_changes", "decode_state", "dumps", "encode_state", "loads"]


#: States larger than this are stored zlib-compressed (fast level): handles and IDs repeat a lot, and a
#: large session's save is dominated by the bytes written. Smaller ones stay readable JSON.
COMPRESS_ABOVE = 64 * 1024
#: What reading a damaged stored session raises (bad JSON or zlib, a field missing or of the wrong kind).
_DAMAGED = (ValueError, KeyError, TypeError, AttributeError, zlib.error)


def encode_state(state: SessionState) -> bytes:
    """Compact JSON: what a store keeps of a session."""
    return _pack(dumps(state.fields()).encode())


def _pack(data: bytes) -> bytes:
    return zlib.compress(data, 1) if len(data) > COMPRESS_ABOVE else data


def dumps(value: Any) -> str:
    """Compact JSON, as everything stored is written."""
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
        return _pack(f'{{"objects":[{objects}],"context":[{context}],{dumps(rest)[1:]}'.encode())

    def _encode_context(self, messages: list[Message]) -> str:
        count, last, text = self._context
        if len(messages) < count or (count and messages[count - 1] is not last):  # rewritten, not grown
            count, text = 0, ""
        new = ",".join(dumps(message_json(m)) for m in messages[count:])
        text = f"{text},{new}" if text and new else text or new
        self._context = (len(messages), messages[-1] if messages else None, text)
        return text


def _reuse(cache: _Cache, items: Iterable[Any], to_json: Callable[[Any], Any]) -> tuple[_Cache, str]:
    """The items' encodings joined, and the cache for next time (holding exactly these items)."""
    kept: _Cache = {}
    parts = []
    for item in items:
        hit = cache.get(id(item))
        text = hit[1] if hit is not None and hit[0] is item else dumps(to_json(item))
        kept[id(item)] = (item, text)
        parts.append(text)
    return kept, ",".join(parts)


def decode_state(data: bytes, log: Iterable[bytes] = ()) -> SessionState:
    """The state a snapshot and the changes saved after it make."""
    try:
        state = loads(data)
        if log:
            order = dict.fromkeys(state.get("recent") or ())
            at: dict[str, int] = {}  # where each object is in the list, by ID (made when a change needs it)
            for change in log:
                _apply(state, order, loads(change), at)
            state["recent"] = list(order)
        return SessionState.from_json(state)
    except _DAMAGED as error:
        raise ConfigError(f"The stored session could not be read ({error}); delete it from the store and open a new one.") from None


def loads(data: bytes) -> Any:
    """One stored snapshot or change, as plain data."""
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
        rest = {name: dumps(value) for name, value in fields.items() if name not in ("objects", "context", "recent")}
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
        return _pack(dumps(change).encode())


def _rest(session: Session) -> dict[str, str]:
    fields = SessionState.of(session, bulk=False).fields()
    return {name: dumps(value) for name, value in fields.items() if name not in ("objects", "context", "recent")}


_Applied = tuple[int, dict[str, str], SessionState]  # the context's length, the small fields as JSON texts and as a state


def apply_changes(session: Session, log: Sequence[bytes], count: int, rest: dict[str, str]) -> _Applied | None:
    """Bring the registry and the first `count` messages (the stored context; any after them are dropped)
    of a session that holds the log before `log` up to date with `log`: the stored context's new length,
    the small fields as stored (JSON texts, `rest` with the log's moves) and as a state to restore
    (`Session.restore(..., whole=False)`). None, nothing changed, when the objects do not fit what the
    registry holds (a full restore is due)."""
    changes = [loads(change) for change in log]
    rest = {**rest, **{name: dumps(value) for change in changes for name, value in change.get("rest", {}).items()}}
    state = SessionState.from_json({"objects": (), "context": (), **{name: json.loads(text) for name, text in rest.items()}})
    messages = session.context.messages[:count]
    for change in changes:
        if "context" in change:
            messages = messages[: change["context_from"]] + [message_from_json(m) for m in change["context"]]
    entries = [object_entry(session, item) for change in changes for item in change.get("objects", ())]
    if not session.registry.apply(entries, [i for change in changes for i in change.get("recent", ())]):
        return None
    session.context.messages[:] = messages
    return len(messages), rest, state
