"""Plain APIs get identity too: a root lookup field by a key the type carries (`post(id:)`)."""

from __future__ import annotations

import strawberry

from dagtools import open_session
from tests.kitchen import call


@strawberry.type
class Post:
    id: strawberry.ID
    title: str


POSTS = {"1": "Hello", "2": "Again"}


@strawberry.type
class Query:
    @strawberry.field
    def posts(self) -> list[Post]:
        return [Post(id=strawberry.ID(k), title=v) for k, v in POSTS.items()]

    @strawberry.field
    def post(self, id: strawberry.ID) -> Post | None:
        return Post(id=id, title=POSTS[id]) if id in POSTS else None


schema = strawberry.Schema(query=Query)


async def test_a_lookup_field_is_the_identity_so_the_same_object_keeps_its_id():
    session = await open_session(schema)
    assert session.catalogue.dialect.name == "plain"
    assert session.catalogue.identity("Post").root_field == "post"
    session.select(["Query_posts", "Query_post", "Post_title"])
    listed = (await call(session, "Query_posts")).value["result"]
    assert listed == ["Post#1", "Post#2"]
    assert (await call(session, "Query_post", id="2")).value["result"] == "Post#2"
    entry = session.object("Post#2")
    assert [s.field for s in entry.handle.steps] == ["post"]  # re-rooted, not posts[1]
    assert (await call(session, "Post_title", Post="Post#2")).value == {"result": "Again"}


# -- equal values are never identity: a connection of value nodes, and a session kept in a store -------------


@strawberry.type
class Reading:
    """A meter reading: a value, no id. `source(unit:)` tells which meter made it (read through the chain)."""

    kwh: int
    meter: strawberry.Private[str]

    @strawberry.field
    def source(self, unit: str = "kWh") -> str:
        return f"{self.meter} in {unit}"


@strawberry.type
class ReadingEdge:
    cursor: str
    node: Reading


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class ReadingConnection:
    edges: list[ReadingEdge]
    page_info: PageInfo
    total_count: int


METERS = ["north", "south", "east"]


@strawberry.type
class MeterQuery:
    @strawberry.field
    def readings(self, first: int = 10, after: str | None = None) -> ReadingConnection:
        edges = [ReadingEdge(cursor=str(i), node=Reading(kwh=0, meter=m)) for i, m in enumerate(METERS)]  # all read 0
        return ReadingConnection(edges=edges, page_info=PageInfo(has_next_page=False, end_cursor="2"), total_count=len(edges))


meters = strawberry.Schema(query=MeterQuery)


async def test_a_connections_look_alike_nodes_are_each_their_own(tmp_path):
    """Three readings of 0 on one connection are three IDs, each read through its own edge; a session
    kept in a SQLite store and opened again holds them apart too."""
    store = f"sqlite:///{tmp_path / 'sessions.db'}"
    async with await open_session(meters, store=store, key="meters") as session:
        session.select(["Query_readings", "Reading_source"])
        listed = (await call(session, "Query_readings")).value["result"]
        assert len(set(listed)) == 3, listed
        assert [(await call(session, "Reading_source", Reading=r)).value["result"] for r in listed] == [f"{m} in kWh" for m in METERS]
    async with await open_session(meters, store=store, key="meters") as again:
        assert len(again.registry) == 3
        sources = [(await call(again, "Reading_source", Reading=r, unit="Wh")).value["result"] for r in reversed(listed)]
        assert sources == [f"{m} in Wh" for m in reversed(METERS)]
        assert (await call(again, "Query_readings")).value["result"] == listed  # the same places, the same values
