"""Loading a schema from servers of every age, and refusals worded by what the server said.

The introspection query is asked as a current server understands it first (deprecated arguments,
`specifiedByURL`, `isRepeatable`), then in ever older forms while the server says it does not know
a field of the introspection types: graphql 14 (the media app's `--old` mode) and graphql 0.4
(swapi-graphql, whose directives have no `locations`) load too. A refusal for any other reason is
reported in the server's words; authentication is named only for a 401 or 403.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from graphql import GraphQLScalarType

from dagtools import HttpExecutor, SchemaLoadError
from dagtools.load._introspect import fetch_schema
from tests.command import dagtools
from tests.servers import Fault, FaultServer


class _Counting(HttpExecutor):
    """An HttpExecutor that keeps every document it sent."""

    def __init__(self, url: str) -> None:
        super().__init__(url, retries=0, timeout=30)
        self.sent: list[str] = []

    async def execute(self, document: str, variables: dict[str, Any] | None = None, **options: Any) -> Any:
        self.sent.append(document)
        return await super().execute(document, variables, **options)


async def _fetch(url: str) -> tuple[Any, list[str]]:
    executor = _Counting(url)
    try:
        loaded = await fetch_schema(url, use_cache=False, executor=executor)
    finally:
        await executor.aclose()
    return loaded, executor.sent


async def test_a_current_server_is_asked_for_deprecated_arguments_and_specified_by(media_url: str) -> None:
    loaded, sent = await _fetch(media_url)
    assert len(sent) == 1
    datetime = loaded.schema.get_type("Datetime")
    assert isinstance(datetime, GraphQLScalarType)
    assert datetime.specified_by_url == "https://datatracker.ietf.org/doc/html/rfc3339"
    genre_name = loaded.schema.query_type.fields["allMovies"].args["genreName"]
    assert genre_name.deprecation_reason == "Use genre."


async def test_a_graphql_14_server_is_asked_again_without_the_fields_it_lacks(media_old_url: str) -> None:
    loaded, sent = await _fetch(media_old_url)
    assert "isRepeatable" in sent[0] and "specifiedByURL" in sent[0] and "includeDeprecated: true" in sent[0].split("args")[1]
    assert len(sent) == 3  # as graphql-js 16 and 15 understand it, refused; then as 14 does
    assert "isRepeatable" not in sent[-1]
    assert {"node", "movieById", "allMovies"} <= set(loaded.schema.query_type.fields)
    assert {d.name for d in loaded.schema.directives} >= {"include", "skip", "deprecated"}


async def test_swapi_graphql_on_graphql_0_4_loads_without_directive_locations(swapi_url: str) -> None:
    loaded, sent = await _fetch(swapi_url)
    assert len(sent) == 4
    assert "locations" not in sent[-1]
    assert {"allStarships", "node", "person"} <= set(loaded.schema.query_type.fields)
    skip = loaded.schema.get_directive("skip")
    assert skip is not None and {location.name for location in skip.locations} == {"FIELD", "FRAGMENT_SPREAD", "INLINE_FRAGMENT"}


def test_dagtools_tools_lists_swapi_graphql(swapi_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "DAGTOOLS_CACHE_DIR": str(tmp_path / "cache")}
    done = dagtools("tools", swapi_url, "--all", "--json", "--format", "mcp", env=env)
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in json.loads(done.stdout)}
    assert {"Query_allStarships", "Query_node", "Starship_costInCredits"} <= names


async def test_a_server_refusing_introspection_is_quoted_and_authentication_is_not_blamed(media_closed_url: str) -> None:
    with pytest.raises(SchemaLoadError) as refused:
        await _fetch(media_closed_url)
    message = str(refused.value)
    assert "GraphQL introspection has been disabled" in message
    assert "load the schema from a file" in message
    assert "authentication" not in message.lower() and "header" not in message.lower()


async def test_a_refusal_not_about_introspection_fields_is_final_and_in_the_servers_words() -> None:
    from examples.kitchen.api import schema

    with FaultServer(schema) as server:
        server.queue(Fault.json_body({"errors": [{"message": "Must provide query string."}]}, status=400))
        with pytest.raises(SchemaLoadError) as refused:
            await _fetch(server.url)
        assert len(server.requests) == 1
    message = str(refused.value)
    assert "Must provide query string" in message and "GraphQL endpoint" in message
    assert "authentication" not in message.lower()


async def test_a_401_still_points_at_the_credentials() -> None:
    from examples.kitchen.api import schema

    with FaultServer(schema) as server:
        server.queue(Fault.status_code(401))
        with pytest.raises(SchemaLoadError, match="Authorization"):
            await fetch_schema(server.url, use_cache=False)
