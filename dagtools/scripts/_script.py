"""Scripted runs: a file of inputs, outputs and tool calls replayed against an API.

    inputs:  {name: {field: <root chain>, description} | {value, description}}
    outputs: {name: {type, description}}
    calls:   [{tool, arguments, expect?, expect_error?}]
    interrupted: why the run that wrote it stopped early (`dagtools run --json` after Ctrl-C); a note,
                 its calls replay as any others

`expect` is a subset of the parsed result that must match, so scripts stay valid when results grow.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .._tools import ToolCall, ToolResult
from .._yaml import Key, read_data
from ..calls._preview_pages import rows_of
from ..session._session import Session

__all__ = ["CALL_KEYS", "SCRIPT_KEYS", "CallRecord", "Script", "load_script", "matches", "run_script"]

#: The keys of a script, at its top level.
SCRIPT_KEYS: dict[str, Key] = {
    "inputs": Key(
        "mapping of name to {field, description} or {value, description}",
        "{}",
        "What the run starts with, as the model sees it: `field` names a root field chain whose object becomes a handle, "
        "`value` gives a plain value; `description` says what it is.",
    ),
    "outputs": Key(
        "mapping of name to {type, description}",
        "{}",
        "What the run must hand back with the `save` tool: `type` is an object type (saved as a handle) or a JSON type.",
    ),
    "calls": Key("list of calls (below)", "[]", "The tool calls to replay, in order, each checked as it says."),
    "interrupted": Key(
        "string",
        "none",
        "Why the run that wrote the script stopped early (`dagtools run --json` after Ctrl-C): a note; its calls replay as any others.",
    ),
}
#: The keys of one call in a script's `calls`.
CALL_KEYS: dict[str, Key] = {
    "tool": Key("string", "required", "The tool's name, as `dagtools tools` lists it (`Potato_peel`, `selectTools`, `save`)."),
    "arguments": Key("mapping", "{}", "The tool's arguments, as the model would send them; handles are written `Type#N`."),
    "expect": Key(
        "any JSON value",
        "none",
        "What the result must contain: mappings are matched by the keys given, lists item by item, the rest by value, "
        "so a script stays valid when results grow.",
    ),
    "expect_error": Key("boolean", "false", "The call must fail (a tool error); without it, a failing call fails the script."),
    "id": Key("string", '""', "The call's id, as a model's tool call carries one; recorded scripts keep it, replays pass it on."),
}


@dataclass(frozen=True, kw_only=True)
class Script:
    inputs: dict[str, dict[str, Any]]
    outputs: dict[str, Any]
    calls: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class CallRecord:
    """One replayed call, its result, and whether it went as the script said it would."""

    call: ToolCall
    result: ToolResult
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.call.name, "arguments": self.call.arguments, "result": self.result.value, "is_error": self.result.is_error}


def load_script(source: str | Path | Mapping[str, Any]) -> Script:
    """Read a YAML or JSON script (a path or an already parsed mapping) and check its shape."""
    if isinstance(source, Mapping):
        data: Any = dict(source)
        origin = "script"
    else:
        origin = str(source)
        data = read_data(source, "Script")
    if not isinstance(data, dict):
        raise ConfigError(f"Script {origin} must be a mapping with inputs, outputs and calls{_what_list(data)}.")
    unknown = set(data) - set(SCRIPT_KEYS)
    if unknown:
        close = {key: m for key in sorted(unknown) if (m := difflib.get_close_matches(key, list(SCRIPT_KEYS), n=1, cutoff=0.7))}
        hint = f" (write {', '.join(f'{k} -> {m[0]}' for k, m in close.items())})" if close else ""
        raise ConfigError(f"Script {origin} has unknown keys {sorted(unknown)}{hint}; use inputs, outputs and calls.")
    calls = data.get("calls") or []
    if not isinstance(calls, list):
        raise ConfigError(f"Script {origin}: calls must be a list of {{tool, arguments}}.")
    for index, call in enumerate(calls):
        if not isinstance(call, dict):
            raise ConfigError(f"Script {origin}: call {index + 1} must be a mapping such as {{tool: Potato_peel, arguments: {{}}}}.")
        extra = sorted(set(call) - set(CALL_KEYS))
        if extra:
            renames = ", ".join(f"{key} -> {_meant(key)}" for key in extra if _meant(key))
            raise ConfigError(
                f"Script {origin}: call {index + 1} has unknown keys {extra}"
                + (f" (write {renames})" if renames else "")
                + f"; a call takes {', '.join(sorted(CALL_KEYS))}."
            )
        if "tool" not in call:
            raise ConfigError(f"Script {origin}: call {index + 1} needs a `tool` name.")
    return Script(inputs=dict(data.get("inputs") or {}), outputs=dict(data.get("outputs") or {}), calls=calls)


def _what_list(data: Any) -> str:
    """What a list given as a script probably is, said after the message: calls without their `calls:`
    key, or the tool definitions `dagtools tools --json` prints (a list of schemas, not of calls)."""
    items = [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []
    if not items:
        return ""
    if any(key in item for item in items for key in ("parameters", "input_schema", "inputSchema", "function", "functionDeclarations")):
        return (
            "; this is a list of tool definitions (as dagtools tools --json prints, or a tools config), not of calls: "
            "write calls: [{tool: NAME, arguments: {...}}]"
        )
    if any("tool" in item or "name" in item for item in items):
        return "; this is a list of calls: put it under calls: (inputs and outputs are optional)"
    return ""


#: What other formats call a call's keys (OpenAI's name/arguments, MCP's name/arguments, args, params).
_ALIASES = {"name": "tool", "function": "tool", "args": "arguments", "params": "arguments", "parameters": "arguments", "input": "arguments"}


def _meant(key: str) -> str | None:
    """The call key `key` stands for: a known alias, else the closest spelling."""
    close = difflib.get_close_matches(key, sorted(CALL_KEYS), n=1, cutoff=0.7)
    return _ALIASES.get(key.lower()) or (close[0] if close else None)


def matches(expected: Any, actual: Any) -> bool:
    """Whether `expected` is a subset of `actual`: mappings by key, lists item by item, the rest by value."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(matches(e, a) for e, a in zip(expected, actual))
    return expected == actual


