"""A run as a picture: every `Type#N` of a session a node, linked to the object and the call it came from.

The graph is read from a `SessionState` alone (the registry's entries and the context), so a stored
session can be drawn as well as a live one. Each object hangs from its parent (the object the call
ran on, named first in its expression `Potato#1.rinse(sink: Sink#1)`) or from the root, by an edge
that names the call: its number in the run, the tool and its arguments. Objects passed as arguments
link to the object they helped make with a dotted edge; saved outputs are marked and linked to an
output node; failed calls and plain values the model read hang from their object too, so a run that
went wrong shows where.

Calls are told apart by what they returned, never by their names: a result naming known objects
minted them, any other JSON result is a value, an error result is a failure, plain text (what the
meta-tools answer) is left out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._errors import ConfigError, ToolCallError
from ..calls._arguments import parse_arguments
from ..registry._handles import parse_object_id
from ..session._state import SessionState

if TYPE_CHECKING:
    from ..session._session import Session

__all__ = ["TRACE_SUFFIXES", "Trace", "TraceEdge", "TraceNode", "trace_of", "write_trace"]

#: File suffixes `write_trace` knows, and what each holds.
TRACE_SUFFIXES = {".mmd": "a Mermaid flowchart", ".md": "Markdown with a Mermaid block", ".html": "a page that draws the graph offline"}

NodeKind = Literal["root", "object", "value", "error", "output"]
EdgeKind = Literal["call", "input", "uses", "saved"]

_PARENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*#[0-9]+)\.(.+)$", re.DOTALL)
_LABEL_LIMIT = 60


@dataclass(frozen=True, kw_only=True)
class TraceNode:
    """One node: an object (`label` is its ID), the root, a value read, a failed call or a saved output."""

    key: str
    kind: NodeKind
    label: str
    detail: str = ""
    depth: int = 0
    saved_as: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TraceEdge:
    """How `target` came from `source`: the call (`label`, such as `2. Potato_rinse(sink: Sink#1)`)."""

    source: str
    target: str
    kind: EdgeKind
    label: str
    call_id: str = ""


@dataclass(frozen=True, kw_only=True)
class Trace:
    """The graph of one session's objects, ready to print as Mermaid or as a self-contained page."""

    nodes: tuple[TraceNode, ...]
    edges: tuple[TraceEdge, ...]
    calls: int = 0
    title: str = "dagtools run"

    @classmethod
    def of(cls, session: Session | SessionState, *, title: str = "dagtools run") -> Trace:
        """The trace of a session now, or of a state a store kept."""
        return trace_of(session if isinstance(session, SessionState) else session.state(), title=title)

    def node(self, key: str) -> TraceNode:
        return next(n for n in self.nodes if n.key == key)

    def objects(self) -> list[TraceNode]:
        return [n for n in self.nodes if n.kind == "object"]

    def mermaid(self) -> str:
        """A Mermaid flowchart: paste it into any Markdown that renders Mermaid (GitHub does)."""
        from ._text import to_mermaid

        return to_mermaid(self)

    def html(self) -> str:
        """One HTML page drawing the graph as inline SVG: no script, no link, nothing fetched."""
        from ._html import to_html

        return to_html(self)

    def render(self, suffix: str) -> str:
        """The trace as the file `suffix` names (`.mmd`, `.md`, `.html`)."""
        suffix = suffix.lower()
        if suffix == ".mmd":
            return self.mermaid()
        if suffix == ".md":
            return f"# {self.title}\n\n```mermaid\n{self.mermaid()}```\n"
        if suffix in (".html", ".htm"):
            return self.html()
        known = ", ".join(TRACE_SUFFIXES)
        raise ConfigError(f"A trace is written as {known}; {suffix or 'a name without suffix'} is none of them. Name the file trace.html.")


def write_trace(session: Session | SessionState, path: str | Path, *, title: str = "dagtools run") -> Trace:
    """Draw the session's objects into `path`: Mermaid for `.mmd`, Markdown for `.md`, a page for `.html`."""
    path = Path(path)
    trace = Trace.of(session, title=title)
    text = trace.render(path.suffix)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"The trace could not be written to {path}: {error.strerror or error}. Choose a writable path.") from None
    return trace


# -- building the graph ------------------------------------------------------------------------------------


@dataclass
class _Builder:
    objects: dict[str, dict[str, Any]]
    nodes: dict[str, TraceNode] = field(default_factory=dict)
    edges: list[TraceEdge] = field(default_factory=list)
    origin: dict[str, str] = field(default_factory=dict)  # object ID -> the call ID that minted it
    born: dict[str, int] = field(default_factory=dict)  # node key -> the number of the call that minted it (0: before any)
    extras: int = 0

    def add(self, node: TraceNode, edges: list[TraceEdge]) -> None:
        depth = 1 + max((self.nodes[e.source].depth for e in edges if e.source in self.nodes), default=0)
        self.nodes[node.key] = TraceNode(
            key=node.key, kind=node.kind, label=node.label, detail=node.detail, depth=depth, saved_as=node.saved_as
        )
        self.edges.extend(edges)

    def extra_key(self, prefix: str) -> str:
        self.extras += 1
        return f"{prefix}{self.extras}"


