"""What a session holds, as plain data: registry entries, active tools, inputs, outputs, long values
and the context. JSON-ready (`to_json`), so a store can keep it; handles travel as their steps."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["SessionState"]


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

    @classmethod
    def of(cls, session: Session) -> SessionState:
        return cls(
            objects=tuple(
                {
                    "id": entry.id,
                    "type": entry.type_name,
                    "handle": entry.handle.to_json(),
                    "expression": entry.expression,
                    "description": entry.description,
                    "identity": entry.identity,
                    "preview": dict(entry.preview),
                }
                for entry in session.registry
            ),
            active_tools=tuple(session.active_tools),
            values=tuple({"name": v.name, "value": v.value, "description": v.description} for v in session.values),
            outputs=tuple({"name": o.name, "type": o.type, "description": o.description} for o in session.outputs),
            saved=dict(session.saved),
            done=session.done,
            long_values=session.long_values.kept(),
            context=tuple(_message(m) for m in session.context),
        )

    def to_json(self) -> dict[str, Any]:
        """Lists and objects only, ready for `json.dumps`."""
        listed: dict[str, Any] = _lists(asdict(self))
        return listed


def _lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return value


def _message(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    for key in ("tool_call_id", "name"):
        if getattr(message, key):
            out[key] = getattr(message, key)
    if message.is_error:
        out["is_error"] = True
    return out
