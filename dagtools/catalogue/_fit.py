"""Bring a parameter schema within its budget when its own arguments, not nested inputs, overflow it.

Summarising input objects keeps most tools within the budget; what is left over is text: an enum
that describes each of its hundred values, or long argument descriptions. Those are cut in steps,
least useful first (enum value descriptions, then every description past its first sentence), and
the schema's shape, which is what a call is checked against, never changes.
"""

from __future__ import annotations

import json
from typing import Any

from ._describe import DESCRIBE_TOOLS

__all__ = ["fit"]


def fit(schema: dict[str, Any], budget: int, path: str = "") -> dict[str, Any]:
    """`schema`, with descriptions cut until its JSON fits `budget` bytes or there is nothing to cut.

    Past that, with the dotted `path` the schema sits at, summarised input objects become bare
    objects and the schema says once how to see any of them.
    """
    for step in (_enum_values, _first_sentence, _no_nested):
        if len(json.dumps(schema)) <= budget:
            return schema
        schema = _walk(schema, step, top=True)
    if path and len(json.dumps(schema)) > budget:
        schema = _bare_summaries(schema, path)
    return schema


def _bare_summaries(schema: dict[str, Any], path: str) -> dict[str, Any]:
    defs = schema.get("$defs", {})
    summarised = {f"#/$defs/{name}" for name, each in defs.items() if "properties" not in each}

    def replace(node: Any) -> Any:
        if isinstance(node, list):
            return [replace(item) for item in node]
        if not isinstance(node, dict):
            return node
        if node.get("$ref") in summarised:
            return {"type": "object", **{k: v for k, v in node.items() if k != "$ref"}}
        return {key: replace(value) for key, value in node.items()}

    out = replace({k: v for k, v in schema.items() if k != "$defs"})
    kept = {name: replace(each) for name, each in defs.items() if f"#/$defs/{name}" not in summarised}
    if kept:
        out["$defs"] = kept
    note = f"Each field of type object is spelled out by {DESCRIBE_TOOLS} {path}.<field>."
    out["description"] = f"{out['description']}\n{note}" if out.get("description") else note
    return out


def _walk(node: Any, step: Any, *, top: bool = False) -> Any:
    if isinstance(node, list):
        return [_walk(item, step) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):  # keys there are names, not keywords
            out[key] = {name: _walk(each, step) for name, each in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf"):
            out[key] = _walk(value, step)
        else:
            out[key] = value
    text = out.get("description")
    if isinstance(text, str) and not top:
        cut = step(out, text)
        if cut:
            out["description"] = cut
        else:
            out.pop("description")
    return out


def _enum_values(node: dict[str, Any], text: str) -> str:
    """An enum keeps the lines before its values' descriptions."""
    if "enum" not in node:
        return text
    values = set(node["enum"])
    return "\n".join(line for line in text.split("\n") if line.split(":", 1)[0] not in values)


def _first_sentence(_node: dict[str, Any], text: str) -> str:
    first = text.split("\n", 1)[0]
    end = first.find(". ")
    first = first if end < 0 else first[: end + 1]
    return first if len(first) <= 120 else first[:117] + "..."


def _no_nested(node: dict[str, Any], text: str) -> str:
    """Last resort: only summaries keep their text, since it says how to see the rest."""
    return text if f"({DESCRIBE_TOOLS} " in text else ""
