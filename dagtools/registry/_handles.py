"""How to reach one object again: a chain of steps from the root, as a hashable value.

A handle re-rooted on an object's identity is just a one-step chain (`loadPotatoFromID(id: ...)` or
`node(id: ...)`), so identity and chains are the same kind of value. Argument values are frozen into
hashable form, so equal handles compare and hash equal: the registry gives them the same ID.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Handle", "Step", "freeze", "parse_object_id", "thaw"]

_ID = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*#\s*([0-9]{1,15})\s*$", re.ASCII)


def parse_object_id(text: str) -> tuple[str, int] | None:
    """`"Potato#3"` -> `("Potato", 3)`; anything else -> None."""
    match = _ID.match(text)
    return (match.group(1), int(match.group(2))) if match else None


class FrozenDict(tuple):
    """A JSON object made hashable: sorted (key, value) pairs, told apart from a JSON array."""

    __slots__ = ()


def freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return FrozenDict(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    if isinstance(value, FrozenDict):
        return {k: thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Step:
    """One field selection: `... on <on> { field(arguments) }`, then item `index` of a list result."""

    field: str
    arguments: tuple[tuple[str, Any], ...] = ()
    on: str | None = None
    index: int | None = None

    @classmethod
    def of(cls, field: str, arguments: dict[str, Any] | None = None, *, on: str | None = None, index: int | None = None) -> Step:
        args = tuple((k, freeze(v)) for k, v in (arguments or {}).items())
        return cls(field, args, on, index)

    def argument_values(self) -> dict[str, Any]:
        return {k: thaw(v) for k, v in self.arguments}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"field": self.field}
        if self.arguments:
            out["arguments"] = self.argument_values()
        if self.on is not None:
            out["on"] = self.on
        if self.index is not None:
            out["index"] = self.index
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Step:
        return cls.of(data["field"], data.get("arguments"), on=data.get("on"), index=data.get("index"))


@dataclass(frozen=True, slots=True)
class Handle:
    """The steps from the root operation to an object. `operation` is "query" for re-executable handles.

    `snapshot` holds the values read when an object without identity was minted. A mutation's result
    (`operation` "mutation") is only a snapshot: it is never executed again. An object reached by a
    query chain keeps its snapshot too, so the fields read then cost no request, and a later read
    through the chain can check that the chain still ends at the same object.
    """

    steps: tuple[Step, ...]
    operation: str = "query"
    snapshot: Any = None

    @property
    def is_snapshot(self) -> bool:
        """Only a snapshot: never executed again (a mutation's result without identity)."""
        return self.operation != "query"

    def held(self) -> dict[str, object]:
        """The values read when the object was minted (empty for a handle re-rooted on identity)."""
        data = thaw(self.snapshot)
        return data if isinstance(data, dict) else {}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"steps": [s.to_json() for s in self.steps]}
        if self.operation != "query":
            out["operation"] = self.operation
        if self.snapshot is not None or self.operation != "query":
            out["snapshot"] = thaw(self.snapshot)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | str) -> Handle:
        parsed: dict[str, Any] = json.loads(data) if isinstance(data, str) else data
        steps = tuple(Step.from_json(s) for s in parsed["steps"])
        return cls(steps, parsed.get("operation", "query"), freeze(parsed.get("snapshot")))
