"""A Relay connection answered wrongly gives an error result and mints nothing, in process and over HTTP.

The connection walk reads `nodes`, `pageInfo` and the page's scalars; each case below spoils one of
them in the answer to `Repository_issues`, on the real Relay example API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from dagtools import Response, ToolCall
from tests.kitchen import state
from tests.transports import Transport, call, relay_session


def _connections(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if "pageInfo" in value:
            yield value
        for inner in value.values():
            yield from _connections(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _connections(inner)


def _nodes(change: Callable[[list], Any]) -> Callable[[dict], None]:
    def spoil(connection: dict) -> None:
        connection["nodes"] = change(connection["nodes"])

    return spoil


def _page(key: str, value: Any) -> Callable[[dict], None]:
    def spoil(connection: dict) -> None:
        connection["pageInfo"][key] = value

    return spoil


def _set(key: str, value: Any) -> Callable[[dict], None]:
    def spoil(connection: dict) -> None:
        connection[key] = value

    return spoil


def _each_node(key: str, value: Any) -> Callable[[dict], None]:
    def spoil(connection: dict) -> None:
        for node in connection["nodes"]:
            node[key] = value

    return spoil


CASES: dict[str, Callable[[dict], None]] = {
    "nodes is a string": _set("nodes", "Issue#1"),
    "nodes is an object": _set("nodes", {"a": 1}),
    "a node is a string": _nodes(lambda nodes: [*nodes, "Issue#9"]),
    "a node is a list": _nodes(lambda nodes: [nodes]),
    "pageInfo is a string": _set("pageInfo", "more"),
    "pageInfo is a list": _set("pageInfo", [True, "abc"]),
    "hasNextPage is a string": _page("hasNextPage", "yes"),
    "endCursor is an object": _page("endCursor", {"after": 1}),
    "endCursor is a list": _page("endCursor", ["abc"]),
    "totalCount is a string": _set("totalCount", "five"),
    "totalCount is an object": _set("totalCount", {"n": 5}),
    "connection __typename of another type": _set("__typename", "CommentConnection"),
    "node __typename of another type": _each_node("__typename", "Repository"),
    "node __typename unhashable": _each_node("__typename", ["Issue"]),
    "node id is an object": _each_node("id", {"id": 1}),
    "node has a field Issue lacks": _each_node("stars", 3),
}


class Spoiler:
    """Wraps an executor; while `spoil` is set it changes every connection in the answers."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.spoil: Callable[[dict], None] | None = None

    async def execute(self, document: str, variables: dict[str, Any] | None = None, **options: Any) -> Response:
        response = await self.inner.execute(document, variables, **options)
        if self.spoil is None or response.data is None:
            return response
        for connection in list(_connections(response.data)):
            self.spoil(connection)
        return Response(data=response.data, errors=response.errors)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_a_spoiled_connection_page_gives_an_error_and_mints_nothing(transport: Transport, case: str) -> None:
    session, _, executor = relay_session(transport, relay_ids=False)
    spoiler = Spoiler(executor)
    session.executor = spoiler
    await call(session, "Query_repository", name="engine")
    before = state(session)
    spoiler.spoil = CASES[case]
    result = await session.call_tool(ToolCall(name="Repository_issues", arguments={"first": 2}))
    assert result.is_error, result.value
    assert "schema does not allow" in result.value["error"]
    assert state(session) == before
    spoiler.spoil = None
    assert (await call(session, "Repository_issues", first=2))["result"] == ["Issue#1", "Issue#2"]
