"""What the model is shown of objects on APIs shaped like real ones, in process and over loopback HTTP.

Previews follow the latest answer; big pages keep shrunk previews; Relay global ids are found from the
`Node` interface (`nodeId` beside a primary key `id`) and only where an argument takes one; connection
plumbing and payloads of disallowed mutations give no tools; null is an answer.
"""

from __future__ import annotations

import json
from typing import Any

from graphql import (
    GraphQLArgument,
    GraphQLField,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
    build_schema,
    print_schema,
)

from dagtools import Session, ToolCall, compile_catalogue
from tests.catalogue.test_previews import names
from tests.previews import rows
from tests.transports import Transport, call, relay_session

# A PostGraphile-shaped API: the global ID field is `nodeId`, the primary key is `id`.
LIBRARY_SDL = """
interface Node { nodeId: ID! }
type Query {
  node(nodeId: ID!): Node
  movie(nodeId: ID!): Movie
  movieById(id: Int!): Movie
  people: [Person!]!
  books: [Book!]!
  stargazers(first: Int, after: String): StargazerConnection!
  film(id: ID, filmID: ID): Movie
}
type Mutation {
  rateMovie(id: Int!, rating: Int!): Movie!
  updateMovie(input: UpdateMovieInput!): UpdateMoviePayload
}
input UpdateMovieInput { nodeId: ID!, title: String! }
type UpdateMoviePayload { clientMutationId: String, movie: Movie }
type Movie implements Node { nodeId: ID!, id: Int!, title: String!, rating: Int, sequel: Movie }
type Person implements Node { nodeId: ID!, id: Int!, name: String! }
type Book { title: String!, author: String!, summary: String! }
type StargazerConnection { edges: [StargazerEdge!]!, pageInfo: PageInfo!, totalCount: Int! }
type StargazerEdge { cursor: String!, starredAt: String!, node: Person! }
type PageInfo { hasNextPage: Boolean!, endCursor: String }
"""


class Library:
    """The root value: rows in memory, so a mutation changes what later reads see."""

    def __init__(self) -> None:
        self.movies = {n: {"__typename": "Movie", "id": n, "title": f"Movie {n}", "rating": n} for n in (1, 2, 3)}
        self.people = {n: {"__typename": "Person", "id": n, "name": f"Person {n}"} for n in (1, 2)}
        for row in [*self.movies.values(), *self.people.values()]:
            row["nodeId"] = f"{row['__typename'].lower()}s:{row['id']}"
        self.movies[1]["sequel"] = self.movies[2]

    def node(self, _info: Any, nodeId: str) -> Any:
        table, _, key = nodeId.partition(":")
        rows = {"movies": self.movies, "persons": self.people}.get(table, {})
        return rows.get(int(key)) if key.isdigit() else None

    def movie(self, info: Any, nodeId: str) -> Any:
        row = self.node(info, nodeId)
        return row if row is not None and row["__typename"] == "Movie" else None

    def movieById(self, _info: Any, id: int) -> Any:  # noqa: N802 - the schema's name
        return self.movies.get(id)

    def film(self, _info: Any, id: str | None = None, filmID: str | None = None) -> Any:  # noqa: N803
        return self.movies.get(int(filmID)) if filmID and filmID.isdigit() else None

    def rateMovie(self, _info: Any, id: int, rating: int) -> Any:  # noqa: N802
        self.movies[id]["rating"] = rating
        return self.movies[id]

    def updateMovie(self, info: Any, input: dict[str, Any]) -> Any:
        row = self.movie(info, input["nodeId"])
        if row is None:
            return None
        row["title"] = input["title"]
        return {"movie": row}

    def people_list(self) -> list[Any]:
        return list(self.people.values())