def matches_result(expected: Any, actual: Any) -> bool:
    """`matches`, where an `expect:` block written when a page's previews were keyed by ID
    (`preview: {"Film#1": {"title": ...}}`) still matches the table they are now (see
    calls/_preview_pages.py): the table is read back as each object's fields."""
    if matches(expected, actual):
        return True
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return False
    keyed = {k: rows_of(v) if k in ("preview", "objects") and _is_table(v) else v for k, v in actual.items()}
    return keyed != actual and matches(expected, keyed)


def _is_table(value: Any) -> bool:
    return isinstance(value, dict) and any("#" not in k and isinstance(v, dict) and "columns" in v for k, v in value.items())


async def run_script(session: Session, script: Script) -> AsyncIterator[CallRecord]:
    """Replay the calls in order through `call_tool`, yielding each with what went wrong, if anything."""
    for index, spec in enumerate(script.calls):
        call = ToolCall(name=str(spec["tool"]), arguments=spec.get("arguments") or {}, id=str(spec.get("id", "")))
        result = await session.call_tool(call)
        problem = None
        expect_error = bool(spec.get("expect_error", False))
        if result.is_error and not expect_error:
            problem = f"call {index + 1} ({call.name}) failed: {result.content}"
        elif expect_error and not result.is_error:
            problem = f"call {index + 1} ({call.name}) was expected to fail but gave {result.content}"
        elif "expect" in spec and not matches_result(spec["expect"], result.value):
            problem = (
                f"call {index + 1} ({call.name}) gave {result.content}, which does not match the expected {json.dumps(spec['expect'])}"
            )
        yield CallRecord(call=call, result=result, problem=problem)
