"""What a session holds, as plain data: registry entries, active tools, inputs, outputs, long values
and the context. JSON-ready (`to_json`), so a store can keep it; handles travel as their steps.

`restore_state` puts such a snapshot back into a session on the same schema: every ID keeps its
handle, the next mint of each type continues after its highest N, and defaults (the most recent
object of a type, the least recently used tool to drop) come back as they were.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from .._tools import ToolCall
from ..registry._handles import Handle, freeze, parse_object_id, thaw
from ..registry._identity import Key, identifies, key_field
from ..registry._registry import ObjectEntry
from ._context import Message
from ._metatools import ValueInput
from ._outputs import Output

if TYPE_CHECKING:
    from ._session import Session

__all__ = [
    "SessionState",
    "message_from_json",
    "message_json",
    "object_entry",
    "object_json",
    "order_of_use",
    "pending_calls",
    "restore_state",
    "unchanged_order",
]


@dataclass(frozen=True, kw_only=True)
class SessionState:
    """A snapshot of one session's plain data. Never credentials: those belong to requests."""

    objects: tuple[dict[str, Any], ...]
    active_tools: tuple[str, ...]
    values: tuple[dict[str, Any], ...]
    outputs: tuple[dict[str, Any], ...]
    saved: dict[str, Any]
    done: bool
    long_values: dict[str, Any]
    context: tuple[dict[str, Any], ...]
    #: Object IDs from the least to the most recently used: which object each type's parameter defaults to.
    recent: tuple[str, ...] = ()
    #: Active tools with the tick of their last use (what the cap drops first).
    tool_uses: dict[str, int] = field(default_factory=dict)
    #: Calls numbered by the session so far (`call_N` IDs continue after them).
    calls: int = 0
    #: Client tool calls still waiting for `tool_call_result`.
    pending: tuple[dict[str, Any], ...] = ()
    #: Bytes of the arguments and results the session's calls have added to it (`Session.held_bytes`), kept
    #: with it so a limit on them (the MCP server's `max_session_bytes`) holds across processes and restarts.
    held_bytes: int = 0

    @classmethod
    def of(cls, session: Session, *, bulk: bool = True) -> SessionState:
        """The session's state; without `bulk`, objects and context are left empty (for an encoder
        that keeps their encodings: both are immutable once made)."""
        return cls(
            objects=tuple(object_json(entry) for entry in session.registry) if bulk else (),
            active_tools=tuple(session.active_tools),
            values=tuple({"name": v.name, "value": v.value, "description": v.description} for v in session.values),
            outputs=tuple({"name": o.name, "type": o.type, "description": o.description} for o in session.outputs),
            saved=dict(session.saved),
            done=session.done,
            long_values=session.long_values.kept(),
            context=tuple(message_json(m) for m in session.context) if bulk else (),
            recent=tuple(e.id for e in reversed(list(session.registry.recent()))),
            tool_uses=session.fields.active.uses(),
            calls=session._calls,
            pending=tuple(_call(c) for c in session._pending.values()),
            held_bytes=session.held_bytes,
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionState:
        """The inverse of `to_json`; keys it does not know are ignored, missing ones take their defaults."""
        if not isinstance(data, dict) or "objects" not in data:
            raise ConfigError("This is not a stored session state: it has no objects.")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("objects", "active_tools", "values", "outputs", "context", "recent", "pending"):
            if name in values:
                values[name] = tuple(values[name])
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        """Lists and objects only, ready for `json.dumps`."""
        listed: dict[str, Any] = _lists(self.fields())
        return listed

    def fields(self) -> dict[str, Any]:
        """Field name to value, shallow: JSON-ready as it is (tuples encode as arrays), without copying."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return value


def restore_state(session: Session, state: SessionState, *, whole: bool = True) -> None:
    """Put the registry, toolset, inputs, outputs, long values and context of `state` into `session`, in place
    (`Session.restore` adds the session's own counters). Without `whole`, the registry and the context
    are left as they are (`_persistence.apply_changes` brought them up to date)."""
    if whole:
        session.registry.restore([object_entry(session, item) for item in state.objects], list(state.recent))
    session.fields.active.restore(state.tool_uses or {name: 0 for name in state.active_tools})
    session.values[:] = [ValueInput(name=v["name"], value=v["value"], description=v.get("description", "")) for v in state.values]
    session.outputs[:] = [Output(name=o["name"], type=o["type"], description=o.get("description", "")) for o in state.outputs]
    session.saved = dict(state.saved)
    session.done = state.done
    session.long_values.restore(state.long_values)
    if whole:
        session.context.messages[:] = [message_from_json(m) for m in state.context]
    session.held_bytes = state.held_bytes


def object_entry(session: Session, item: dict[str, Any]) -> ObjectEntry:
    """The registry entry a stored object (`object_json`) stands for."""
    parsed = parse_object_id(item["id"])
    if parsed is None:
        raise ConfigError(f"Stored object {item['id']!r} is not a Type#N ID; the stored session is damaged.")
    key = _key(item.get("key")) or _identity_key(session, item["type"], item.get("identity"))
    return ObjectEntry(
        id=item["id"],
        type_name=item["type"],
        number=parsed[1],
        handle=Handle.from_json(item["handle"]),
        expression=item.get("expression", ""),
        description=item.get("description", ""),
        identity=item.get("identity"),
        preview=dict(item.get("preview") or {}),
        key=key,
        identified=identifies(session.catalogue, item["type"], key),
    )


def pending_calls(state: SessionState) -> dict[str, ToolCall]:
    """The client tool calls the stored session waits on, by call ID."""
    return {c["id"]: ToolCall(name=c["name"], arguments=c["arguments"], id=c["id"]) for c in state.pending}


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def message_from_json(data: dict[str, Any]) -> Message:
    calls = tuple(ToolCall(name=c["name"], arguments=c["arguments"], id=c.get("id", "")) for c in data.get("tool_calls", ()))
    return Message(
        role=data["role"],
        content=data.get("content", ""),
        tool_calls=calls,
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
        is_error=bool(data.get("is_error")),
    )


def object_json(entry: ObjectEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "type": entry.type_name,
        "handle": entry.handle.to_json(),
        "expression": entry.expression,
        "description": entry.description,
        "identity": entry.identity,
        "preview": dict(entry.preview),
        **({"key": {name: thaw(value) for name, value in entry.key}} if entry.key and entry.identity is None else {}),
    }


def _identity_key(session: Session, type_name: str, identity: Any) -> Key:
    """The key of an object re-rooted on its identity, which a store need not keep: its identity."""
    field = key_field(session.catalogue, type_name) if identity is not None else None
    return ((field, freeze(identity)),) if field is not None else ()


def _key(stored: Any) -> Key:
    """A stored key (a JSON object) as the registry holds it; a state stored before keys has none."""
    if not isinstance(stored, dict):
        return ()
    return tuple(sorted((str(name), freeze(value)) for name, value in stored.items()))


def message_json(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [_call(c) for c in message.tool_calls]
    for key in ("tool_call_id", "name"):
        if getattr(message, key):
            out[key] = getattr(message, key)
    if message.is_error:
        out["is_error"] = True
    return out


def order_of_use(session: Session) -> list[str]:
    """Object IDs from the least to the most recently used."""
    return [entry.id for entry in reversed(list(session.registry.recent()))]


def unchanged_order(before: list[str], now: list[str]) -> int:
    """How many IDs at the front of `now` are in the order they were in `before` with only used ones
    taken out: everything after them is written again, in order (used objects move to the end)."""
    position = {object_id: n for n, object_id in enumerate(now)}
    i = j = 0
    moved_from = len(now)
    while i < len(now) and j < len(before) and i < moved_from:
        if now[i] == before[j]:
            i += 1
        else:  # taken out of its place and used again: it is in the tail
            moved_from = min(moved_from, position.get(before[j], len(now)))
        j += 1
    return min(i, moved_from)
