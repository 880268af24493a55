"""A session kept in a store under a key: every turn runs on the latest stored state and is saved
before its results are returned.

One turn on a key runs at a time, across tasks and processes (the store's lease). A turn first
catches up with whatever another process saved since (only the version is read when nothing moved
on), runs, then saves against the version it started from. Should that save still lose (the lease
ran out under a very slow turn), nothing is saved, the session reloads on its next turn and the
caller gets `StoreConflictError`: the turn's calls are not run twice, since mutations run once.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import ConfigError
from ._context import Message
from ._state import SessionState, message_json, object_json
from ._store import SessionStore, StoreConflictError

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["SessionKeeper", "StateEncoder", "decode_state", "encode_state"]

T = TypeVar("T")
logger = logging.getLogger("dagtools")


#: States larger than this are stored zlib-compressed (fast level): handles and IDs repeat a lot, and a
#: large session's save is dominated by the bytes written. Smaller ones stay readable JSON.
COMPRESS_ABOVE = 64 * 1024


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


def decode_state(data: bytes) -> SessionState:
    try:
        return SessionState.from_json(json.loads(data if data[:1] == b"{" else zlib.decompress(data)))
    except (ValueError, KeyError, TypeError, zlib.error) as error:
        raise ConfigError(f"The stored session could not be read ({error}); delete it from the store and open a new one.") from None


class SessionKeeper:
    """Binds one `Session` object to `key` in `store`."""

    def __init__(self, store: SessionStore, key: str) -> None:
        self.store = store
        self.key = key
        #: The stored version this session holds: None when unknown (load before use), 0 when not stored yet.
        self.version: int | None = None
        self.encoder = StateEncoder()
        self._mark: tuple[int, Message | None] = (0, None)  # the context's length and last message when last stored

    def _remember(self, session: Session) -> None:
        messages = session.context.messages
        self._mark = (len(messages), messages[-1] if messages else None)

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
        async with self.store.lock(self.key):
            stored = await self.store.load(self.key)
            if stored is not None and stored.data is not None:
                session.restore(decode_state(stored.data))
                self.version = stored.version
                self._remember(session)
                return True
            self.version = 0
            await self._run_and_save(session, create)
            return False

    async def run(self, session: Session, action: Callable[[], Awaitable[T]]) -> T:
        """Run one turn on the latest stored state and save what it changed before returning."""
        async with self.store.lock(self.key):
            stored = await self.store.load(self.key, known=self.version)
            if stored is None:
                raise ConfigError(f"Session {self.key!r} is no longer in the store (it was idle too long, or deleted); open a new one.")
            if stored.data is not None:
                session.restore(decode_state(stored.data), keep=self._unsaved_messages(session))
                logger.debug("session %s caught up to version %d", self.key, stored.version)
            self.version = stored.version
            return await self._run_and_save(session, action)

    async def catch_up(self, session: Session) -> None:
        """Restore what another process saved since, without running anything or taking the lease: a
        load is atomic, and this task's own turns on `session` are not running (the caller's lock)."""
        stored = await self.store.load(self.key, known=self.version)
        if stored is None:
            raise ConfigError(f"Session {self.key!r} is no longer in the store (it was idle too long, or deleted); open a new one.")
        if stored.data is not None:
            session.restore(decode_state(stored.data), keep=self._unsaved_messages(session))
        self.version = stored.version

    async def save(self, session: Session) -> None:
        """Store what the host changed outside a turn (`select`, `tool_call_result`)."""
        async with self.store.lock(self.key):
            await self._save(session)

    async def _run_and_save(self, session: Session, action: Callable[[], Awaitable[T]]) -> T:
        try:
            result = await action()
        except BaseException:
            self.version = None  # what the session holds may be ahead of the store: reload before the next turn
            raise
        await self._save(session)
        return result

    async def _save(self, session: Session) -> None:
        if self.version is None:
            raise ConfigError(f"Session {self.key!r} must be reloaded before it is saved; run a call first.")
        try:
            self.version = await self.store.save(self.key, self.encoder.encode(session), version=self.version)
            self._remember(session)
        except StoreConflictError:
            self.version = None
            raise StoreConflictError(
                f"Session {self.key!r} was changed by another process while this call ran; "
                "nothing of this call was saved. Run the call again."
            ) from None
        except BaseException:
            self.version = None
            raise
