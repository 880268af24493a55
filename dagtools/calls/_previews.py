"""Previews of a list of objects, shrunk to fit a result's budget instead of being dropped.

A page of 25 objects with full previews can pass the budget, and a page of bare IDs would cost the
model one call per name. So previews shrink step by step (fewer fields per object, shorter cuts of
long texts) until they fit, keeping the fields a person reads first (names, titles), and the result
says so. Only when even one short field per object is too much do some objects go without, and the
note says which.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["fit_previews"]

# (fields kept per object, characters kept of a text), from the full preview down to a name each.
_STEPS: tuple[tuple[int, int], ...] = ((4, 80), (2, 48), (1, 32), (1, 16))


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def _shrink(preview: dict[str, Any], fields: int, limit: int) -> dict[str, Any]:
    return {k: _cut(v, limit) for k, v in list(preview.items())[:fields]}


def fit_previews(
    previews: dict[str, dict[str, Any]], budget: int, is_tool: Callable[[str], bool] = lambda _name: True
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The previews to show within `budget` characters of JSON, and a note when they were shrunk."""
    if not previews or _size(previews) <= budget:
        return previews, None
    for fields, limit in _STEPS:
        shown = {i: _shrink(p, fields, limit) for i, p in previews.items()}
        if _size(shown) <= budget:
            kept = "the first field" if fields == 1 else f"up to {fields} fields"
            was_cut = any(isinstance(v, str) and len(v) > limit for p in previews.values() for v in list(p.values())[:fields])
            cut = f", texts cut at {limit} characters" if was_cut else ""
            return shown, f"Previews shortened to fit: {kept} of each object{cut}.{_left_out(previews, shown, is_tool)}"
    fields, limit = _STEPS[-1]
    shown = {}
    size = 2
    for object_id, preview in previews.items():
        small = _shrink(preview, fields, limit)
        item = _size(object_id) + _size(small) + 4  # `"id": {...}, `
        if size + item > budget:
            break
        shown[object_id] = small
        size += item
    rest = [i for i in previews if i not in shown]
    if not rest:
        return shown, f"Previews shortened to fit: the first field of each object, texts cut at {limit} characters."
    return shown, (
        f"Previews shortened to fit: the first field of the first {len(shown)} objects only; "
        f"the {len(rest)} from {rest[0]} on have none here.{_left_out(previews, shown, is_tool)}"
    )


def _left_out(previews: dict[str, dict[str, Any]], shown: dict[str, dict[str, Any]], is_tool: Callable[[str], bool]) -> str:
    """Which fields went, and the tool that reads one (`Article_body`), so the model knows the way."""
    gone = list(dict.fromkeys(k for i, p in previews.items() if i in shown for k in p if k not in shown[i]))
    if not gone:
        return " Each field's own tool reads it in full."
    type_name = next(iter(previews)).split("#", 1)[0]
    names = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
    example = next((f"{type_name}_{k}" for k in gone if is_tool(f"{type_name}_{k}")), None)
    return f" Left out: {names}" + (f"; each field's own tool reads it, such as {example}." if example else ".")
