"""The third-party servers of tests/thirdparty.py start, answer GraphQL over HTTP, and are what they claim."""

from __future__ import annotations

import httpx
import pytest

from tests.thirdparty import SERVER_VERSIONS


def _post(url: str, query: str, **variables: object) -> httpx.Response:
    return httpx.post(url, json={"query": query, "variables": variables}, timeout=30)


def test_swapi_graphql_serves_its_bundled_data_through_relay_node(swapi_url: str) -> None:
    answer = _post(swapi_url, "query($id: ID!) { node(id: $id) { ... on Person { name } } }", id="cGVvcGxlOjE=").json()
    assert answer == {"data": {"node": {"name": "Luke Skywalker"}}}, SERVER_VERSIONS["swapi-graphql"]


@pytest.mark.parametrize("fixture", ["media_url", "media_old_url"])
def test_media_app_finds_objects_by_node_id_and_by_primary_key(fixture: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue(fixture)
    query = "query($n: ID!) { node(nodeId: $n) { nodeId ... on Movie { id title } } movieById(id: 1) { nodeId } }"
    answer = _post(url, query, n="WyJtb3ZpZXMiLDFd").json()
    assert answer["data"]["node"] == {"nodeId": "WyJtb3ZpZXMiLDFd", "id": 1, "title": "Movie A"}
    assert answer["data"]["movieById"] == {"nodeId": "WyJtb3ZpZXMiLDFd"}


def test_the_old_media_app_refuses_the_modern_introspection_fields(media_old_url: str, media_url: str) -> None:
    query = "{ __schema { directives { name isRepeatable } } }"
    assert "data" in _post(media_url, query).json()
    refused = _post(media_old_url, query)
    assert refused.status_code == 400
    assert "isRepeatable" in refused.json()["errors"][0]["message"]
