"""Chains: several field tools in one call and ONE request, each step on what the step before
returned (calls/_chain_calls.py). Measured on the multi-hop SWAPI task ("the homeworlds of a
starship's pilots") over real HTTP on swapi-graphql, through a recording proxy that counts the
requests reaching the server: the fixed toolset through the official `mcp` client, and a session."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from dagtools import ToolCall, open_session
from tests.servers import Recorder, serve_asgi
from tests.thirdparty import swapi_url  # noqa: F401 - fixture

CHAIN = [
    {"tool": "Query_starship", "arguments": {"starshipID": "10"}},
    {"tool": "Starship_pilotConnection"},
    {"tool": "Person_homeworld"},
]
#: The Millennium Falcon's pilots and where each comes from, as swapi-graphql's data says.
HOMEWORLDS = {"Chewbacca": "Kashyyyk", "Han Solo": "Corellia", "Lando Calrissian": "Socorro", "Nien Nunb": "Sullust"}


def _proxy(target: str) -> Any:
    """An ASGI app passing each POST on to `target` (the recorder in front of it counts them)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        from tests.servers import read_body

        body = await read_body(receive)

        def forward() -> tuple[int, bytes]:
            request = urllib.request.Request(target, data=body, headers={"content-type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback only
                    return answer.status, answer.read()
            except urllib.error.HTTPError as error:  # a GraphQL error may come with a 400: passed on as it is
                return error.code, error.read()

        status, payload = await asyncio.to_thread(forward)
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": payload})

    return app


@pytest.fixture
def counted_swapi(swapi_url: str) -> Iterator[tuple[str, Recorder]]:  # noqa: F811
    recorder = Recorder(_proxy(swapi_url))
    with serve_asgi(recorder) as base:
        yield f"{base}/graphql", recorder


def _reads(recorder: Recorder) -> list[Any]:
    return [r.json() for r in recorder.requests if not r.is_introspection]


async def test_swapi_homeworlds_of_a_starships_pilots_in_one_dynamic_call(counted_swapi: tuple[str, Recorder]) -> None:
    url, recorder = counted_swapi
    async with await open_session(url, cache=False) as session:
        before = len(_reads(recorder))
        result = await session.call_tool(ToolCall(name="callChain", arguments={"steps": CHAIN}))
        assert not result.is_error, result.value
        print(json.dumps(result.value, indent=1))
        print(len(result.content.encode()))
        assert len(_reads(recorder)) - before == 1
