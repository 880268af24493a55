"""What the model is shown of objects on GraphQL servers someone else wrote (tests/thirdparty.py).

- the media app on GraphQL Yoga: a mutation returning the object it changes, a page of 40 articles
  with long text, a Relay `Node` whose global ID field is `nodeId` (primary key in `id`), a
  connection and payload types;
- swapi-graphql, graphql-js's Star Wars reference server: `node(id:)`, `person(id:, personID:)`
  where `personID` is the primary key, and connections everywhere.
"""

from __future__ import annotations

import json

from tests.catalogue.test_previews import names
from tests.previews import columns, rows
from tests.thirdparty import Open, attempt, call_ok

call = call_ok


# -- the media app (GraphQL Yoga) -----------------------------------------------------------------------


async def test_media_mutation_result_and_later_reads_show_the_new_values(media_url: str, opened: Open) -> None:
    session = await opened(media_url, mutations=True)
    before = await call(session, "Query_movieById", id=5)
    assert before["preview"]["rating"] == 5
    rated = await call(session, "Mutation_rateMovie", id=5, rating=2)
    assert rated["result"] == before["result"] and rated["preview"]["rating"] == 2
    again = await call(session, "Query_movieById", id=5)
    assert again["preview"]["rating"] == 2


async def test_media_page_of_forty_articles_keeps_their_titles(media_url: str, opened: Open) -> None:
    session = await opened(media_url)
    page = await call(session, "Query_articles")
    assert len(page["result"]) == 40
    table = rows(page)
    assert table["Article#40"]["title"] == "Article number 1 about the library"
    assert set(table) == set(page["result"]) and all("title" in preview for preview in table.values())
    assert set(page["preview"]) == {"Article", *page["result"]}  # one header: the same fields for every article
    assert all(set(preview) == set(columns(page, "Article")) for preview in table.values())
    assert "left out " in page["note"] and names(page["note"], "Article", "body")


async def test_media_relay_ids_use_node_id_and_check_the_type(media_url: str, opened: Open) -> None:
    session = await opened(media_url, relay_ids=True)
    movie = await call(session, "Query_movieById", id=1)  # a primary key: sent as it is
    assert session.object(movie["result"]).identity == "WyJtb3ZpZXMiLDFd"
    director = await call(session, "Movie_director")
    refused = await attempt(session, "Query_movie", nodeId=director["result"])
    assert refused.is_error and "takes a Movie" in refused.value["error"]
    again = await call(session, "Query_movie", nodeId=movie["result"])
    assert again["result"] == movie["result"]
    raw = await call(session, "Query_movie", nodeId="WyJtb3ZpZXMiLDJd")
    assert raw["preview"]["title"] == "Movie B"
    assert await call(session, "Movie_title", Movie=raw["result"]) == {"result": "Movie B"}


async def test_media_hides_plumbing_and_disallowed_payloads(media_url: str, opened: Open) -> None:
    session = await opened(media_url)
    types = {session.catalogue.ref(n).type_name for n in session.catalogue.names()}
    assert not types & {"MoviesConnection", "MoviesEdge", "PageInfo", "UpdateMoviePayload"}
    page = await call(session, "Query_allMovies", first=3)
    assert page["result"] == ["Movie#1", "Movie#2", "Movie#3"] and page["totalCount"] == 12
    selected = await attempt(session, "selectTools", tools=["Mutation_updateMovie", "MoviesEdge_cursor", "Query_featured"])
    assert not selected.is_error
    assert "Mutation_updateMovie is a mutation the host has not allowed" in selected.value
    assert "MoviesEdge_cursor is not offered: connections are read for you" in selected.value


async def test_media_null_object_is_an_answer(media_url: str, opened: Open) -> None:
    session = await opened(media_url)
    result = await call(session, "Query_movieById", id=999)
    assert result["result"] is None and "is null" in result["note"]
    assert len(session.registry) == 0


# -- swapi-graphql (graphql-js reference server) --------------------------------------------------------


async def test_swapi_relay_ids_leave_primary_keys_alone_and_check_types(swapi_url: str, opened: Open) -> None:
    session = await opened(swapi_url, relay_ids=True)
    luke = await call(session, "Query_person", personID="1")
    assert luke["preview"]["name"] == "Luke Skywalker"
    refused = await attempt(session, "Query_film", id=luke["result"])
    assert refused.is_error and "takes a Film" in refused.value["error"]
    hope = await call(session, "Query_film", id="ZmlsbXM6MQ==")  # a raw global id
    assert hope["preview"]["title"] == "A New Hope"
    same = await call(session, "Query_person", id=luke["result"])
    assert same["result"] == luke["result"]
    described = json.dumps([session.catalogue.tool(n).parameters for n in session.catalogue.names()])
    assert "Issue#1" not in described


async def test_swapi_offers_no_connection_tools(swapi_url: str, opened: Open) -> None:
    session = await opened(swapi_url)
    names = session.catalogue.names()
    assert not [n for n in names if n.split("_")[0].endswith(("Connection", "Edge")) or n.startswith("PageInfo_")]
    films = await call(session, "Query_allFilms", first=2)
    assert films["result"] == ["Film#1", "Film#2"] and rows(films)["Film#1"]["title"] == "A New Hope"
    assert await call(session, "Film_director", Film="Film#1") == {"result": "George Lucas"}
