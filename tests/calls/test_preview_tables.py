"""A page of objects reads as a table: each type's columns said once in a header keyed by the type,
the values equal on every row under `same`, then one row of values per object keyed by its ID; a
mixed page has a header per type; `rows_of` reads a table back; a lone object's preview is a map."""

from __future__ import annotations

import json
from typing import Any

from graphql import GraphQLSchema, build_schema

from dagtools import Session, ToolCall, open_session
from dagtools.calls._preview_pages import rows_of

SDL = """
interface Entry { id: ID! }
type Film implements Entry { id: ID!  title: String!  director: String!  episode: Int!  released: Boolean! }
type Note implements Entry { id: ID!  text: String!  stars: Int! }
type Query {
  films: [Film!]!
  film(id: ID!): Film
  feed: [Entry!]!
}
"""

FILMS = [
    {"id": "1", "title": "A New Hope", "director": "George Lucas", "episode": 4, "released": True},
    {"id": "2", "title": "The Phantom Menace", "director": "George Lucas", "episode": 1, "released": True},
    {"id": "3", "title": "Attack of the Clones", "director": "George Lucas", "episode": 2, "released": True},
]
NOTES = [{"id": "n1", "text": "Seen twice", "stars": 5}, {"id": "n2", "text": "Too long", "stars": 2}]


def _schema() -> GraphQLSchema:
    schema = build_schema(SDL)
    query = schema.query_type
    assert query is not None
    query.fields["films"].resolve = lambda _r, _i: FILMS
    query.fields["film"].resolve = lambda _r, _i, id: next((f for f in FILMS if f["id"] == id), None)
    query.fields["feed"].resolve = lambda _r, _i: [
        {**FILMS[0], "__typename": "Film"},
        *({**n, "__typename": "Note"} for n in NOTES),
        {**FILMS[1], "__typename": "Film"},
    ]
    entry = schema.get_type("Entry")
    entry.resolve_type = lambda value, _i, _t: value["__typename"]  # type: ignore[union-attr]
    return schema


async def _call(session: Session, tool: str, **arguments: Any) -> dict[str, Any]:
    session.select([tool])
    result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
    assert not result.is_error, result.value
    return json.loads(result.content)


async def test_a_page_names_each_column_once_and_says_a_shared_value_once() -> None:
    session = await open_session(_schema())
    page = await _call(session, "Query_films")
    preview = page["preview"]
    assert list(preview) == ["Film", *page["result"]] and len(page["result"]) == 3
    header = preview["Film"]
    assert header["same"] == {"director": "George Lucas", "released": True}  # equal on every row: said once
    assert header["columns"][0] == "title" and {"episode"} <= set(header["columns"])
    assert not {"director", "released"} & set(header["columns"])
    text = json.dumps(page)
    assert text.count('"episode"') == 1 and text.count("George Lucas") == 1  # a name once, not once a row
    for object_id, film in zip(page["result"], FILMS, strict=True):
        row = preview[object_id]
        assert isinstance(row, list) and len(row) == len(header["columns"])
        assert dict(zip(header["columns"], row, strict=True)) == {c: film[c] for c in header["columns"]}


async def test_a_mixed_page_has_a_header_for_each_type_with_its_own_columns() -> None:
    session = await open_session(_schema())
    page = await _call(session, "Query_feed")
    preview = page["preview"]
    assert {k for k in preview if "#" not in k} == {"Film", "Note"}
    films = [i for i in page["result"] if i.startswith("Film#")]
    notes = [i for i in page["result"] if i.startswith("Note#")]
    assert len(films) == 2 and len(notes) == 2
    film_columns = [*preview["Film"]["columns"], *preview["Film"].get("same", {})]
    note_columns = [*preview["Note"]["columns"], *preview["Note"].get("same", {})]
    assert "title" in film_columns and "text" not in film_columns
    assert {"text", "stars"} <= set(note_columns) and "title" not in note_columns
    assert all(len(preview[i]) == len(preview["Film"]["columns"]) for i in films)
    assert all(len(preview[i]) == len(preview["Note"]["columns"]) for i in notes)


async def test_rows_of_reads_a_table_back_as_each_objects_fields() -> None:
    session = await open_session(_schema())
    page = await _call(session, "Query_feed")
    table = rows_of(page["preview"])
    assert set(table) == set(page["result"])
    for object_id, fields in table.items():
        read = session.object(object_id).preview
        assert fields and fields == {name: read[name] for name in fields}, object_id  # the values as read, `same` included
    first, second = page["result"][:2]
    assert table[first]["title"] == "A New Hope" and {"text": "Seen twice", "stars": 5}.items() <= table[second].items()
    assert rows_of({"title": "A New Hope", "episode": 4}) == {}  # a lone object's map is no table


async def test_a_lone_object_preview_stays_a_map_of_its_fields() -> None:
    session = await open_session(_schema())
    film = await _call(session, "Query_film", id="2")
    assert isinstance(film["result"], str) and film["result"].startswith("Film#")
    preview = film["preview"]
    assert preview == {k: FILMS[1][k] for k in preview} and {"title", "director", "episode", "released"} <= set(preview)
    assert not any("#" in k or isinstance(v, dict) and "columns" in v for k, v in preview.items())
