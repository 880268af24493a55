"""Reading one shell line: words, `name=value` arguments, the object by position, pipes and built-ins.

    Query_repository owner=octocat name="hello world"
    Repository_issues Repository#1 first=5 states=[OPEN]
    Query_repository owner=x name=y | Repository_issues first=5 | Issue_author
    search who starred a repository

A value is JSON where it starts as JSON does (`[`, `{`, `"`), with bare enum words allowed inside
brackets (`[OPEN, CLOSED]`, `{state: OPEN}`); 'single quotes' keep their text as it is; a bare word
is read as the tool's parameter says (a string stays a string, `5` is a number where one is wanted).
Nothing here knows the session: a line that cannot be read raises `LineError` before anything runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BUILTINS", "Builtin", "LineError", "Pipeline", "ShellStep", "parse_line", "split_words"]

#: The shell's own commands, with what each does (`help` lists them in this order).
BUILTINS: dict[str, str] = {
    "help": "help [TOOL|Type]: this list, a tool's parameters, or a type's tools",
    "search": "search WORDS: the tools that match, best first",
    "map": "map: every type of a small API with its fields, one line each (a field is called as Type_field)",
    "held": "held: the objects this session holds, and its saved outputs",
    "save": "save NAME=Type#N ...: hand the outputs back (when the session declares outputs)",
    "trace": "trace [FILE.html|FILE.mmd|FILE.md]: the session's objects and the calls that made them",
    "exit": "exit: leave (Ctrl-D too)",
}
HANDLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*#[0-9]+$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CLOSE = {"[": "]", "{": "}", "(": ")"}
_MAX_LINE = 64 * 1024


class LineError(ValueError):
    """A line that cannot be read; its message says what to write instead."""


@dataclass(frozen=True, kw_only=True)
class ShellStep:
    """One call of a line: the tool, the object named by position (if any), and the arguments."""

    tool: str
    target: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Pipeline:
    """One or more calls joined by `|`: one call, or a chain run as `callChain` runs it."""

    steps: tuple[ShellStep, ...]


@dataclass(frozen=True, kw_only=True)
class Builtin:
    name: str
    words: tuple[str, ...] = ()


#: What a parameter's JSON Schema is, for reading a bare word: `(tool, name) -> schema or None`.
Parameters = Callable[[str, str], Mapping[str, Any] | None]


def parse_line(line: str, parameters: Parameters | None = None) -> Pipeline | Builtin | None:
    """A line read: a pipeline of calls, a built-in, or None for an empty line or a `# comment`."""
    if len(line) > _MAX_LINE:
        raise LineError(f"This line is {len(line)} characters long; a line takes at most {_MAX_LINE}.")
    words = split_words(line)
    if not words or words[0].startswith("#"):
        return None
    if words[0] in BUILTINS and "|" not in words:
        return Builtin(name=words[0], words=tuple(words[1:]))
    groups: list[list[str]] = [[]]
    for word in words:
        if word == "|":
            groups.append([])
        else:
            groups[-1].append(word)
    if any(not group for group in groups):
        raise LineError("A | needs a call on each side: Type_field ... | Type_field ...")
    steps = tuple(_step(group, parameters, index) for index, group in enumerate(groups))
    return Pipeline(steps=steps)


def split_words(line: str) -> list[str]:
    """Words as written (quotes and brackets kept), split on spaces and `|` outside quotes and brackets."""
    words: list[str] = []
    current: list[str] = []
    opened: list[tuple[str, int]] = []  # brackets open, with where
    quote: tuple[str, int] | None = None
    index = 0
    while index < len(line):
        char = line[index]
        if quote is not None:
            current.append(char)
            if char == "\\" and quote[0] == '"' and index + 1 < len(line):
                current.append(line[index + 1])
                index += 1
            elif char == quote[0]:
                quote = None
        elif char in "\"'":
            quote = (char, index)
            current.append(char)
        elif char in _CLOSE:
            opened.append((char, index))
            current.append(char)
        elif char in "]})":
            if not opened or _CLOSE[opened[-1][0]] != char:
                raise LineError(f"A {char} at column {index + 1} closes nothing; remove it or open its {_opening(char)} first.")
            opened.pop()
            current.append(char)
        elif opened:
            current.append(char)
        elif char.isspace() or char == "|":
            if current:
                words.append("".join(current))
                current = []
            if char == "|":
                words.append("|")
        else:
            current.append(char)
        index += 1
    if quote is not None:
        raise LineError(f"The {quote[0]} at column {quote[1] + 1} is never closed; close it with another {quote[0]}.")
    if opened:
        char, where = opened[-1]
        raise LineError(f"The {char} at column {where + 1} is never closed; close it with {_CLOSE[char]}.")
    if current:
        words.append("".join(current))
    return words


def _opening(char: str) -> str:
    return next(o for o, c in _CLOSE.items() if c == char)


def _step(words: list[str], parameters: Parameters | None, index: int) -> ShellStep:
    tool, rest = words[0], words[1:]
    if "=" in tool or HANDLE.match(tool) or not _NAME.match(tool.replace("-", "_")):
        raise LineError(f"{tool!r} is not a tool name; a call starts with its tool, such as Type_field name=value.")
    target: str | None = None
    arguments: dict[str, Any] = {}
    for word in rest:
        name, sep, raw = word.partition("=")
        if not sep:
            if HANDLE.match(word):
                if target is not None:
                    raise LineError(f"{tool} names two objects ({target} and {word}); a call acts on one.")
                if index:
                    raise LineError(f"{word}: after a |, a step acts on what the step before returned, so it names no object.")
                target = word
                continue
            raise LineError(f"{word!r} is not an argument; write name=value (or the object as Type#N, first).")
        if not _NAME.match(name):
            raise LineError(f"{word!r}: {name!r} is not an argument name; write name=value.")
        if name in arguments:
            raise LineError(f"{tool} is given {name} twice; give it once.")
        schema = parameters(tool, name) if parameters is not None else None
        arguments[name] = parse_value(raw, schema, name)
    return ShellStep(tool=tool, target=target, arguments=arguments)


#: A quoted string, or a bare word: anything up to a comma, bracket, brace, colon, quote or space
#: (`OPEN`, `author.login`, `agency-1`); a word that is a JSON number or literal stays one.
_BARE = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s,\[\]{}":]+')
_JSON_WORD = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?|true|false|null")


def parse_value(raw: str, schema: Mapping[str, Any] | None = None, name: str = "value") -> Any:
    """One argument's value, as the module docstring says."""
    if raw.startswith("'"):
        if len(raw) < 2 or not raw.endswith("'"):
            raise LineError(f"The value of {name} opens a ' it never closes; write {name}='text' with both quotes.")
        return raw[1:-1]
    if raw.startswith(('"', "[", "{")):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            if raw.startswith('"'):
                raise LineError(f'The value of {name} is not one quoted text: {raw}; write {name}="text".') from None
            value = _loose_json(raw, name)
        return value
    kind = (schema or {}).get("type")
    if kind == "string" or (schema or {}).get("enum"):
        return raw
    if raw in ("true", "false", "null") or kind in ("integer", "number", "boolean") or re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", raw):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw  # the session says what the parameter takes
    return raw


def _loose_json(raw: str, name: str) -> Any:
    """JSON in which bare words (enum values, object keys) stand for strings."""

    def quote(match: re.Match[str]) -> str:
        word = match.group(0)
        return word if word.startswith('"') or _JSON_WORD.fullmatch(word) else json.dumps(word)

    try:
        return json.loads(_BARE.sub(quote, raw))
    except json.JSONDecodeError as error:
        raise LineError(
            f'The value of {name} is not JSON ({error.msg} at column {error.colno}): write lists as [A, B] or ["a b"] '
            'and objects as {"key": value}.'
        ) from None