def library(transport: Transport, **options: Any) -> tuple[Session, Library, Any]:
    schema = build_schema(LIBRARY_SDL)
    root = Library()
    books = [{"title": f"Book number {n}", "author": f"Author {n}", "summary": "A long summary. " * 30} for n in range(1, 31)]
    edges = [{"cursor": str(n), "starredAt": f"2024-01-0{n}", "node": p} for n, p in enumerate(root.people.values(), start=1)]
    value = {
        "node": root.node,
        "movie": root.movie,
        "movieById": root.movieById,
        "film": root.film,
        "people": root.people_list(),
        "books": books,
        "stargazers": {"edges": edges, "pageInfo": {"hasNextPage": False, "endCursor": "2"}, "totalCount": 2},
        "rateMovie": root.rateMovie,
        "updateMovie": root.updateMovie,
    }
    executor = transport.executor(schema, root_value=value)
    catalogue = compile_catalogue(schema, **options)
    session = Session(catalogue, executor)
    session.select(catalogue.names())
    return session, root, executor


async def attempt(session: Session, tool: str, /, **arguments: Any) -> Any:
    return await session.call_tool(ToolCall(name=tool, arguments=arguments))


# -- previews follow the latest answer ------------------------------------------------------------------


async def test_a_mutation_result_shows_the_values_it_wrote(transport: Transport) -> None:
    session, _, _ = library(transport, mutations=True)
    first = await call(session, "Query_movieById", id=2)
    assert first["preview"]["rating"] == 2
    rated = await call(session, "Mutation_rateMovie", id=2, rating=5)
    assert rated["result"] == first["result"] == "Movie#1"  # the same object, the same ID
    assert rated["preview"]["rating"] == 5
    again = await call(session, "Query_movieById", id=2)
    assert again["preview"]["rating"] == 5
    assert session.object("Movie#1").preview["rating"] == 5


async def test_later_reads_show_what_another_writer_changed(transport: Transport) -> None:
    session, root, _ = library(transport)
    await call(session, "Query_movieById", id=3)
    root.movies[3]["title"] = "Movie 3, restored"
    again = await call(session, "Query_movieById", id=3)
    assert again == {"result": "Movie#1", "preview": {"title": "Movie 3, restored", "id": 3, "rating": 3}}


async def test_relay_example_reads_the_closed_state_after_closing(transport: Transport) -> None:
    session, _, _ = relay_session(transport, mutations=True)
    await call(session, "Query_repository", name="engine")
    issue = await call(session, "Repository_issue", number=4)
    assert issue["preview"]["state"] == "OPEN"
    await call(session, "Mutation_closeIssue", issueId=issue["result"])
    again = await call(session, "Repository_issue", number=4)
    assert again["result"] == issue["result"] and again["preview"]["state"] == "CLOSED"


# -- big pages keep their previews ----------------------------------------------------------------------


async def test_a_big_page_keeps_shrunk_previews_and_says_so(transport: Transport) -> None:
    session, _, _ = library(transport)
    page = await call(session, "Query_books")
    assert page["result"] == [f"Book#{n}" for n in range(1, 31)]
    assert set(rows(page)) == set(page["result"])
    assert rows(page)["Book#30"]["title"] == "Book number 30"
    assert "left out " in page["note"] and names(page["note"], "Book", "summary")
    assert len(json.dumps(page["preview"])) <= session.long_values.budget
    assert session.object("Book#1").preview["summary"].startswith("A long summary.")  # the registry keeps the full preview


# -- Relay global ids -----------------------------------------------------------------------------------


def test_the_global_id_field_is_read_from_the_node_interface() -> None:
    catalogue = compile_catalogue(build_schema(LIBRARY_SDL))
    assert catalogue.dialect.name == "relay"
    identity = catalogue.identity("Movie")
    assert identity is not None and (identity.field, identity.root_field, identity.argument) == ("nodeId", "node", "nodeId")


async def test_handles_are_re_rooted_on_the_global_id_not_the_primary_key(transport: Transport) -> None:
    session, _, executor = library(transport, relay_ids=True)
    movie = await call(session, "Query_movieById", id=1)
    assert session.object(movie["result"]).identity == "movies:1"
    assert await call(session, "Movie_title") == {"result": "Movie 1"}
    assert executor.sent[-1] == ("query($v0: ID!) { node(nodeId: $v0) { ... on Movie { title } } }", {"v0": "movies:1"})
    same = await call(session, "Query_movie", nodeId=movie["result"])
    assert same["result"] == movie["result"]
    assert executor.sent[-1][1] == {"v0": "movies:1"}


