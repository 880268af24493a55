"""A small Star Wars API in this process: the public SWAPI schema with resolvers over a few films,
people and planets, for tasks a model would do on it ("the titles of all films", "Luke's homeworld")."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from graphql import GraphQLSchema, build_schema

__all__ = ["make_swapi_schema"]

_CRAWL = "It is a period of civil war. Rebel spaceships, striking from a hidden base, have won their first victory " * 3
_FILMS = [
    (1, 4, "A New Hope", "George Lucas", "1977-05-25"),
    (2, 5, "The Empire Strikes Back", "Irvin Kershner", "1980-05-17"),
    (3, 6, "Return of the Jedi", "Richard Marquand", "1983-05-25"),
    (4, 1, "The Phantom Menace", "George Lucas", "1999-05-19"),
    (5, 2, "Attack of the Clones", "George Lucas", "2002-05-16"),
    (6, 3, "Revenge of the Sith", "George Lucas", "2005-05-19"),
]


def _id(kind: str, number: int) -> str:
    return base64.b64encode(f"{kind}:{number}".encode()).decode()


def _data() -> dict[str, dict[str, Any]]:
    stamps = {"created": "2014-12-10T14:23:31.880000Z", "edited": "2014-12-20T19:49:45.256000Z"}
    planets = {
        _id("planets", n): {"__typename": "Planet", "id": _id("planets", n), "name": name, "climate": climate, **stamps}
        for n, name, climate in [(1, "Tatooine", "arid"), (2, "Alderaan", "temperate")]
    }
    people = {
        _id("people", n): {
            "__typename": "Person",
            "id": _id("people", n),
            "name": name,
            "birthYear": born,
            "homeworld": planets[_id("planets", world)],
            **stamps,
        }
        for n, name, born, world in [(1, "Luke Skywalker", "19BBY", 1), (5, "Leia Organa", "19BBY", 2)]
    }
    films = {
        _id("films", n): {
            "__typename": "Film",
            "id": _id("films", n),
            "title": title,
            "episodeID": episode,
            "openingCrawl": _CRAWL,
            "director": director,
            "releaseDate": released,
            **stamps,
        }
        for n, episode, title, director, released in _FILMS
    }
    return {**planets, **people, **films}


def _connection(nodes: list[dict[str, Any]], plural: str) -> dict[str, Any]:
    return {
        "totalCount": len(nodes),
        "pageInfo": {"hasNextPage": False, "hasPreviousPage": False, "startCursor": None, "endCursor": None},
        "edges": [{"node": node, "cursor": node["id"]} for node in nodes],
        plural: nodes,
    }


def make_swapi_schema(sdl_path: Path) -> GraphQLSchema:
    """The schema at `sdl_path` (the public SWAPI SDL) with resolvers on its root fields."""
    schema = build_schema(sdl_path.read_text())
    objects = _data()

    def of(typename: str) -> list[dict[str, Any]]:
        return [o for o in objects.values() if o["__typename"] == typename]

    def one(typename: str, kind: str, number_argument: str) -> Any:
        def resolve(_root: Any, _info: Any, id: str | None = None, **arguments: Any) -> Any:
            number = arguments.get(number_argument)
            found = objects.get(id or (_id(kind, int(number)) if number else ""))
            return found if found and found["__typename"] == typename else None

        return resolve

    root = schema.query_type
    assert root is not None
    root.fields["allFilms"].resolve = lambda *_a, **_k: _connection(of("Film"), "films")
    root.fields["allPeople"].resolve = lambda *_a, **_k: _connection(of("Person"), "people")
    root.fields["allPlanets"].resolve = lambda *_a, **_k: _connection(of("Planet"), "planets")
    root.fields["film"].resolve = one("Film", "films", "filmID")
    root.fields["person"].resolve = one("Person", "people", "personID")
    root.fields["planet"].resolve = one("Planet", "planets", "planetID")
    root.fields["node"].resolve = lambda _root, _info, id: objects.get(id)
    return schema
