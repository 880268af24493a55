"""What previews keep: pages of 1, 5 and 25 objects, over real HTTP on 127.0.0.1, measured against
the books as the server has them, not against the previewer's own arithmetic.

    python bench/previews.py

Served: tests/pyservers/books.py, a books API on Ariadne under uvicorn, whose `search(text:)` returns
1, 5 or 25 books (a long summary, short scalars, a computed averageRating, a database row number, a
publication date). For each page the bench reads the same books itself, every scalar field (the
truth), and the session's answer as the model reads it. Its own definitions, independent of the
implementation:

- a short value is a scalar whose JSON is at most 40 characters (a title, a year, a genre, a count);
- bookkeeping is a value shaped like a timestamp (ISO 8601) or a URL: a list page may leave it out
  even when it would fit (what a field tells, not the room left, earns its place);
- an identifier is a field of GraphQL type `ID` (the book's own `id`, the `authorId` foreign key):
  how an object is found, which the model reaches through IDs and tools, so no preview owes it;
- a column fits when the answer, with that column's true values added to every object's preview,
  is still within the session's result budget (the answer's JSON, measured).

Figures per page of N:

- `preview_telling_columns[page_of_N]`: the columns a page of several objects shows that tell something
  (short, neither identifier nor bookkeeping), against what it could show: a list page is a table of a
  few columns chosen by what they tell, not filled because room is free, so the target is that it
  shows at least `LIST_COLUMNS` of them (all of them where there are fewer). `preview_kept_share` (of
  the telling columns shown or fitting, the share shown) is printed beside it, without a target.
- `preview_lone_object_short_values_shown_share[page_of_1]`: a lone object shows every short value
  it has but identifiers, bookkeeping too (DESIGN.md). Target >= 1.
- `preview_values_true[page_of_N]`: every value shown is the server's (whole, or its start marked
  with "…"). Target == 1.
- `preview_short_values_shown_of_all[page_of_N]`: the share of all short values shown (a page of 25
  cannot show them all within the budget); `preview_result_chars[page_of_N]` against the budget;
  `preview_same_fields_for_every_object[page_of_N]`.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import httpx  # noqa: E402
from _figures import exit_status, figure, unmeasured  # noqa: E402
from graphql import build_schema, get_named_type, is_leaf_type  # noqa: E402

from dagtools import ToolCall, open_session  # noqa: E402

__all__ = ["run_previews_bench"]

PAGES = {1: "Dune", 5: "Foundation", 25: ""}
SHORT = 40
LIST_COLUMNS = 4  # telling columns a list page shows at the least, where it has as many
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _short(value: Any) -> bool:
    return value is not None and _size(value) <= SHORT


def _bookkeeping(value: Any) -> bool:
    return isinstance(value, str) and (bool(_TIMESTAMP.match(value)) or value.startswith(("http://", "https://")))


def _true(shown: Any, truth: Any) -> bool:
    if shown == truth:
        return True
    return isinstance(shown, str) and isinstance(truth, str) and shown.endswith("…") and truth.startswith(shown[:-1])


def _book_fields() -> tuple[list[str], set[str]]:
    """Every scalar field of a book, and those of type ID (identifiers), from the API's SDL."""
    from tests.pyservers.books import SDL

    book: Any = build_schema(SDL).get_type("Book")
    fields = [name for name, field in book.fields.items() if is_leaf_type(get_named_type(field.type))]
    return fields, {name for name in fields if get_named_type(book.fields[name].type).name == "ID"}


def _truth(url: str, text: str, fields: list[str]) -> list[dict[str, Any]]:
    """The books of a search as the server has them: every scalar field, read by the bench itself."""
    query = f"query($t: String!) {{ search(text: $t) {{ {' '.join(fields)} }} }}"
    answer = httpx.post(url, json={"query": query, "variables": {"t": text}}, timeout=10).json()
    return answer["data"]["search"]


def _fits(answer: dict[str, Any], ids: list[str], column: str, values: list[Any], budget: int) -> bool:
    grown = copy.deepcopy(answer)
    previews = grown.setdefault("preview", {})
    for object_id, value in zip(ids, values, strict=True):
        previews.setdefault(object_id, {})[column] = value
    return _size(grown) <= budget


async def _measure(url: str) -> None:
    async with await open_session(url, cache=False) as session:
        session.select(["Query_search"])
        budget = session.long_values.budget
        fields, identifiers = _book_fields()
        for count, text in PAGES.items():
            page = f"page_of_{count}"
            result = await session.call_tool(ToolCall(name="Query_search", arguments={"text": text}))
            answer = json.loads(result.content)
            ids = answer.get("result") or []
            truth = _truth(url, text, fields)
            if result.is_error or len(ids) != count or len(truth) != count:
                unmeasured(f"preview_kept_share[{page}]", f"the search answered {result.content[:200]}")
                continue
            shown = answer.get("preview", {})
            columns = sorted({name for book in truth for name in book} - identifiers)
            short_all = shown_all = kept = fitting = telling_shown = telling_all = 0
            true = True
            for column in columns:
                values = [book.get(column) for book in truth]
                shown_here = [column in shown.get(i, {}) for i in ids]
                short_all += sum(1 for v in values if _short(v))
                shown_all += sum(1 for v, s in zip(values, shown_here, strict=True) if s and _short(v))
                true &= all(_true(shown[i][column], v) for i, v, s in zip(ids, values, shown_here, strict=True) if s)
                telling = all(_short(v) for v in values) and not any(_bookkeeping(v) for v in values)
                if not telling:
                    continue
                telling_all += 1
                if all(shown_here):
                    kept += count
                    telling_shown += 1
                elif _fits(answer, ids, column, values, budget):
                    fitting += count
                    print(f"#   {page}: {column} is left out, and it fits", flush=True)
            shown_ids = sum(1 for i in ids for name in identifiers if name in shown.get(i, {}))
            figure(f"preview_short_values[{page}]", short_all)
            figure(f"preview_identifiers_shown[{page}]", shown_ids)
            figure(f"preview_kept_share[{page}]", kept / (kept + fitting) if kept + fitting else 0.0)
            if count > 1:
                figure(f"preview_telling_columns[{page}]", telling_shown, f">= {min(LIST_COLUMNS, telling_all)}")
            if count == 1:
                figure(f"preview_lone_object_short_values_shown_share[{page}]", shown_all / short_all if short_all else 0.0, ">= 1")
            figure(f"preview_short_values_shown_of_all[{page}]", shown_all / short_all if short_all else 0.0)
            figure(f"preview_values_true[{page}]", int(true), "== 1")
            figure(f"preview_same_fields_for_every_object[{page}]", int(len({tuple(sorted(p)) for p in shown.values()}) == 1), "== 1")
            figure(f"preview_result_chars[{page}]", _size(answer), f"<= {budget}")


def run_previews_bench() -> None:
    try:
        from tests.pyservers.books import app
        from tests.servers import serve_asgi
    except ImportError as error:  # ariadne or uvicorn is not installed
        unmeasured("preview_kept_share", f"the books API cannot be served: {error}")
        return
    with serve_asgi(app()) as base:
        asyncio.run(_measure(f"{base}/graphql"))


if __name__ == "__main__":
    run_previews_bench()
    sys.exit(exit_status())
