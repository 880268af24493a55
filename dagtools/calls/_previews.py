"""What the model sees of each object a call returns: its preview, shaped to earn its bytes.

One object's preview shows the fields that name it first, then other short scalars, then long texts
cut at CUT characters, then timestamps and URLs (see catalogue/_previews.py), within a budget per
object: a page of 25 objects fits a result's budget without being cut, and an object returned alone
shows more of itself. A text that was cut ends in
"…", and the result's note says so and names the tool that reads a field in full, as it names the
fields that gave way to the budget: nothing is cut silently. The registry keeps the values as read;
only what is shown is shaped.

Longer lists than the per-object budget allows for (a page of 40) shrink further, step by step
(fewer fields per object, shorter cuts of long texts) until they fit, keeping the fields a person
reads first (names, titles), and the result says so. Only when even one short field per object is
too much do some objects go without, and the note says which.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..catalogue._previews import LONG_TEXT, OTHER, URL, preview_rank

__all__ = ["CUT", "OBJECT_SHARE", "fit_previews", "object_room", "preview_note", "shape_preview"]

#: Characters a preview shows of a text, the "…" included.
CUT = 80
#: One object's preview in a list takes at most 1/OBJECT_SHARE of a result's budget: 25 objects with
#: their IDs, the preview keys and a note fit in it (111 characters each at the default 4,000). An
#: object alone may take four times that: it is all the result shows.
OBJECT_SHARE = 36
_ALONE = 4
_MIN_ROOM = 48

# (fields kept per object, characters kept of a text), from the full preview down to a name each.
_STEPS: tuple[tuple[int, int], ...] = ((4, CUT), (2, 48), (1, 32), (1, 16))


def object_room(budget: int, *, alone: bool = False) -> int:
    """Characters of JSON one object's preview may take within a result of `budget` characters."""
    return max(_MIN_ROOM, budget // OBJECT_SHARE) * (_ALONE if alone else 1)


def shape_preview(
    preview: Mapping[str, Any], ranks: Mapping[str, tuple[int, int]], room: int
) -> tuple[dict[str, Any], list[str], list[str]]:
    """`preview` as shown: in rank order, long texts cut, within `room` characters of JSON.

    Returns the preview, the fields whose text was cut and the fields left out for room. The first
    field (what names the object) is always shown; the others while they fit, so the objects of a
    page show the same fields as far as they can. A text longer than CUT moves behind the short
    scalars, and a link (a value starting with http) behind everything but other links."""
    ordered: list[tuple[tuple[int, int], int, str, Any]] = []
    for position, (name, value) in enumerate(preview.items()):
        rank = ranks.get(name) or preview_rank(name, "")
        if type(value) is str and rank[0] == OTHER:
            if value.startswith(("http://", "https://")):
                rank = (URL, 1)
            elif len(value) > CUT:
                rank = (LONG_TEXT, 0)
        ordered.append((rank, position, name, value))
    ordered.sort(key=lambda item: (item[0], item[1]))
    shown: dict[str, Any] = {}
    cut: list[str] = []
    left: list[str] = []
    size = 2  # the braces
    full = False
    for rank, _, name, value in ordered:
        was_cut = type(value) is str and len(value) > CUT
        if was_cut:
            value = value[: CUT - 1] + "…"
        item = _size(name) + _size(value) + (4 if shown else 2)  # `"name": value` and `, ` before it
        if full or (shown and size + item > room):
            left.append(name)
            full = full or rank[0] != LONG_TEXT  # past a long text, shorter fields may still fit
            continue
        shown[name] = value
        size += item
        if was_cut:
            cut.append(name)
    return shown, cut, left


def preview_note(trims: Sequence[tuple[str, list[str], list[str]]], is_tool: Callable[[str], bool]) -> str | None:
    """The note for previews that were cut or left fields out, from (type, cut fields, left-out
    fields) per object: which, and the tool that reads one in full (`Film_openingCrawl`)."""
    cut = list(dict.fromkeys(f for _, c, _ in trims for f in c))
    left = list(dict.fromkeys(f for _, _, gone in trims for f in gone if f not in cut))
    if not cut and not left:
        return None
    parts = [f"texts ending in … are cut at {CUT} characters"] if cut else []
    if left:
        parts.append("left out for room: " + ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else ""))
    example = next((f"{t}_{f}" for t, c, gone in trims for f in (*c, *gone) if is_tool(f"{t}_{f}")), None)
    how = f"; each field's own tool reads it in full, such as {example}." if example else "."
    return "Previews: " + "; ".join(parts) + how


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
