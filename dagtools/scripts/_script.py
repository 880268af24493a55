"""Scripted runs: a file of inputs, outputs and tool calls replayed against an API.

    inputs:  {name: {field: <root chain>, description} | {value, description}}
    outputs: {name: {type, description}}
    calls:   [{tool, arguments, expect?, expect_error?}]

`expect` is a subset of the parsed result that must match, so scripts stay valid when results grow.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .._tools import ToolCall, ToolResult
from .._yaml import read_data
from ..session._session import Session

__all__ = ["CallRecord", "Script", "load_script", "matches", "run_script"]


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
        raise ConfigError(f"Script {origin} must be a mapping with inputs, outputs and calls.")
    unknown = set(data) - {"inputs", "outputs", "calls"}
    if unknown:
        raise ConfigError(f"Script {origin} has unknown keys {sorted(unknown)}; use inputs, outputs and calls.")
    calls = data.get("calls") or []
    if not isinstance(calls, list):
        raise ConfigError(f"Script {origin}: calls must be a list of {{tool, arguments}}.")
    for index, call in enumerate(calls):
        if not isinstance(call, dict) or "tool" not in call:
            raise ConfigError(f"Script {origin}: call {index + 1} needs a `tool` name.")
        extra = set(call) - {"tool", "arguments", "expect", "expect_error", "id"}
        if extra:
            raise ConfigError(f"Script {origin}: call {index + 1} has unknown keys {sorted(extra)}.")
    return Script(inputs=dict(data.get("inputs") or {}), outputs=dict(data.get("outputs") or {}), calls=calls)


def matches(expected: Any, actual: Any) -> bool:
    """Whether `expected` is a subset of `actual`: mappings by key, lists item by item, the rest by value."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(matches(e, a) for e, a in zip(expected, actual))
    return expected == actual


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
        elif "expect" in spec and not matches(spec["expect"], result.value):
            problem = (
                f"call {index + 1} ({call.name}) gave {result.content}, which does not match the expected {json.dumps(spec['expect'])}"
            )
        yield CallRecord(call=call, result=result, problem=problem)