def trace_of(state: SessionState, *, title: str = "dagtools run") -> Trace:
    """The graph of `state`'s objects and the calls that made them (see the module's docstring)."""
    objects = {item["id"]: item for item in state.objects}
    build = _Builder(objects)
    build.nodes["root"] = TraceNode(key="root", kind="root", label="root", depth=0)
    saved_by = _saved_by(state.saved)
    calls = _calls(state.context)
    origins: dict[str, tuple[int, dict[str, Any]]] = {}
    again: list[tuple[int, dict[str, Any], str]] = []  # calls that returned an object the session had already
    others: list[tuple[int, dict[str, Any], dict[str, Any], Any]] = []
    for number, (call, result) in enumerate(calls, start=1):
        minted, value = _minted(objects, result)
        for object_id in minted:
            if object_id in origins or _is_input(objects[object_id]):
                again.append((number, call, object_id))
            else:
                origins[object_id] = (number, call)
        if not minted and value is not _TEXT:
            others.append((number, call, result, value))
    for object_id, item in objects.items():  # in the order they were minted: what an object came from is drawn before it
        _add_object(build, item, origins.get(object_id), saved_by)
    for number, call, object_id in again:
        parent = _call_parent(build, call, number)
        label = _call_label(number, call, parent)
        build.edges.append(TraceEdge(source=parent, target=node_key(object_id), kind="call", label=label, call_id=call.get("id", "")))
    for number, call, result, value in others:
        _add_other(build, number, call, result, value)
    _add_outputs(build, state.saved, calls)
    ordered = sorted(build.nodes.values(), key=lambda n: n.depth)
    return Trace(nodes=tuple(ordered), edges=tuple(build.edges), calls=len(calls), title=title)


