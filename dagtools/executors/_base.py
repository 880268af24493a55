"""What every executor offers: run one document with variables, give back data and errors."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._closing import AsyncClosing
from .._errors import NoServerError
from .._redact import redact
from .._values import value_problem

__all__ = ["Executor", "NoServerError", "Response", "SchemaOnlyExecutor", "format_error"]


@dataclass(frozen=True, kw_only=True)
class Response:
    """A GraphQL answer: `data` (possibly partial) and `errors` as the spec's JSON objects.

    Whatever an executor was given, a Response holds the spec's shapes, so every reader can rely on
    them: `data` an object or None, `errors` a list of objects whose `path`, where there is one, is a
    non-empty list of names and indexes. What did not fit is said in an error instead of kept.
    """

    data: dict[str, Any] | None
    errors: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        errors = self.errors
        if not isinstance(errors, list) or not all(type(e) is dict and _fits(e) for e in errors):
            object.__setattr__(self, "errors", _normalized(errors))
        if self.data is not None and not isinstance(self.data, dict):
            kind = type(self.data).__name__
            note = {"message": f"the API answered `data` that is a {kind}, not an object"}
            object.__setattr__(self, "data", None)
            object.__setattr__(self, "errors", [*self.errors, note])


def _fits(error: dict[str, Any]) -> bool:
    path = error.get("path")
    return path is None or (type(path) is list and bool(path) and all(type(p) in (str, int) for p in path))


def _normalized(errors: Any) -> list[dict[str, Any]]:
    if errors is None:
        return []
    out: list[dict[str, Any]] = []
    for error in errors if isinstance(errors, list) else [errors]:
        if not isinstance(error, dict):
            error = {"message": error}
        elif not _fits(error):
            error = {k: v for k, v in error.items() if k != "path"}  # a path that is not one points nowhere
        out.append(error)
    return out


@runtime_checkable
class Executor(Protocol):
    """Runs GraphQL documents. Raises ExecutorError only when the API could not answer at all."""

    async def execute(self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None) -> Response: ...

    async def aclose(self) -> None:
        """Release connections; the executors dagtools ships are also `async with` context managers."""
        ...


def format_error(error: Any, *, budget: int = 600) -> str:
    """One GraphQL error as a line a model can act on: its message, where it happened, and what the
    API said about it in `extensions`.

    Servers often put the part that says why in `extensions`, not in `message`: a gateway over REST
    answers "Upstream HTTP Error: 400" with the upstream's own words in `response.body.message`,
    others name a `code` (NOT_FOUND) or the offending `field`. Those are kept: every short value in
    `extensions` as `where: value`, the messages first, noise (stack traces, request headers) left
    out, all within `budget` characters and with anything shaped like a credential removed (an
    executor has already removed the credentials it was configured with).

    The error comes from the API, so anything goes: a message that is not text is shown as its JSON
    (or described, when even that cannot be made), and a path that is not a list is left out.
    """
    if not isinstance(error, dict):
        error = {"message": error}
    message = error.get("message")
    if not isinstance(message, str) or not message:
        message = _shown(message) if message not in (None, "") else "unknown error"
    elif not message.isascii() and value_problem(message) is not None:
        message = message.encode("utf-8", "replace").decode("utf-8")  # lone surrogates cannot be sent on
    path = error.get("path")
    if type(path) is list and path and all(type(p) in (str, int) for p in path):
        message += f" (at {'.'.join(str(p) for p in path)})"
    extensions = error.get("extensions")
    room = min(_EXTENSIONS_ROOM, budget * 2 // 5) if isinstance(extensions, dict) and extensions else 0
    message = _cut(redact(message), budget - room, counted=True)
    said = _extensions(extensions, budget - len(message) - len(". The API adds: "))
    return f"{message.rstrip('. ')}. The API adds: {said}" if said else message


#: What a long message leaves for `extensions`, which often say more than the message does.
_EXTENSIONS_ROOM = 240
#: Parts of `extensions` that never tell the model why: traces, and the request as it was sent (a
#: gateway's copy of the upstream URL and headers).
_NOISE = frozenset({"stacktrace", "stack", "exception", "trace", "tracing", "headers", "request", "locations", "originalerror"})
#: What says why, shown first when present.
_TELLING = ("message", "detail", "details", "reason", "description", "error", "code", "field", "argument", "status")


def _extensions(extensions: Any, budget: int) -> str:
    """`where: value` for each short leaf of `extensions` (messages first), within `budget` characters."""
    if not isinstance(extensions, dict) or budget < 40:
        return ""
    leaves: list[tuple[str, Any]] = []
    _leaves(extensions, (), leaves, 0)
    leaves.sort(key=lambda leaf: _rank(leaf[0]))
    parts: list[str] = []
    seen: set[tuple[str, str]] = set()
    room = budget
    for where, value in leaves:
        shown = json.dumps(value, ensure_ascii=not (isinstance(value, str) and value.isprintable()))
        said = (where.rsplit(".", 1)[-1], shown)
        if said in seen:  # `http.status: 400` and `response.status: 400` say one thing
            continue
        seen.add(said)
        part = f"{where}: {redact(shown)}"
        if len(part) > room:
            if not parts:
                parts.append(_cut(part, room))
            break
        parts.append(part)
        room -= len(part) + 2
    return ", ".join(parts)


def _leaves(value: Any, where: tuple[str, ...], out: list[tuple[str, Any]], depth: int) -> None:
    if depth > 6 or len(out) > 40:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            if str(key).lower() not in _NOISE:
                _leaves(inner, (*where, str(key)), out, depth + 1)
    elif isinstance(value, list):
        for index, inner in enumerate(value[:5]):
            _leaves(inner, (*where[:-1], f"{where[-1]}[{index}]") if where else (f"[{index}]",), out, depth + 1)
    elif value is not None and value != "" and (not isinstance(value, str) or value_problem(value) is None):
        out.append((".".join(where), value))


def _rank(where: str) -> tuple[int, int]:
    last = where.rsplit(".", 1)[-1].split("[", 1)[0].lower()
    return (_TELLING.index(last) if last in _TELLING else len(_TELLING), where.count("."))


def _cut(text: str, limit: int, *, counted: bool = False) -> str:
    """`text` within `limit` characters; a `counted` cut says how much it left out (nothing is cut silently)."""
    if len(text) <= limit:
        return text
    if counted:
        room = max(limit - len(f"… [cut: {len(text):,} more characters not shown]"), 0)
        if room >= 40:
            return f"{text[:room]}… [cut: {len(text) - room:,} more characters not shown]"
    return text[: max(limit - 1, 0)] + "…"


def _shown(value: Any) -> str:
    problem = value_problem(value)
    if problem is not None:
        return f"an error whose message is not text and {problem}"
    return json.dumps(value, ensure_ascii=False)


class SchemaOnlyExecutor(AsyncClosing):
    """For a schema with no server behind it (an SDL or introspection file): its tools can be listed
    and selected, and every call says why nothing can run and that only the person running dagtools
    can change that."""

    def __init__(self, origin: str = "this schema") -> None:
        self.origin = origin

    async def execute(self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None) -> Response:
        self._check_open()
        raise NoServerError(
            f"dagtools was given only a schema ({self.origin}), with no API to send calls to, so no call can run; "
            "retrying will not help. Tools can still be listed and described. To run calls, dagtools needs the API's "
            "URL (as its source, or as the endpoint beside the schema file)."
        )

    async def aclose(self) -> None:
        self.closed = True
