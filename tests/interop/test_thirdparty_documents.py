"""Valid documents on unions and interfaces whose members disagree on a field's type, against servers
someone else wrote (tests/thirdparty.py), over real HTTP.

The media app's `Movie.rating` is Int and `Album.rating` Float; swapi-graphql's `costInCredits` is Float
on `Starship` and Int on `Vehicle`. Selecting both under one name breaks the spec's overlapping-fields
rule, and the servers refuse the whole query, so every union, interface and `node` call failed.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from graphql import build_schema

from dagtools import DagtoolsError, Session, compile_catalogue, open_session
from dagtools.calls._documents import QueryBuilder
from dagtools.registry._handles import Step
from tests.previews import rows
from tests.thirdparty import call_ok


def _node_id(table: str, key: int) -> str:
    """A nodeId as the media app (and PostGraphile) writes it."""
    return base64.b64encode(f'["{table}",{key}]'.encode()).decode()


async def _session(url: str, *tools: str, **options: Any) -> Session:
    session = await open_session(url, cache=False, **options)
    session.select(tools)
    return session


async def test_a_union_whose_members_disagree_on_a_field_type_previews_each_under_its_name(media_url: str) -> None:
    session = await _session(media_url, "Query_search")
    try:
        found = await call_ok(session, "Query_search", text="m")
    finally:
        await session.executor.aclose()
    previews = rows(found)
    movie = next(p for i, p in previews.items() if i.startswith("Movie#"))
    album = next(p for i, p in previews.items() if p.get("title") == "Album 2")
    assert isinstance(movie["rating"], int)
    assert album["rating"] == 3.75
    assert not [key for p in previews.values() for key in p if key.startswith("rating_")]


async def test_an_interface_list_and_a_node_lookup_read_both_ratings(media_url: str) -> None:
    session = await _session(media_url, "Query_media", "Query_node", "Album_rating")
    try:
        media = await call_ok(session, "Query_media")
        node = await call_ok(session, "Query_node", nodeId=_node_id("albums", 3))
        rating = await call_ok(session, "Album_rating", Album=node["result"])
    finally:
        await session.executor.aclose()
    assert len(media["result"]) == 16
    assert {type(p["rating"]) for p in rows(media).values()} == {int, float}
    assert node["result"].startswith("Album#")
    assert node["preview"]["rating"] == 4.0
    assert rating == {"result": 4.0}


async def test_a_mutation_returning_an_interface_reads_its_fields_back(media_url: str) -> None:
    session = await _session(media_url, "Mutation_rateMedia", "Album_tags", "Album_rating", mutations=True)
    try:
        rated = await call_ok(session, "Mutation_rateMedia", nodeId=_node_id("albums", 4), rating=2.5)
        tags = await call_ok(session, "Album_tags", Album=rated["result"])
        rating = await call_ok(session, "Album_rating", Album=rated["result"])
    finally:
        await session.executor.aclose()
    assert rated["result"].startswith("Album#")
    assert tags == {"result": ["live", "vol 4"]}  # `tags` is String on Movie and [String] on Album
    assert rating == {"result": 2.5}


async def test_swapi_node_finds_starships_and_vehicles_whose_cost_differs_in_type(swapi_url: str) -> None:
    session = await _session(swapi_url, "Query_node", "Vehicle_costInCredits")
    try:
        starship = await call_ok(session, "Query_node", id=base64.b64encode(b"starships:9").decode())
        vehicle = await call_ok(session, "Query_node", id=base64.b64encode(b"vehicles:4").decode())
        cost = await call_ok(session, "Vehicle_costInCredits", Vehicle=vehicle["result"])
    finally:
        await session.executor.aclose()
    assert starship["result"] == "Starship#1"
    assert starship["preview"]["name"] == "Death Star"
    assert starship["preview"]["costInCredits"] == 1000000000000
    assert vehicle["result"] == "Vehicle#1"
    assert vehicle["preview"]["costInCredits"] == 150000
    assert cost == {"result": 150000}


SDL = """
type Query { movieById(id: Int!): Movie, search: [Result!]! }
union Result = Movie | Album
type Movie { title: String, rating: Int }
type Album { title: String, rating: Float }
"""


def test_debug_mode_validates_each_shape_once_and_names_an_invalid_document(monkeypatch: pytest.MonkeyPatch) -> None:
    import dagtools.calls._documents as documents

    checked: list[str] = []

    def check(schema: Any, text: str) -> None:
        checked.append(text)
        real_check(schema, text)

    real_check = documents.check_document
    monkeypatch.setattr(documents, "check_document", check)
    monkeypatch.setenv("DAGTOOLS_DEBUG", "1")
    builder = QueryBuilder(compile_catalogue(build_schema(SDL)))
    builder.build((Step.of("search"),))
    builder.build((Step.of("search"),))
    assert len(checked) == 1
    assert "rating_Album: rating" in checked[0]
    with pytest.raises(DagtoolsError, match=r"invalid GraphQL document.*movieById.*\n.*Document: query \{ movieById \{"):
        builder.build((Step.of("movieById"),))  # the required `id` is missing
    monkeypatch.setenv("DAGTOOLS_DEBUG", "0")
    builder.build((Step.of("movieById", {"id": 1}),))
    assert len(checked) == 2
