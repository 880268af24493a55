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