def _calls(context: tuple[dict[str, Any], ...]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each tool call of the context with its result, in the order they were made (pending ones left out),
    its arguments read as the session read them when it ran the call."""
    results = {m.get("tool_call_id"): m for m in context if m.get("role") == "tool"}
    out = []
    for message in context:
        for call in message.get("tool_calls") or ():
            result = results.get(call.get("id"))
            if result is not None:
                out.append(({**call, "arguments": _parsed(call)}, result))
    return out


def _parsed(call: dict[str, Any]) -> Any:
    """A model's arguments arrive as the JSON text it wrote (the context keeps them so, as sent); a replayed
    call's as an object. Both are parsed as the session parses them, so a trace is the same whoever made the
    calls. Text the session refused to read stays text: the call failed, and its label shows what was sent."""
    arguments = call.get("arguments")
    if not isinstance(arguments, str):
        return arguments
    try:
        return parse_arguments(str(call.get("name", "")), arguments)
    except ToolCallError:
        return arguments


#: What a plain-text result (a meta-tool's answer) reads as: nothing to draw.
_TEXT: Any = object()


def _minted(objects: dict[str, Any], result: dict[str, Any]) -> tuple[list[str], Any]:
    """The known objects a result names, and its value (`_TEXT` for plain text, the error text for an error)."""
    if result.get("is_error"):
        return [], _error_text(str(result.get("content", "")))
    try:
        payload = json.loads(result.get("content") or "")
    except (json.JSONDecodeError, TypeError):
        return [], _TEXT
    value = payload.get("result") if isinstance(payload, dict) and "result" in payload else payload
    return [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str) and v in objects], value


def _error_text(content: str) -> str:
    try:
        payload = json.loads(content)
    except json.JSONDecodeError:
        return content
    return str(payload.get("error", content)) if isinstance(payload, dict) else content


def _add_other(build: _Builder, number: int, call: dict[str, Any], result: dict[str, Any], value: Any) -> None:
    """A failed call, or a value the model read, hung from the object the call ran on."""
    parent = _call_parent(build, call, number)
    if result.get("is_error"):
        node = TraceNode(key=build.extra_key("e"), kind="error", label="error", detail=_short(str(value), 120))
    else:
        node = TraceNode(key=build.extra_key("v"), kind="value", label=_short(json.dumps(value, ensure_ascii=False), 40))
    edge = TraceEdge(source=parent, target=node.key, kind="call", label=_call_label(number, call, parent), call_id=call.get("id", ""))
    build.add(node, [edge])


def _add_object(build: _Builder, item: dict[str, Any], origin: tuple[int, dict[str, Any]] | None, saved_by: dict[str, list[str]]) -> None:
    object_id = item["id"]
    match = _PARENT.match(item.get("expression") or "")
    parent = node_key(match.group(1)) if match and match.group(1) in build.objects and match.group(1) != object_id else "root"
    key = node_key(object_id)
    edges: list[TraceEdge] = []
    if origin is not None:
        number, call = origin
        build.born[key] = number
        edges.append(TraceEdge(source=parent, target=key, kind="call", label=_call_label(number, call, parent), call_id=call["id"]))
        for name, used in _object_arguments(build, _arguments(call)):
            if node_key(used) != parent and node_key(used) in build.nodes:
                edges.append(TraceEdge(source=node_key(used), target=key, kind="uses", label=f"{number}. {name}", call_id=call["id"]))
    elif parent == "root" and item.get("description"):
        edges.append(TraceEdge(source="root", target=key, kind="input", label=f"input: {_short(item.get('expression', ''))}"))
    else:
        tail = match.group(2) if match else item.get("expression", "")
        edges.append(TraceEdge(source=parent, target=key, kind="call", label=_short(tail or object_id)))
    preview = list((item.get("preview") or {}).items())[:3]
    detail = item.get("description") or ", ".join(f"{k}: {_short(json.dumps(v, ensure_ascii=False), 24)}" for k, v in preview)
    saved_as = tuple(saved_by.get(object_id, ()))
    build.add(TraceNode(key=key, kind="object", label=object_id, detail=_short(detail), saved_as=saved_as), edges)


def _add_outputs(build: _Builder, saved: dict[str, Any], calls: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """One node per saved output, linked from what was saved (objects) or holding the value itself."""
    if not saved:
        return
    saving: dict[str, Any] = {}
    number = 0
    for n, (c, r) in enumerate(calls, start=1):  # the last call that saved these values
        if not r.get("is_error") and _saves(c, saved):
            number, saving = n, c
    for name, value in saved.items():
        key = "out_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
        if key in build.nodes:  # two names that differ only in punctuation
            key = build.extra_key(key + "_")
        values = value if isinstance(value, list) else [value]
        sources = [node_key(v) for v in values if isinstance(v, str) and node_key(v) in build.nodes]
        detail = "" if sources else _short(json.dumps(value, ensure_ascii=False), 40)
        call = f"{number}. {saving.get('name')}({name})" if number else f"saved as {name}"
        edges = [TraceEdge(source=s, target=key, kind="saved", label=call, call_id=saving.get("id", "")) for s in sources]
        build.add(TraceNode(key=key, kind="output", label=f"output {name}", detail=detail), edges)


def _saves(call: dict[str, Any], saved: dict[str, Any]) -> bool:
    arguments = call.get("arguments")
    return isinstance(arguments, dict) and all(arguments.get(k) == v for k, v in saved.items())


def _saved_by(saved: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in saved.items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str):
                out.setdefault(v, []).append(name)
    return out


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    return arguments if isinstance(arguments, dict) else {}


def _is_input(item: dict[str, Any]) -> bool:
    """An object the host gave: a root chain with a description (inputs always have one; calls give none)."""
    return bool(item.get("description")) and not _PARENT.match(item.get("expression") or "")


def _call_parent(build: _Builder, call: dict[str, Any], number: int) -> str:
    arguments = _arguments(call)
    return _parent_argument(build, arguments) or _default_parent(build, str(call.get("name", "")), number)


def _parent_argument(build: _Builder, arguments: dict[str, Any]) -> str | None:
    """The object parameter, named after its type (`Potato: "Potato#3"`)."""
    for name, value in arguments.items():
        parsed = parse_object_id(value) if isinstance(value, str) else None
        if parsed and parsed[0] == name and node_key(value.strip()) in build.nodes:
            return node_key(value.strip())
    return None


def _default_parent(build: _Builder, tool: str, number: int) -> str:
    """A call that left its object to the default: the latest object minted before it whose type starts the tool's name."""
    for node in reversed(list(build.nodes.values())):
        if node.kind == "object" and build.born.get(node.key, 0) < number and tool.startswith(node.label.partition("#")[0] + "_"):
            return node.key
    return "root"


def _object_arguments(build: _Builder, value: Any, name: str = "") -> list[tuple[str, str]]:
    """(argument name, object ID) for every known object an argument names, however deep."""
    if isinstance(value, str):
        return [(name, value)] if value in build.objects else []
    if isinstance(value, dict):
        return [found for k, v in value.items() for found in _object_arguments(build, v, f"{name}.{k}" if name else k)]
    if isinstance(value, list):
        return [found for v in value for found in _object_arguments(build, v, name)]
    return []


def _call_label(number: int, call: dict[str, Any], parent: str) -> str:
    """`2. Potato_rinse(sink: Sink#1)`: the parameter naming the object the call ran on is the edge itself."""
    arguments = call.get("arguments")
    if not isinstance(arguments, dict):
        return f"{number}. {call.get('name')}({_short(str(arguments), 40)})"
    shown = [
        f"{k}: {_short(_literal(v), 30)}" for k, v in arguments.items() if node_key(str(v)) != parent or parse_object_id(str(v)) is None
    ]
    return _short(f"{number}. {call.get('name')}({', '.join(shown)})", 90)


def _literal(value: Any) -> str:
    if isinstance(value, str) and parse_object_id(value) is not None:
        return value
    return json.dumps(value, ensure_ascii=False)


def node_key(object_id: str) -> str:
    """`Potato#2` -> `o_Potato_2`: a name Mermaid takes as a node ID (N has no underscore, so this is one-to-one)."""
    return "o_" + object_id.replace("#", "_")


def _short(text: str, limit: int = _LABEL_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
