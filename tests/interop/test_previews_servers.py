"""Previews on servers of two families someone else wrote: a books API on Ariadne (Python,
tests/pyservers/books.py under uvicorn) and the media app on GraphQL Yoga (Node, tests/js/app.js).

The room follows the objects actually on the page: a search that returns one book shows every short
scalar it read, its computed `averageRating` included; pages of 5 and 25 show the same fields for
every book, like a table's columns; a thread of comments shows what each comment says before its
database row numbers and foreign keys; and the note names what was left out with the tool that reads it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from dagtools import Session, ToolCall, open_session
from dagtools.calls._preview_pages import CUT
from tests.catalogue.test_previews import names
from tests.previews import columns, row, rows
from tests.pyservers.books import BOOKS, app
from tests.servers import serve_asgi
from tests.thirdparty import SERVER_VERSIONS, media_url  # noqa: F401 - fixture


@pytest.fixture(scope="module")
def books_url() -> Iterator[str]:
    with serve_asgi(app()) as base:
        yield f"{base}/graphql"


@pytest.fixture
async def books(books_url: str) -> AsyncIterator[Session]:
    async with await open_session(books_url, cache=False, max_active_tools=128) as session:
        session.select(session.catalogue.names())
        yield session


async def call(session: Session, tool: str, /, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
    assert not result.is_error, (result.value, SERVER_VERSIONS)
    return json.loads(result.content)


def _short(value: Any) -> bool:
    return not (isinstance(value, str) and len(value) > CUT)


async def test_a_search_that_finds_one_book_shows_every_short_scalar_it_read(books: Session) -> None:
    found = await call(books, "Query_search", text="Dune")
    assert found["result"] == ["Book#1"]
    preview = row(found, "Book#1")
    read = books.object("Book#1").preview
    assert "averageRating" in read and preview["averageRating"] == 3.29  # the computed column, read and shown
    assert {f for f, v in read.items() if _short(v)} <= set(preview)  # every short scalar it read
    assert preview["summary"].endswith("…") and len(preview["summary"]) == CUT
    assert names(found["note"], "Book", "summary") and "left out" not in found["note"]


@pytest.mark.parametrize(("text", "count"), [("Dune", 1), ("Foundation", 5), ("", 25)])
async def test_every_book_on_a_page_shows_the_same_fields(books: Session, text: str, count: int) -> None:
    page = await call(books, "Query_search", text=text)
    table = rows(page)
    assert len(page["result"]) == count and {i for i in table if i.startswith("Book#")} == set(page["result"])
    assert len(json.dumps(page, ensure_ascii=False)) <= books.long_values.budget
    header = page["preview"]["Book"]["columns"]  # a table: the columns said once for every book
    assert [c for c in header if c != "author"][:2] == ["title", "id"]  # what names a book first, beside its author's handle
    shown = columns(page, "Book")
    assert all(set(table[i]) == set(shown) for i in page["result"])
    assert "authorId" not in shown  # a foreign key: its object is the `author` handle on the same page
    read = set(books.catalogue.preview_fields("Book"))
    left = read - set(shown)
    authors = {table[i]["author"] for i in page["result"]}  # the reference, as a handle on the same page
    assert all(table[a]["name"] for a in authors), table
    if count == 1:
        assert not {f for f in left if f != "summary"}  # a lone book shows every short scalar
    else:  # a list page: what tells the books apart; the row number and the long text never
        assert {"databaseId", "summary"} <= left
        if count == 5:  # cheap columns stay while there is room, more than five of them
            assert {"year", "pages", "genre", "language", "ratingsCount", "isbn"} <= set(shown), shown
        assert all(names(page["note"], "Book", f) for f in left)  # each named with the tool that reads it
    titles = [table[i]["title"] for i in page["result"]]
    assert titles == [b["title"] for b in BOOKS if text.lower() in b["title"].lower()]


async def test_a_thread_of_comments_shows_what_each_says_before_its_surrogate_numbers(books: Session) -> None:
    await call(books, "Query_book", id="1")
    thread = await call(books, "Book_comments", Book="Book#1")
    assert len(thread["result"]) == 7
    shown = columns(thread, "Comment")
    assert "body" in shown
    assert all(shown.index("body") < shown.index(f) for f in ("databaseId", "fullDatabaseId", "authorId") if f in shown)
    table = rows(thread)
    bodies = [table[i]["body"] for i in thread["result"]]
    whole = [b for b in bodies if not b.endswith("…")]
    assert len(whole) == 4 and "Too long for me." in whole  # short bodies are read with no further call
    assert names(thread["note"], "Comment", "body")
    author = await call(books, "Comment_author", Comment="Comment#1")  # the foreign key's object, by its tool
    assert author["preview"]["name"] == "Author 3"


async def test_media_articles_page_of_40_is_one_table_with_titles(media_url: str) -> None:  # noqa: F811
    async with await open_session(media_url, cache=False) as session:
        session.select(["Query_articles", "Query_articleById"])
        page = await call(session, "Query_articles")
        alone = await call(session, "Query_articleById", id=3)
        budget = session.long_values.budget
    assert len(page["result"]) == 40 and len(json.dumps(page, ensure_ascii=False)) <= budget
    assert set(page["preview"]) == {"Article", *page["result"]}  # one table: one header, a row per article
    assert rows(page)["Article#40"]["title"] == "Article number 1 about the library"
    assert names(page["note"], "Article", "body")
    shown = alone["preview"]
    assert {"title", "id", "publishedAt", "updatedAt"} <= set(shown) and "nodeId" not in shown  # a lone article: every short scalar
    assert shown["body"].endswith("…") and names(alone["note"], "Article", "body")
