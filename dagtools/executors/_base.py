"""What every executor offers: run one document with variables, give back data and errors."""

from __future__ import annotations

import json
import re
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
    others name a `code` (NOT_FOUND) or the offending `field`, and validation libraries put the rule
    that failed beside an echo of what was sent (`validationErrors[0].value`, `.target`, then
    `.constraints`). Those are kept: every short value in `extensions` as `where: value`, ranked by
    what its keys say: reasons first, then what they are about, echoes of the input last (see
    `_rank`), noise (stack traces, request headers) left out, all within `budget` characters and
    with anything shaped like a credential removed (an executor has already removed the
    credentials it was configured with).

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
#: gateway's copy of the upstream URL and headers, a validation library's link to its own docs).
_NOISE = frozenset(
    {"stacktrace", "stack", "exception", "trace", "tracing", "headers", "request", "locations", "originalerror"}
    | {"url", "uri", "documentation"}
)
#: Words that make a part an echo: what the caller sent, handed back (`validationErrors[0].value`,
#: `.target`, pydantic's `input`, `variables`). The model wrote it and needs it least; it comes last,
#: however early the server put it and whatever it holds (an echoed object's own `message` field too).
_ECHO = frozenset(
    {"value", "values", "target", "input", "inputs", "variables", "variable", "args", "arguments", "query", "document", "received", "given"}
    | {"provided", "raw", "instance", "sent", "params", "parameters"}
)
#: Words that make a part the reason: a message, or what a rule says (`constraints.maxLength: "text
#: must be shorter than..."`). Parts under a holder of reasons (`constraints`) are reasons too.
_REASON = frozenset(
    {"message", "messages", "msg", "reason", "reasons", "detail", "details", "description", "explanation", "hint", "title", "error"}
    | {"problem", "problems", "violation", "violations", "constraint", "constraints", "cause"}
)
#: Words that say what the reason is about: a code, the offending field, where, which rule, the limit.
_ABOUT = frozenset(
    {"code", "codes", "field", "fields", "property", "path", "loc", "argument", "status", "type", "kind", "rule", "expected"}
    | {"limit", "max", "min", "name", "errno"}
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
#: Nodes of `extensions` looked at, however large the server made them: reasons found anywhere in them,
#: and of an echo of the input (which may be as large as the input) only its first nodes.
_WALKED = 600
_ECHOED = 60


def _extensions(extensions: Any, budget: int) -> str:
    """`where: value` for each short leaf of `extensions` within `budget` characters, ranked by what it
    tells (see `_rank`), so that a cap cuts echoes and never the reason."""
    if not isinstance(extensions, dict) or budget < 40:
        return ""
    leaves: list[tuple[str, Any, int]] = []
    _leaves(extensions, (), False, leaves, [0, 0])
    leaves.sort(key=lambda leaf: leaf[2])  # stable: the server's order within a rank
    parts: list[str] = []
    seen: set[tuple[str, str]] = set()
    room = budget
    for where, value, rank in leaves:
        if rank == _RANK_ECHO and isinstance(value, str):
            value = _cut(value, 40)  # which input it was, not all of it again
        shown = json.dumps(value, ensure_ascii=not (isinstance(value, str) and value.isprintable()))
        last = where.rsplit(".", 1)[-1]
        said = (last, shown)
        if said in seen:  # `http.status: 400` and `response.status: 400` say one thing
            continue
        seen.add(said)
        part = f"{where}: {redact(shown)}"
        if len(part) > room and rank <= _RANK_REASON:  # the reason, said shorter rather than not at all
            part = f"{last}: {redact(shown)}"
        if len(part) > room:
            if not parts or rank <= _RANK_REASON:
                parts.append(_cut(part, room))
            break
        parts.append(part)
        room -= len(part) + 2
    return ", ".join(parts)


_RANK_REASON, _RANK_ABOUT, _RANK_OTHER, _RANK_ECHO = 0, 1, 2, 3


def _leaves(value: Any, where: tuple[str, ...], reason: bool, out: list[tuple[str, Any, int]], walked: list[int]) -> None:
    """Each short leaf under `value` with its rank: every node is looked at (up to _WALKED, echoes
    counted apart, up to _ECHOED), so a reason is found however much the server put before it."""
    echo = bool(where) and _rank(where, reason) == _RANK_ECHO
    walked[echo] += 1
    if walked[echo] > (_ECHOED if echo else _WALKED) or len(where) > 8:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            words = _words(str(key))
            if str(key).lower() in _NOISE or (words and words[-1] in _NOISE):
                continue
            _leaves(inner, (*where, str(key)), reason or _is_reason_holder(words), out, walked)
    elif isinstance(value, list):
        for index, inner in enumerate(value[:5]):
            _leaves(inner, (*where[:-1], f"{where[-1]}[{index}]") if where else (f"[{index}]",), reason, out, walked)
    elif value is not None and value != "" and (not isinstance(value, str) or value_problem(value) is None):
        out.append((".".join(where), value, _rank(where, reason)))


def _words(key: str) -> list[str]:
    """`validationErrors` -> ["validation", "errors"], `max_length` -> ["max", "length"]."""
    return [w.lower() for w in _WORDS.findall(key)]


def _is_reason_holder(words: list[str]) -> bool:
    return bool(words) and words[-1] in _REASON and words[-1] not in ("error", "message", "title")


def _rank(where: tuple[str, ...], reason: bool) -> int:
    """What a leaf tells: an echo of the input anywhere on its path (last), the reason (first), what
    the reason is about (a code, a field), or anything else. Read from the words of every key on the
    path, so `validationErrors[0].constraints.maxLength`, pydantic's `detail[0].msg` and RFC 7807's
    `detail` rank alike without a list of libraries."""
    keys = [_words(part.split("[", 1)[0]) for part in where]
    if any(words and words[-1] in _ECHO for words in keys):
        return _RANK_ECHO
    own = keys[-1] if keys else []
    if reason or (own and own[-1] in _REASON):
        return _RANK_REASON
    if own and own[-1] in _ABOUT:
        return _RANK_ABOUT
    return _RANK_OTHER


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