async def test_global_id_arguments_check_the_type_and_take_raw_ids(transport: Transport) -> None:
    session, _, executor = library(transport, relay_ids=True)
    await call(session, "Query_people")
    sent = len(executor.sent)
    refused = await attempt(session, "Query_movie", nodeId="Person#1")
    assert refused.is_error and "Person#1 is a Person, but Query_movie's nodeId takes a Movie" in refused.value["error"]
    assert len(executor.sent) == sent
    raw = await call(session, "Query_movie", nodeId="movies:2")
    assert raw["preview"]["title"] == "Movie 2"
    node = await call(session, "Query_node", nodeId="Person#2")
    assert node["result"] == "Person#2" and executor.sent[-1][1] == {"v0": "persons:2"}


async def test_a_primary_key_beside_a_global_id_is_left_alone(transport: Transport) -> None:
    session, _, executor = library(transport, relay_ids=True)
    film = await call(session, "Query_film", filmID="1")
    assert film["preview"]["title"] == "Movie 1"
    assert executor.sent[-1][1] == {"v0": "1"}
    properties = session.catalogue.tool("Query_film").parameters["properties"]
    assert "#1" not in json.dumps(properties["filmID"])
    assert "Movie#1" in properties["id"]["description"]


def test_object_id_examples_come_from_this_api() -> None:
    catalogue = compile_catalogue(build_schema(LIBRARY_SDL), relay_ids=True, mutations=True)
    described = json.dumps([catalogue.tool(n).parameters for n in catalogue.names()])
    assert "Issue#1" not in described
    assert 'An object ID such as "Movie#1" (any Node)' in catalogue.tool("Query_node").parameters["properties"]["nodeId"]["description"]
    update = json.dumps(catalogue.tool("Mutation_updateMovie").parameters)
    assert "global id the API gave" in update


# -- dead ends ------------------------------------------------------------------------------------------


def test_connection_edge_page_and_disallowed_payload_types_give_no_tools() -> None:
    catalogue = compile_catalogue(build_schema(LIBRARY_SDL))
    types = {catalogue.ref(n).type_name for n in catalogue.names()}
    assert not types & {"StargazerConnection", "StargazerEdge", "PageInfo", "UpdateMoviePayload"}
    assert {"Movie", "Person", "Book"} <= types
    allowed = compile_catalogue(build_schema(LIBRARY_SDL), mutations=["updateMovie"])
    assert "UpdateMoviePayload_movie" in allowed and "Mutation_rateMovie" not in allowed


async def test_the_get_one_first_hint_names_only_tools_that_hand_one_out(transport: Transport) -> None:
    session, _, _ = relay_session(transport)
    result = await attempt(session, "Issue_title")
    assert result.is_error
    hint = result.value["error"].split("Get one first, with ", 1)[1]
    assert "Connection_" not in hint and "Edge_" not in hint
    assert "Repository_issues" in hint or "Repository_issue" in hint


async def test_edge_values_are_shown_with_their_node(transport: Transport) -> None:
    session, _, _ = library(transport)
    page = await call(session, "Query_stargazers", first=2)
    assert page["result"] == ["Person#1", "Person#2"]
    assert rows(page)["Person#2"] == {"name": "Person 2", "starredAt": "2024-01-02", "id": 2}
    assert page["totalCount"] == 2
    assert "starredAt" not in session.object("Person#2").preview  # the edge's, not the person's


# -- smaller ones ---------------------------------------------------------------------------------------


async def test_selecting_a_disallowed_mutation_says_so(transport: Transport) -> None:
    session, _, _ = library(transport)
    result = await attempt(session, "selectTools", tools=["Mutation_rateMovie", "Query_books"])
    assert not result.is_error
    assert "Mutation_rateMovie is a mutation the host has not allowed" in result.value
    assert "No tool named" not in result.value
    only = await attempt(session, "selectTools", tools=["Mutation_rateMovie"])
    assert only.is_error and "a mutation the host has not allowed" in only.value["error"]


