"""Previews that earn their bytes: the fields that name an object first, then short scalars, long
texts cut with a note that names the tool reading them in full, and room shared by the objects on
the page, so every object of a page shows the same fields and a page of 25 fits a result's budget.
Measured on SWAPI (graphql-js's reference server, over HTTP) too: films keep their titles first.
The servers of other families (Ariadne, GraphQL Yoga) are in tests/interop/test_previews_servers.py."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from graphql import GraphQLSchema, build_schema

from dagtools import Session, ToolCall, open_session
from dagtools.calls._preview_pages import CUT, preview_note
from tests.previews import columns, rows

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


def names(note: str, type_name: str, field: str) -> bool:
    """Whether a preview note names `field` of `type_name` and the tool that reads it: `Film's created,
    edited (Film_<field> reads each)`, or the tool itself in a list of them (`left out Film_created, ...`)."""
    said = re.findall(rf"{type_name}'s ([^;(]*)\(({type_name}_[A-Za-z0-9_<>]+) reads (?:it|each)\)", note)
    tools = (f"{type_name}_{field}", f"{type_name}_<field>")
    if any(field in [n.strip() for n in fields.split(",")] and tool in tools for fields, tool in said):
        return True
    listed = re.findall(r"(?:left out|are cut:) ([^;.]*)", note)
    return any(f"{type_name}_{field}" in [n.strip() for n in tools.split(",")] for tools in listed)


async def _result(session: Session, name: str, **arguments: Any) -> dict[str, Any]:
    session.select([name])
    result = await session.call_tool(ToolCall(name=name, arguments=arguments))
    assert not result.is_error, result.value
    return json.loads(result.content)


async def test_names_lead_then_short_scalars_then_long_texts() -> None:
    session = await open_session(_schema())
    article = await _result(session, "Query_article", id="7")
    shown = list(article["preview"])
    assert shown[:2] == ["title", "id"]  # what names it, then its id
    assert shown.index("state") < shown.index("wordCount")  # telling scalars before the rest
    times = [f for f in shown if f in ("createdAt", "editedOn")]  # named like bookkeeping: times all the same
    assert times and shown[shown.index("body") - len(times) : shown.index("body")] == times  # they close the short scalars
    assert shown.index("wordCount") < shown.index("createdAt")  # when the record was made tells least of them
    assert shown[-2:] == ["homepage", "source"]  # the long text, cut, after every short scalar; links last
    assert set(shown) == set(_article(7)) and "note" in article and "left out" not in article["note"]  # alone: all of it


async def test_long_texts_are_cut_with_a_note_naming_the_tool_that_reads_them() -> None:
    session = await open_session(_schema())
    article = await _result(session, "Query_article", id="7")
    body = article["preview"]["body"]
    assert len(body) == CUT and body.endswith("…") and body.startswith("Article 7 begins here")
    assert "texts ending in … and lists ending in a count are cut" in article["note"] and names(article["note"], "Article", "body")
    full = await _result(session, "Article_body", Article="Article#1")
    assert full["result"].startswith(body[:-1]) and len(full["result"]) > CUT


def test_a_note_names_left_out_fields_by_their_tools_where_that_is_shorter() -> None:
    every = lambda _name: True  # noqa: E731 - every field has its own tool
    two = preview_note([("Planet", [], ["created", "edited"])], every)
    assert two == "Previews: left out Planet_created, Planet_edited."
    many = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    grouped = preview_note([("Observation", [], many)], every)
    assert grouped == f"Previews: left out Observation's {', '.join(many)} (Observation_<field> reads each)."
    some = preview_note([("Planet", [], ["created", "edited"])], lambda name: name == "Planet_created")
    assert some == "Previews: left out Planet's created, edited (Planet_created reads it)."  # the tools alone would hide `edited`
    assert names(two, "Planet", "edited") and names(grouped, "Observation", "zeta")  # the helper the other tests use reads both


async def test_a_page_of_25_objects_fits_the_result_budget_as_one_table() -> None:
    session = await open_session(_schema())
    page = await _result(session, "Query_articles")
    budget = session.long_values.budget
    assert page["result"] == [f"Article#{n}" for n in range(1, 26)] and "truncated" not in page
    assert "Previews shortened" not in page.get("note", "")
    assert len(json.dumps(page, ensure_ascii=False)) <= budget
    assert set(page["preview"]) == {"Article", *page["result"]}  # one table: its columns said once, a row an article
    header = page["preview"]["Article"]
    assert header["columns"] == ["title", "id", "wordCount", "createdAt"]  # no long text or link; cheap columns stay
    assert header["same"] == {"state": "PUBLISHED", "editedOn": "2024-02-01"}  # the same on every row: said once
    table = rows(page)
    assert all(set(r) == {*header["columns"], *header["same"]} for r in table.values())
    assert [table[i]["title"] for i in page["result"]] == [f"Article {n}" for n in range(1, 26)]
    assert "left out " in page["note"] and all(names(page["note"], "Article", f) for f in ("body", "homepage", "source"))


async def test_swapi_films_show_the_same_fields_titles_first(swapi_url: str) -> None:
    async with await open_session(swapi_url, cache=False) as session:
        films = await _result(session, "Query_allFilms")
        budget = session.long_values.budget
    table = rows(films)
    titles = [table[i]["title"] for i in films["result"]]
    assert len(titles) == 6 and "A New Hope" in titles and "Revenge of the Sith" in titles
    assert set(films["preview"]) == {"Film", *films["result"]}  # one table: the same fields for each film
    shown = columns(films, "Film")
    assert shown[0] == "title" and "id" not in shown  # the opaque Relay id stays out
    assert "director" in shown and "releaseDate" in shown  # what tells films apart
    assert not {"openingCrawl", "created", "edited"} & set(shown)  # what does not
    assert names(films["note"], "Film", "openingCrawl") and names(films["note"], "Film", "created")
    size = len(json.dumps(films, ensure_ascii=False))
    print(f"SWAPI Query_allFilms: {size} characters")
    assert size <= budget


@pytest.mark.public_schemas
def test_github_issue_comment_reads_its_body_before_surrogate_numbers() -> None:
    from tests.conftest import shared_catalogue

    catalogue = shared_catalogue("github.schema.graphql")
    fields = catalogue.preview_fields("IssueComment")
    assert fields[0] == "body"  # a comment has no name: what it says names it
    assert all(fields.index("body") < fields.index(f) for f in ("databaseId", "fullDatabaseId") if f in fields)
    assert not {"bodyText", "bodyHTML", "id"} & set(fields)  # renderings of the body and the opaque Relay id
    issue = catalogue.preview_fields("Issue")
    assert issue[:3] == ("title", "number", "body") and "databaseId" not in issue[:8]


def test_foreign_keys_a_tool_reaches_and_row_numbers_rank_last_other_keys_stay_with_names() -> None:
    from dagtools import compile_catalogue

    schema = build_schema("""
      type Author { name: String }
      type Review {
        databaseId: Int
        authorId: ID
        author: Author
        bookId: ID
        personID: ID
        rating: Int
        text: String
        textHTML: String
        createdAt: String
      }
      type Query { review: Review }
    """)
    fields = compile_catalogue(schema).preview_fields("Review")
    # no `book` field: a key; an author without identity is a small value, read whole
    assert fields == ("bookId", "personID", "text", "author", "rating", "createdAt", "databaseId", "authorId")
