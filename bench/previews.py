"""What previews keep: pages of 1, 5 and 25 objects, over real HTTP on 127.0.0.1.

    python bench/previews.py

Served: tests/pyservers/books.py, a books API on Ariadne under uvicorn, whose `search(text:)` returns
1, 5 or 25 books of 12 fields read each (a long summary, short scalars, a computed averageRating, a
database row number). For each page:

- `preview_short_scalars_kept_share[page_of_N]`: of the short scalars read (values a preview shows
  whole) that fit the page's room, the share the preview shows. Target >= 1: every one is kept. What
  fits is counted here on its own terms: the room is the result's budget less its IDs and the note's
  share, and the short columns are taken in the catalogue's order (the first one, then the others
  while they fit), every object showing the same ones.
- `preview_short_scalars_shown_of_read[page_of_N]`: the share of all short scalars read that are
  shown (a page of 25 cannot show them all within the budget).
- `preview_result_chars[page_of_N]`: the whole result as the model reads it, against the budget.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from _figures import exit_status, figure, unmeasured  # noqa: E402

from dagtools import ToolCall, open_session  # noqa: E402
from dagtools.calls._preview_pages import CUT, page_room  # noqa: E402

__all__ = ["run_previews_bench"]

PAGES = {1: "Dune", 5: "Foundation", 25: ""}


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _short(value: Any) -> bool:
    return not (isinstance(value, str) and len(value) > CUT)


def fitting_short_cells(ids: list[str], read: dict[str, dict[str, Any]], order: tuple[str, ...], budget: int) -> int:
    """How many short values of the page fit its room, every object showing the same columns."""
    room = page_room(budget, _size({"result": ids}))
    size = 2 + sum(_size(i) + 6 for i in ids)
    fitting = 0
    for position, name in enumerate(order):
        values = [read[i][name] for i in ids if name in read[i]]
        if not values or (position > 0 and not all(_short(v) for v in values)):
            continue  # a column with a long text is not a short scalar's column
        cost = sum(_size(name) + _size(v if _short(v) else v[: CUT - 1] + "…") + 4 for v in values)
        if size + cost <= room:
            size += cost
            fitting += sum(1 for v in values if _short(v))
    return fitting


async def _measure(url: str) -> None:
    async with await open_session(url, cache=False) as session:
        session.select(["Query_search"])
        budget = session.long_values.budget
        order = session.catalogue.preview_fields("Book")
        for count, text in PAGES.items():
            result = await session.call_tool(ToolCall(name="Query_search", arguments={"text": text}))
            answer = json.loads(result.content)
            ids = answer["result"]
            if result.is_error or len(ids) != count:
                unmeasured(f"preview_short_scalars_kept_share[page_of_{count}]", f"the search answered {result.content[:200]}")
                continue
            read = {i: dict(session.object(i).preview) for i in ids}
            shown = answer.get("preview", {})
            short_read = sum(1 for i in ids for v in read[i].values() if _short(v))
            short_shown = sum(1 for i in ids for f, v in read[i].items() if _short(v) and f in shown.get(i, {}))
            fitting = fitting_short_cells(ids, read, order, budget)
            figure(f"preview_short_scalars_fetched[page_of_{count}]", short_read)
            figure(f"preview_short_scalars_fitting[page_of_{count}]", fitting)
            figure(f"preview_short_scalars_kept_share[page_of_{count}]", short_shown / fitting if fitting else 0.0, ">= 1")
            figure(f"preview_short_scalars_shown_of_read[page_of_{count}]", short_shown / short_read if short_read else 0.0)
            figure(f"preview_same_fields_for_every_object[page_of_{count}]", int(len({tuple(p) for p in shown.values()}) == 1), "== 1")
            figure(f"preview_result_chars[page_of_{count}]", _size(answer), f"<= {budget}")


def run_previews_bench() -> None:
    try:
        from tests.pyservers.books import app
        from tests.servers import serve_asgi
    except ImportError as error:  # ariadne or uvicorn is not installed
        unmeasured("preview_short_scalars_kept_share", f"the books API cannot be served: {error}")
        return
    with serve_asgi(app()) as base:
        asyncio.run(_measure(f"{base}/graphql"))


if __name__ == "__main__":
    run_previews_bench()
    sys.exit(exit_status())