async def test_an_optional_object_that_is_null_is_an_answer(transport: Transport) -> None:
    session, _, _ = library(transport)
    await call(session, "Query_movieById", id=3)
    result = await call(session, "Movie_sequel")
    assert result == {"result": None, "note": "Movie#1.sequel is null: the API has no Movie there."}
    assert len(session.registry) == 1


async def test_api_messages_end_in_one_full_stop(transport: Transport) -> None:
    """An API stricter than its introspection (a scalar that checks dates) words its own errors."""

    def parse_date(value: Any) -> str:
        if not (isinstance(value, str) and value[:4].isdigit()):
            raise ValueError("Expected a date such as 2024-01-31.")
        return value

    date = GraphQLScalarType("Date", parse_value=parse_date)
    day = GraphQLField(GraphQLString, args={"on": GraphQLArgument(GraphQLNonNull(date))}, resolve=lambda _root, _info, on: on)
    served = GraphQLSchema(GraphQLObjectType("Query", {"day": day}))
    executor = transport.executor(served)
    session = Session(compile_catalogue(build_schema(print_schema(served))), executor)  # as introspected: any string
    session.select(["Query_day"])
    result = await attempt(session, "Query_day", on="soon")
    assert result.is_error and "2024-01-31" in result.value["error"]
    assert ".." not in result.value["error"]


def test_a_doubtful_id_name_takes_any_node_rather_than_refusing_a_good_one() -> None:
    sdl = """
    interface Node { id: ID! }
    type Query { node(id: ID!): Node, project(number: Int!): Project, projectV2(number: Int!): ProjectV2 }
    type Project implements Node { id: ID!, name: String! }
    type ProjectV2 implements Node { id: ID!, title: String! }
    type ProjectV2Item implements Node { id: ID!, title: String! }
    type Issue implements Node { id: ID!, title: String! }
    type User implements Node { id: ID!, login: String! }
    type Mutation {
      addProjectV2ItemById(input: AddProjectV2ItemByIdInput!): ProjectV2Item
      closeProject(projectId: ID!): Project
      updateIssue(input: UpdateIssueInput!): Issue
    }
    input AddProjectV2ItemByIdInput { projectId: ID!, contentId: ID! }
    input UpdateIssueInput { id: ID!, assigneeIds: [ID!], title: String }
    """
    schema = build_schema(sdl)
    dialect = compile_catalogue(schema, relay_ids=True, mutations=True).dialect
    add = schema.type_map["AddProjectV2ItemByIdInput"]
    update = schema.type_map["UpdateIssueInput"]
    close = schema.mutation_type.fields["closeProject"]  # type: ignore[union-attr]
    assert dialect.object_argument(add.fields["projectId"], "projectId") == "Node"  # type: ignore[attr-defined]
    assert dialect.object_argument(close.args["projectId"], "projectId") == "Project"
    assert dialect.object_argument(update.fields["assigneeIds"], "assigneeIds") == "Node"  # type: ignore[attr-defined]
    assert dialect.object_argument(update.fields["id"], "id") == "Node"  # type: ignore[attr-defined]


def test_previews_shrink_step_by_step_and_never_vanish_silently() -> None:
    from dagtools.calls._preview_pages import fit_previews

    previews = {f"Book#{n}": {"title": f"Book {n} " + "x" * 60, "author": "A. Author", "summary": "s" * 300} for n in range(1, 101)}
    shown, note = fit_previews(previews, 4000)
    assert note is not None and len(json.dumps(shown, ensure_ascii=False)) <= 4000
    assert all(list(p) == ["title"] for p in shown.values())
    if len(shown) < len(previews):  # even one short field each is too much: the note says who has none
        assert f"from Book#{len(shown) + 1} on have none here" in note
    assert "Left out: author, summary" in note and "Book_author" in note
    small = {"Book#1": {"title": "Dune"}}
    assert fit_previews(small, 4000) == (small, None)


async def test_a_json_slip_gets_an_example_from_this_api(transport: Transport) -> None:
    session, _, _ = library(transport)
    await call(session, "Query_movieById", id=1)
    result = await session.call_tool(ToolCall(name="Movie_title", arguments='{"Movie": "Movie#1"'))
    assert result.is_error and '{"Movie": "Movie#1"}' in result.value["error"]
    assert "Potato" not in result.value["error"]
