"""Previews that earn their bytes: the fields that name an object first, long texts cut with a note
that names the tool reading them in full, timestamps and URLs last, and a budget per object so a page
of 25 objects fits a result's budget without being shrunk. Measured on SWAPI (graphql-js's reference
server, over HTTP) too: the titles of all films stay, the rest of the padding goes."""

from __future__ import annotations

import json
from typing import Any

from graphql import GraphQLSchema, build_schema

from dagtools import Session, ToolCall, open_session
from dagtools.calls._previews import CUT, object_room

SDL = """
scalar DateTime
scalar URI
type Article {
  createdAt: DateTime
  homepage: URI
  body: String
  wordCount: Int
  id: ID!
  source: String
  title: String!
  state: String
  editedOn: String
}
type Query {
  article(id: ID!): Article
  articles: [Article!]!
}
"""


def _article(n: int) -> dict[str, Any]:
    return {
        "createdAt": f"2024-01-{n % 28 + 1:02d}T10:00:00Z",
        "homepage": f"https://example.org/articles/{n}",
        "body": f"Article {n} begins here and goes on " + "and on " * 60,
        "wordCount": 400 + n,
        "id": str(n),
        "source": f"http://feeds.example.org/{n}",
        "title": f"Article {n}",
        "state": "PUBLISHED",
        "editedOn": "2024-02-01",
    }


def _schema() -> GraphQLSchema:
    schema = build_schema(SDL)
    query = schema.query_type
    assert query is not None
    query.fields["article"].resolve = lambda _root, _info, id: _article(int(id))
    query.fields["articles"].resolve = lambda _root, _info: [_article(n) for n in range(1, 26)]
    return schema


async def _result(session: Session, name: str, **arguments: Any) -> dict[str, Any]:
    session.select([name])
    result = await session.call_tool(ToolCall(name=name, arguments=arguments))
    assert not result.is_error, result.value
    return json.loads(result.content)


async def test_naming_fields_come_first_and_timestamps_and_urls_last() -> None:
    session = await open_session(_schema())
    article = await _result(session, "Query_article", id="7")
    shown = list(article["preview"])
    assert shown[:2] == ["title", "id"]  # what names it, then its id
    assert shown.index("state") < shown.index("wordCount") < shown.index("body")  # short scalars, then long texts
    late = [f for f in shown if f in ("createdAt", "editedOn", "homepage", "source")]
    assert shown[-len(late) :] == late and late  # timestamps and links close the preview
    assert "homepage" not in late or late.index("homepage") > late.index("createdAt")


async def test_long_texts_are_cut_with_a_note_naming_the_tool_that_reads_them() -> None:
    session = await open_session(_schema())
    article = await _result(session, "Query_article", id="7")
    body = article["preview"]["body"]
    assert len(body) == CUT and body.endswith("…") and body.startswith("Article 7 begins here")
    assert "texts ending in … are cut at 80 characters" in article["note"] and "Article_body" in article["note"]
    full = await _result(session, "Article_body", Article="Article#1")
    assert full["result"].startswith(body[:-1]) and len(full["result"]) > CUT


async def test_a_page_of_25_objects_fits_the_result_budget_without_shrinking() -> None:
    session = await open_session(_schema())
    page = await _result(session, "Query_articles")
    budget = session.long_values.budget
    assert page["result"] == [f"Article#{n}" for n in range(1, 26)] and "truncated" not in page
    assert "Previews shortened" not in page.get("note", "")
    assert len(json.dumps(page, ensure_ascii=False)) <= budget
    assert all(len(json.dumps(p, ensure_ascii=False)) <= object_room(budget) for p in page["preview"].values())
    assert [p["title"] for p in page["preview"].values()] == [f"Article {n}" for n in range(1, 26)]
    assert "left out for room" in page["note"] and "createdAt" in page["note"]


async def test_swapi_films_keep_their_titles_and_lose_the_padding(swapi_url: str) -> None:
    async with await open_session(swapi_url, cache=False) as session:
        films = await _result(session, "Query_allFilms")
    titles = [p["title"] for p in films["preview"].values()]
    assert len(titles) == 6 and "A New Hope" in titles and "Revenge of the Sith" in titles
    assert all(list(p)[0] == "title" and "created" not in p and "id" not in p for p in films["preview"].values())
    assert "openingCrawl" in films["note"] and "Film_openingCrawl" in films["note"]
    size = len(json.dumps(films, ensure_ascii=False).encode())
    print(f"SWAPI Query_allFilms: {size} bytes")
    assert size <= 1200  # 2,426 bytes when previews led with 160-character crawls and timestamps
