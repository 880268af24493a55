"""What the model sees of the objects a call returns: their previews, shaped like a table's rows.

Every object on one page shows the same fields, its columns, so a page reads like a table and no
object hides what its neighbour shows. A page of several objects shows what tells them apart and
what they say (names, content, states, counts, dates, short lists) and leaves out, whatever the
room, what a model reads again in every later turn for little: long texts, URLs, the records' own
bookkeeping times and surrogate numbers (ranked from LEAN on in catalogue/_preview_fields.py); the
note names them. A lone object shows every short scalar that was fetched. The room is what the
result's budget leaves once its IDs and a note are counted, shared by the objects on the page.

Columns are taken in this order while they fit: first the one that names the object (its name or
title, else what it says, such as a comment's body); then every short column in rank order (names,
content, other scalars, timestamps, URLs: see catalogue/_preview_fields.py); then the columns that hold
long texts, cut at CUT characters with "…"; surrogate numbers (`databaseId`, a foreign key whose
object a tool reads) last, so what an object says always goes before them. A column that does not fit gives way
and the next, smaller one may still fit. The result's note names what was cut or left out and the
tool that reads it: nothing goes silently. The registry keeps the values as read; only what is
shown is shaped.

A page so long that not even the first column fits (a page of 100 long titles) shrinks further, step
by step (shorter cuts, then some objects without a preview), and the note says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..catalogue._preview_fields import CONTENT, ID_LIKE, LEAN, LONG_TEXT, OTHER, SURROGATE, URL

__all__ = ["CUT", "LIST_COLUMNS", "NOTE_ROOM", "fit_previews", "page_columns", "page_room", "preview_note", "shape_page"]

#: Characters a preview shows of a text, the "…" included.
CUT = 80
#: Columns a page of several objects shows at most: a name and what tells the objects apart. Each is
#: read again in every later turn, times the objects on the page.
LIST_COLUMNS = 5
#: Characters of a result's budget kept for its note and the call that reads the next page.
NOTE_ROOM = 480
_MIN_ROOM = 48
_MORE = re.compile(r"\+(\d+) more")

#: (type, field) -> where the field goes in a preview (catalogue/_preview_fields.py's rank).
RankOf = Callable[[str, str], tuple[int, int]]
#: Object ID -> (its type, its preview as read).
Page = Mapping[str, tuple[str, Mapping[str, Any]]]

# (fields kept per object, characters kept of a text), from a few fields down to a name each.
_STEPS: tuple[tuple[int, int], ...] = ((4, CUT), (2, 48), (1, 32), (1, 16))


def page_room(budget: int, used: int) -> int:
    """Characters of JSON the previews of one result may take, when the rest of it takes `used`."""
    return max(_MIN_ROOM, budget - used - NOTE_ROOM)


def page_columns(page: Page, rank_of: RankOf, room: int) -> list[str] | None:
    """The fields every object on `page` shows, in the order shown, within `room` characters of JSON
    for the whole map of previews; None when not even the first column fits (see `fit_previews`)."""
    ranks: dict[str, tuple[int, int]] = {}
    long: set[str] = set()
    costs: dict[str, int] = {}
    for type_name, preview in page.values():
        for name, value in preview.items():
            rank = ranks.get(name) or rank_of(type_name, name)
            if type(value) is str and rank[0] == OTHER:
                if value.startswith(("http://", "https://")):
                    rank = (URL, 1)
                elif len(value) > CUT:
                    rank = max(rank, (LONG_TEXT, 0))
            ranks[name] = rank
            if type(value) is str and len(value) > CUT:
                long.add(name)
            costs[name] = costs.get(name, 0) + _size(name) + _size(_cut(value)) + 4  # `"name": value, `
    if not ranks:
        return []
    position = {name: i for i, name in enumerate(ranks)}
    by_rank = sorted(ranks, key=lambda n: (ranks[n], position[n]))
    lead = by_rank[0]
    if len(page) > 1:  # a list page: what tells the objects apart, not what merely fills the room
        named = any(rank < ID_LIKE for rank in ranks.values())  # a name or title in words
        by_rank = [lead, *(n for n in by_rank[1:] if ranks[n][0] < LEAN and (n not in long or _says(ranks[n], named)))]
        by_rank = by_rank[:LIST_COLUMNS]
    rest = [n for n in by_rank[1:] if ranks[n][0] != SURROGATE]
    order = [lead, *(n for n in rest if n not in long), *(n for n in rest if n in long), *(n for n in by_rank[1:] if n not in rest)]
    size = 2 + sum(_size(object_id) + 6 for object_id in page)  # `{` and `"Type#N": {}, ` each
    columns: list[str] = []
    for name in order:
        if size + costs[name] <= room:
            columns.append(name)
            size += costs[name]
        elif name == lead:
            return None
    return columns


def _says(rank: tuple[int, int], named: bool) -> bool:
    """Whether a long text stays, cut, on a list page: what an object says where nothing names it (a
    comment's body); beside a title it is one more call away, as the note says."""
    return rank[0] == CONTENT and not named


def shape_page(page: Page, rank_of: RankOf, room: int, is_tool: Callable[[str], bool]) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The previews of `page` as shown, within `room`, and the note on what was cut or left out."""
    columns = page_columns(page, rank_of, room)
    if columns is None:
        ordered = {
            object_id: {n: _cut(v) for n, v in sorted(p.items(), key=lambda item: rank_of(type_name, item[0]))}
            for object_id, (type_name, p) in page.items()
        }
        return fit_previews(ordered, room, is_tool)
    shown: dict[str, dict[str, Any]] = {}
    trims: list[tuple[str, list[str], list[str]]] = []
    for object_id, (type_name, preview) in page.items():
        shown[object_id] = {name: _cut(preview[name]) for name in columns if name in preview}
        cut = [n for n in shown[object_id] if _cut(preview[n]) != preview[n]]
        trims.append((type_name, cut, [n for n in preview if n not in shown[object_id]]))
    return shown, preview_note(trims, is_tool)


def preview_note(trims: Sequence[tuple[str, list[str], list[str]]], is_tool: Callable[[str], bool]) -> str | None:
    """The note for previews that were cut or left fields out, from (type, cut fields, left-out
    fields) per object: which, and the tool that reads each in full (`Film_<field>`), said once a type."""
    cut = _by_type([(t, c) for t, c, _ in trims])
    left = _by_type([(t, gone) for t, _, gone in trims])
    if not cut and not left:
        return None
    parts = []
    if left:
        parts.append("left out " + "; ".join(_named(t, names, is_tool) for t, names in left.items()))
    if cut:
        parts.append("texts ending in … and lists ending in a count are cut: " + "; ".join(_named(t, n, is_tool) for t, n in cut.items()))
    return "Previews: " + "; ".join(parts) + "."


def _by_type(fields: Sequence[tuple[str, list[str]]]) -> dict[str, list[str]]:
    grouped: dict[str, dict[str, None]] = {}
    for type_name, names in fields:
        if names:
            grouped.setdefault(type_name, {}).update(dict.fromkeys(names))
    return {t: list(names) for t, names in grouped.items()}


def _named(type_name: str, names: list[str], is_tool: Callable[[str], bool]) -> str:
    """`Film's created, edited (Film_<field> reads each)`: the fields, and the tool that reads them where they have one."""
    tools = [n for n in names if is_tool(f"{type_name}_{n}")]
    reads = f" ({type_name}_{tools[0]} reads it)" if len(tools) == 1 else f" ({type_name}_<field> reads each)" if tools else ""
    return f"{type_name}'s {_listed(names)}{reads}"


def _listed(names: list[str], most: int = 12) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _cut(value: Any, limit: int = CUT) -> Any:
    """A text cut at `limit` characters with "…"; a list of values to its first items within `limit`
    characters of JSON, then how many more there are (`["a", "b", "+12 more"]`)."""
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    if isinstance(value, list) and _size(value) > limit:
        counted = _MORE.fullmatch(value[-1]) if value and isinstance(value[-1], str) else None  # a count the registry kept
        items = value[:-1] if counted else value
        kept: list[Any] = []
        size = 2
        for item in items:
            item = _cut(item, limit // 2)
            if kept and size + _size(item) + 14 > limit:
                break
            kept.append(item)
            size += _size(item) + 2
        return [*kept, f"+{len(items) - len(kept) + (int(counted.group(1)) if counted else 0)} more"]
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
