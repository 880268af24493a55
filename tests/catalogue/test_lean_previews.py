"""Previews sized by what a field tells, on servers someone else wrote (swapi-graphql; the Yoga media
app in tests/js/app.js) and in process:

- a page of several objects is a table that shows names, content, states, counts, dates and short
  lists, and leaves out long texts, URLs and the records' own bookkeeping times where the schema's
  description says so (SWAPI's `created`, `edited`) whatever the room, naming them in the note; a lone
  object still shows them;
- a bookkeeping time is known from its description, never from a list of one API's fields; a field only
  named like one (`updatedAt`) is a time that ranks after the others, and a date that says something
  about the thing (`releaseDate`, `publishedAt`) stays;
- short lists of scalars (a form error's messages, an album's tags, a film's producers) are shown,
  a long one cut to its first items and a count of the rest.
"""

from __future__ import annotations

import json
from typing import Any

from graphql import build_schema

from dagtools import Session, ToolCall, compile_catalogue, open_session
from dagtools.catalogue._preview_fields import BOOKKEEPING, TIMESTAMP, preview_rank
from tests.catalogue.test_previews import names
from tests.previews import columns, rows


async def _result(session: Session, name: str, **arguments: Any) -> dict[str, Any]:
    session.select([name])
    result = await session.call_tool(ToolCall(name=name, arguments=arguments))
    assert not result.is_error, result.value
    return json.loads(result.content)


async def test_swapi_film_pages_leave_out_bookkeeping_and_long_texts_a_lone_film_keeps_them(swapi_url: str) -> None:
    async with await open_session(swapi_url, cache=False) as session:
        films = await _result(session, "Query_allFilms")
        lone = await _result(session, "Query_film", filmID="1")
    table = rows(films)
    assert len(table) == 6 and set(table) == set(films["result"])
    shown = columns(films, "Film")  # a table: the columns said once for every film
    assert {"title", "director", "releaseDate", "producers", "episodeID"} <= set(shown)  # every cheap column stays
    assert all(set(r) == set(shown) for r in table.values())
    assert not {"created", "edited", "openingCrawl"} & set(shown)  # described as bookkeeping; a long text
    for field in ("openingCrawl", "created", "edited"):
        assert names(films["note"], "Film", field), films["note"]
    first = table["Film#1"]
    assert first["title"] == "A New Hope" and first["producers"] == ["Gary Kurtz", "Rick McCallum"]
    shown = list(lone["preview"])
    assert {"created", "edited", "openingCrawl"} <= set(shown)  # alone, it shows every short scalar read
    assert shown.index("releaseDate") < shown.index("created")  # the record's own times still rank last
    assert len(json.dumps(films, ensure_ascii=False)) < 1400  # 2,152 bytes when every short scalar filled the room


async def test_media_article_pages_keep_the_publication_date_and_the_update_time_after_it(media_url: str) -> None:
    async with await open_session(media_url, cache=False) as session:
        page = await _result(session, "Query_articles")
        article = await _result(session, "Query_articleById", id=3)
    table = rows(page)
    assert len(table) == 40 and all(r["title"].startswith("Article number") for r in table.values())
    assert all("body" not in r for r in table.values()) and names(page["note"], "Article", "body")
    order = session.catalogue.preview_fields("Article")
    assert order.index("publishedAt") < order.index("updatedAt")  # when it was published tells; when edited, least
    shown = columns(page, "Article")
    # a bookkeeping name only orders the time last (nothing in its description says bookkeeping): on a page
    # of 40 the room goes to what names each article first, and both times are named for their tool
    assert shown[0] == "title" and names(page["note"], "Article", "publishedAt") and names(page["note"], "Article", "updatedAt")
    alone = list(article["preview"])
    assert alone.index("publishedAt") < alone.index("updatedAt")
    assert "updatedAt" in article["preview"] and article["preview"]["body"].endswith("…")


async def test_media_album_tags_are_in_its_preview_alone_and_on_a_page(media_url: str) -> None:
    async with await open_session(media_url, cache=False) as session:
        album = await _result(session, "Query_albumById", id=2)
        media = await _result(session, "Query_media")
    assert album["preview"]["tags"] == ["live", "vol 2"]
    albums = {k: v for k, v in rows(media).items() if k.startswith("Album#")}
    assert albums and all(isinstance(p["tags"], list) and p["tags"][0] == "live" for p in albums.values())


def test_bookkeeping_is_told_by_name_or_description_and_dates_that_tell_stay() -> None:
    for name in ("createdAt", "updated_at", "lastModified", "editedOn", "archivedAt", "creationDate", "created"):
        # named like bookkeeping: a time all the same (a review's `createdAt` is when it was written), last of them
        assert preview_rank(name, "String") == (TIMESTAMP, 1), name
        assert preview_rank(name, "String") > preview_rank("publishedAt", "String")
    stamp = "The moment this record was last changed, as an ISO 8601 string."
    assert preview_rank("stamp", "String", description=stamp)[0] == BOOKKEEPING
    for name, text in (("releaseDate", "The date of film release at original creator country."), ("dueDate", ""), ("publishedAt", "")):
        assert preview_rank(name, "DateTime", description=text)[0] == TIMESTAMP, name
    assert preview_rank("stamps", "Int", description=stamp)[0] != BOOKKEEPING  # a number is not a time


FORMS = """
type FormError { field: String!  messages: [String!]! }
type Application { id: ID!  name: String!  tags: [String!]!  scores: [[Int]] }
type ApplyPayload { application: Application  errors: [FormError!]! }
type Query { application(id: ID!): Application }
type Mutation { apply(applicant: String!, coverLetter: String!): ApplyPayload }
"""


def _forms() -> Any:
    schema = build_schema(FORMS)
    tags = [f"tag-{n}" for n in range(30)]
    query, mutation = schema.query_type, schema.mutation_type
    assert query is not None and mutation is not None
    query.fields["application"].resolve = lambda _r, _i, id: {"id": id, "name": f"Application {id}", "tags": tags, "scores": [[1]]}
    mutation.fields["apply"].resolve = lambda _r, _i, **_a: {
        "application": None,
        "errors": [{"field": "coverLetter", "messages": ["is too short (minimum is 200 characters)", "must mention the role"]}],
    }
    return schema


def test_lists_of_scalars_are_preview_fields_lists_of_lists_are_not() -> None:
    fields = compile_catalogue(_forms()).preview_fields("Application")
    assert "tags" in fields and "scores" not in fields
    assert compile_catalogue(_forms()).preview_fields("FormError") == ("messages", "field")  # what is wrong, then where


async def test_a_form_error_shows_its_messages_and_a_long_list_is_cut_with_a_count() -> None:
    session = await open_session(_forms(), mutations=True)
    applied = await _result(session, "Mutation_apply", applicant="Ada", coverLetter="Hi")
    text = json.dumps(applied)
    assert "is too short (minimum is 200 characters)" in text and "must mention the role" in text, text
    application = await _result(session, "Query_application", id="7")
    tags = application["preview"]["tags"]
    assert tags[0] == "tag-0" and tags[-1].startswith("+") and tags[-1].endswith(" more"), tags
    assert len(tags) - 1 + int(tags[-1].split()[0][1:]) == 30  # the items shown and the count make all of them
    assert names(application["note"], "Application", "tags")
    full = await _result(session, "Application_tags", Application="Application#1")
    assert full["result"] == [f"tag-{n}" for n in range(30)]
