"""Completion of a shell line as it is being typed: tool names, the objects the session holds, argument
names and enum values. Pure: it reads the catalogue and the IDs held, and answers what may follow."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..catalogue._catalogue import Catalogue
from ._parse import BUILTINS

__all__ = ["complete_line"]

_MOST = 200  # candidates offered at once: a prefix narrows GitHub's 6,000 tools before this matters


def complete_line(catalogue: Catalogue, held: Iterable[tuple[str, str]], text: str) -> tuple[int, list[str]]:
    """What may replace the word at the end of `text`: (how many characters back it starts, candidates).
    `held` gives (ID, type name) of each object the session holds."""
    words = _loose_words(text)
    pipes = [i for i, w in enumerate(words) if w == "|"]
    first_segment = not pipes
    words = words[pipes[-1] + 1 :] if pipes else words
    current = "" if not text or text[-1].isspace() or text[-1] == "|" else words.pop() if words else ""
    if not words:  # the tool (or a built-in) itself
        names = [*BUILTINS] if first_segment else []
        return -len(current), _starting(current, [*names, *_tools(catalogue, current)])
    tool = words[0]
    if tool == "help" and first_segment and len(words) == 1:
        return -len(current), _starting(current, [*_tools(catalogue, current), *catalogue.types(), *BUILTINS])
    if tool not in catalogue:
        return 0, []
    schema = catalogue.tool(tool).parameters
    properties: Mapping[str, Any] = schema.get("properties") or {}
    object_name = catalogue.object_parameter(catalogue.ref(tool))
    ids = list(held)
    name, equals, value = current.partition("=")
    if equals:
        return -len(value), _values(properties.get(name), value, ids)
    given = {w.partition("=")[0] for w in words[1:] if "=" in w}
    candidates = [f"{p}=" for p in properties if p != object_name and p not in given]
    if object_name and first_segment and not any("#" in w and "=" not in w for w in words[1:]):
        candidates = [i for i, type_name in reversed(ids) if type_name == object_name] + candidates
    return -len(current), _starting(current, candidates)


def _loose_words(text: str) -> list[str]:
    """Words as `split_words` finds them, for a line still being typed: an open quote or bracket is fine."""
    words: list[str] = []
    current = ""
    depth = 0
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth = max(0, depth - 1)
        elif not depth and (char.isspace() or char == "|"):
            words += [current] if current else []
            words += ["|"] if char == "|" else []
            current = ""
            continue
        current += char
    return words + ([current] if current else [])


def _tools(catalogue: Catalogue, prefix: str) -> list[str]:
    low = prefix.lower()
    return [n for n in catalogue.names() if n.lower().startswith(low)][:_MOST]


def _values(schema: Any, value: str, ids: list[tuple[str, str]]) -> list[str]:
    """Enum values (also inside a list being written: `[OPEN, CL`), else the IDs held."""
    if not isinstance(schema, Mapping):
        return []
    enum = schema.get("enum")
    inner = value
    if enum is None and schema.get("type") == "array" and isinstance(schema.get("items"), Mapping):
        enum = schema["items"].get("enum")
        if value.startswith("["):
            inner = value.rsplit(",", 1)[-1].lstrip("[ ")
            head = value[: len(value) - len(inner)]
            return [head + v for v in _starting(inner, [str(e) for e in enum or ()])]
        return ["[" + v for v in _starting(value.lstrip("["), [str(e) for e in enum or ()])]
    if enum:
        return _starting(inner, [str(e) for e in enum])
    return _starting(value, [i for i, _ in reversed(ids)]) if value else []


def _starting(prefix: str, candidates: Iterable[str]) -> list[str]:
    low = prefix.lower()
    seen = dict.fromkeys(c for c in candidates if c.lower().startswith(low))
    return list(seen)[:_MOST]
