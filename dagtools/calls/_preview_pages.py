"""What the model sees of the objects a call returns: their previews, shaped as tables.

A page of objects reads as a table: each type's columns are named once, in a header keyed by the
type, and each object is a row of values keyed by its ID, so a cheap column costs its values and
not its name times the rows:

    "preview": {"Job": {"columns": ["title", "salary", "remote", "postedAt"], "same": {"currency": "EUR"}},
                "Job#1": ["Data engineer", 72000, true, "2024-05-02"],
                "Job#2": ["SRE", 81000, false, "2024-04-28"]}

A column whose value is the same on every row is said once, under `same`. Each type on a mixed page
(posts and comments) has its own header and columns. A lone object's preview stays a map of its
fields: a table of one row would only add a header.

What goes is decided by what the schema and the values say, never by a list of one API's fields:
- numbers, booleans, enums, dates and short strings and lists are cheap: they stay while there is room;
- left out of the rows of a type with several objects on a page, whatever the room (a type's lone
  object shows its every short value, as a lone result does): URLs and opaque strings (tokens, cursors,
  encoded ids: a value with no space that mixes letters and digits at length), foreign keys (an id
  whose object a field of the same type reads, known from the schema: catalogue/_preview_fields.py),
  a record's own bookkeeping times where the schema's description says so, and long texts where
  something else names the objects (a comment's body stays, cut, where nothing else does);
- a field the model read or asked for, or that a write changed (`keep`), always stays a column.
A call that names its fields (`fields`) shows, of each type it names fields of (`only`), those and
the column that names each object, nothing more and no note on the rest: the model said what it
wants, and a question's answer reads cheaper than a full page.
The room is what the result's budget leaves once its IDs and a note are counted; columns are taken
in rank order (catalogue/_preview_fields.py) while they fit, the naming one first. The note names
what was cut or left out and the tool that reads it: nothing goes silently. The registry keeps the
values as read; only what is shown is shaped.

A page so long that not even the first column fits (a page of 100 long titles) shrinks further, step
by step (shorter cuts, then some objects without a preview), and the note says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..catalogue._preview_fields import BOOKKEEPING, CONTENT, ID_LIKE, LONG_TEXT, OTHER, SURROGATE, URL

__all__ = ["CUT", "NOTE_ROOM", "Only", "fit_previews", "page_columns", "page_room", "preview_note", "rows_of", "shape_page", "table_of"]

#: Characters a preview shows of a text, the "…" included.
CUT = 80
#: Characters of a result's budget kept for its note and the call that reads the next page.
NOTE_ROOM = 480
_MIN_ROOM = 48
_MORE = re.compile(r"\+(\d*) ?more")  # `+12 more`, or `+more` where a list has further pages
_HANDLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*#[0-9]+$")
#: IDs a list of them keeps in a preview (a path's lists read NESTED_ITEMS each: calls/_selections.py).
HANDLES = 10
# An opaque string: no space, letters and digits mixed at length (a token, a cursor, an encoded id, a hash).
_OPAQUE = re.compile(r"^(?=[^\s]*[0-9])(?=[^\s]*[A-Za-z])[A-Za-z0-9+/=_:.-]{16,}$")
_WORDS = re.compile(r"[A-Za-z]{3,}[ -][A-Za-z]{3,}")
# A date or a time, however it is written (`2024-05-02`, `2024-05-02T09:00:00.000Z`, `09:30`): never opaque.
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}|^\d{1,2}:\d{2}")

#: (type, field) -> where the field goes in a preview (catalogue/_preview_fields.py's rank).
RankOf = Callable[[str, str], tuple[int, int]]
#: (type, field) -> whether the model read or asked for it, or a write changed it: it stays a column.
Keep = Callable[[str, str], bool]
#: Object ID -> (its type, its preview as read).
Page = Mapping[str, tuple[str, Mapping[str, Any]]]
#: Type -> the fields a call named for it: only those, and the naming column, are shown.
Only = Mapping[str, frozenset[str]]

# (fields kept per object, characters kept of a text), from a few fields down to a name each.
_STEPS: tuple[tuple[int, int], ...] = ((4, CUT), (2, 48), (1, 32), (1, 16))


def _never(_type: str, _field: str) -> bool:
    return False


def page_room(budget: int, used: int, *, named: bool = False) -> int:
    """Characters of JSON the previews of one result may take, when the rest of it takes `used`. A
    call that named its fields (`named`) keeps half the note's room: it gets no note on what was left
    out, and what it asked for should fit before any other call's note would."""
    return max(_MIN_ROOM, budget - used - (NOTE_ROOM // 2 if named else NOTE_ROOM))


def _opaque(value: Any) -> bool:
    return isinstance(value, str) and bool(_OPAQUE.match(value)) and not _WORDS.search(value) and not _DATE.match(value)


def _url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://"))


def page_columns(page: Page, rank_of: RankOf, room: int, keep: Keep = _never) -> dict[str, list[str]] | None:
    """The columns each type on `page` shows, in the order shown, within `room` characters of JSON
    for the whole table; None when not even each type's first column fits (see `fit_previews`)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for type_name, preview in page.values():
        groups.setdefault(type_name, []).append(preview)
    several = len(page) > 1
    size = 2 + sum(_size(object_id) + 4 for object_id in page)  # `{` and `"Type#N": [], ` each
    leads: list[tuple[str, str, int]] = []
    others: list[tuple[tuple[int, int], int, str, str, int]] = []
    for type_name, rows in groups.items():
        ranks: dict[str, tuple[int, int]] = {}
        for preview in rows:
            for name in preview:
                if name not in ranks:
                    ranks[name] = rank_of(type_name, name)
        if not ranks:
            continue
        values = {name: [row.get(name) for row in rows] for name in ranks}
        long = {name for name, column in values.items() if any(type(v) is str and len(v) > CUT for v in column)}
        for name, column in values.items():
            if ranks[name][0] == OTHER and any(_url(v) for v in column):
                ranks[name] = (URL, 1)
            elif ranks[name][0] == OTHER and name in long:
                ranks[name] = max(ranks[name], (LONG_TEXT, 0))
        position = {name: i for i, name in enumerate(ranks)}
        by_rank = sorted(ranks, key=lambda n: (not keep(type_name, n), ranks[n], position[n]))
        lead = min(ranks, key=lambda n: (ranks[n], position[n]))
        named = any(rank < ID_LIKE for rank in ranks.values())  # a name or title in words
        size += _size(type_name) + 16 + (2 if several else 0)  # `"Type": {"columns": []}, `
        leads.append((type_name, lead, _cost(lead, values[lead], several)))
        for order, name in enumerate(by_rank):
            if name == lead:
                continue
            if len(rows) > 1 and not keep(type_name, name) and _off_page(ranks[name], values[name], name in long, named):
                continue
            priority = (-1, 0) if keep(type_name, name) else ranks[name]
            if name in long and not keep(type_name, name):
                priority = (max(priority[0], LONG_TEXT), priority[1])  # what an object says, after what is short
            others.append((priority, order, type_name, name, _cost(name, values[name], several)))
    columns: dict[str, list[str]] = {type_name: [] for type_name in groups}
    for type_name, lead, cost in leads:
        if size + cost > room:
            return None
        columns[type_name].append(lead)
        size += cost
    for _, _, type_name, name, cost in sorted(others, key=lambda item: (item[0][0] == SURROGATE, item[0], item[1])):
        if size + cost <= room:
            columns[type_name].append(name)
            size += cost
    return columns


def _narrowed(page: Page, rank_of: RankOf, only: Only) -> Page:
    """`page` with the previews of each type in `only` cut to its named fields and its naming column."""
    leads: dict[str, str] = {}
    for type_name, preview in page.values():
        if type_name in only and preview:
            best = min(preview, key=lambda name: rank_of(type_name, name))
            if type_name not in leads or rank_of(type_name, best) < rank_of(type_name, leads[type_name]):
                leads[type_name] = best
    return {
        object_id: (
            (type_name, {n: v for n, v in preview.items() if n in only[type_name] or n == leads.get(type_name)})
            if type_name in only
            else (type_name, preview)
        )
        for object_id, (type_name, preview) in page.items()
    }


def _kept_unless(keep: Keep, only: Only) -> Keep:
    """`keep`, for the types a call did not name fields of: on the others every field left is named."""

    def kept(type_name: str, field: str) -> bool:
        return type_name in only or keep(type_name, field)

    return kept


def _off_page(rank: tuple[int, int], column: list[Any], long: bool, named: bool) -> bool:
    """Whether a column stays off a page of several objects whatever the room: see the module's docstring."""
    present = [v for v in column if v is not None]
    if rank[0] in (URL, BOOKKEEPING, SURROGATE) or any(_url(v) for v in present):
        return True
    if present and all(_opaque(v) for v in present):
        return True
    return long and not (rank[0] == CONTENT and not named)  # a comment's body stays where nothing names it


def _cost(name: str, column: list[Any], several: bool) -> int:
    """Characters a column adds to a table: its name once, and its values, or one value where every
    row has the same (said once under `same`)."""
    values = [_cut(v) for v in column]
    if several and len(values) > 1 and all(v == values[0] for v in values[1:]):
        return _size(name) + _size(values[0]) + 12  # `"same": {"name": value}, `
    return _size(name) + 2 + sum(_size(v) + 2 for v in values)


def shape_page(
    page: Page, rank_of: RankOf, room: int, is_tool: Callable[[str], bool], keep: Keep = _never, only: Only | None = None
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The previews of `page` as shown, each object's fields in the order shown, within `room`, and
    the note on what was cut or left out. `table_of` turns them into the table the model reads;
    `only` narrows the types a call named fields of (see the module's docstring)."""
    if only:
        page = _narrowed(page, rank_of, only)
        keep = _kept_unless(keep, only)
    columns = page_columns(page, rank_of, room, keep)
    if columns is None:
        ordered = {
            object_id: {n: _cut(v) for n, v in sorted(p.items(), key=lambda item: rank_of(type_name, item[0]))}
            for object_id, (type_name, p) in page.items()
        }
        return fit_previews(ordered, room, is_tool)
    shown: dict[str, dict[str, Any]] = {}
    trims: list[tuple[str, list[str], list[str]]] = []
    for object_id, (type_name, preview) in page.items():
        shown[object_id] = {name: _cut(preview[name]) for name in columns.get(type_name, ()) if name in preview}
        cut = [n for n in shown[object_id] if _cut(preview[n]) != preview[n]]
        trims.append((type_name, cut, [n for n in preview if n not in shown[object_id]]))
    return shown, preview_note(trims, is_tool)


def table_of(shown: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Previews as the model reads a page of them: per type a header of its columns (and the values
    the same on every row, said once), then each object's row of values, keyed by its ID."""
    groups: dict[str, list[str]] = {}
    for object_id in shown:
        groups.setdefault(object_id.split("#", 1)[0], []).append(object_id)
    out: dict[str, Any] = {}
    for type_name, ids in groups.items():
        names = list(dict.fromkeys(name for object_id in ids for name in shown[object_id]))
        same: dict[str, Any] = {}
        if len(ids) > 1:
            for name in names:
                first = shown[ids[0]].get(name, _UNSET)
                cut = isinstance(first, list) and bool(first) and isinstance(first[-1], str) and _MORE.fullmatch(first[-1]) is not None
                if (
                    first is not _UNSET and not cut and all(shown[i].get(name, _UNSET) == first for i in ids[1:])
                ):  # cut lists may differ later
                    same[name] = first
        header: dict[str, Any] = {"columns": [n for n in names if n not in same]}
        if same:
            header["same"] = same
        out[type_name] = header
        for object_id in ids:
            out[object_id] = [shown[object_id].get(name) for name in header["columns"]]
    return out


_UNSET: Any = object()


def rows_of(preview: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A page's table read back as each object's fields (`{"Job#1": {"title": ..., ...}}`): for hosts
    and scripts written against previews keyed by ID."""
    out: dict[str, dict[str, Any]] = {}
    for key, row in preview.items():
        if "#" not in key or not isinstance(row, list):
            continue
        header = preview.get(key.split("#", 1)[0])
        if not isinstance(header, Mapping):
            continue
        out[key] = {**dict(header.get("same") or {}), **dict(zip(header.get("columns") or [], row))}
    return out


def preview_note(trims: Sequence[tuple[str, list[str], list[str]]], is_tool: Callable[[str], bool]) -> str | None:
    """The note for previews that were cut or left fields out, from (type, cut fields, left-out
    fields) per object: which, and the tool that reads each in full (`Film_<field>`, or `Film_created`
    itself), said once a type."""
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
    """`Film's created, edited (Film_<field> reads each)`: the fields, and the tool that reads them where
    they have one; or the tools alone (`Film_created, Film_edited`) where each field has one and that
    says it in fewer words."""
    tools = [n for n in names if is_tool(f"{type_name}_{n}")]
    reads = f" ({type_name}_{tools[0]} reads it)" if len(tools) == 1 else f" ({type_name}_<field> reads each)" if tools else ""
    by_field = f"{type_name}'s {_listed(names)}{reads}"
    by_tool = _listed([f"{type_name}_{n}" for n in names])
    return by_tool if len(tools) == len(names) and len(by_tool) < len(by_field) else by_field


def _listed(names: list[str], most: int = 12) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _cut(value: Any, limit: int = CUT) -> Any:
    """A text cut at `limit` characters with "…"; a list of values to its first items within `limit`
    characters of JSON, then how many more there are (`["a", "b", "+12 more"]`). A list of IDs keeps
    up to HANDLES of them whatever their length: they link a row to the rows of the objects a path
    read (`"talks": ["Talk#1", ...]`), which the page shows, so cutting them would cut the links."""
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    if isinstance(value, list) and all(isinstance(v, str) and (_HANDLE.match(v) or _MORE.fullmatch(v)) for v in value):
        limit = max(limit, _size(value[:HANDLES]) + 16)
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
        return [*kept, f"+{len(items) - len(kept) + (int(counted.group(1) or 0) if counted else 0)} more"]
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
