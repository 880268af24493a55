"""REST tools from a tools config against a real loopback app: path parameters are single segments,
always, and what comes back (errors, bodies, slow or huge answers) is bounded and redacted."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from dagtools import LocalExecutor, RestApi, Session, ToolCall, attach_tools_config, compile_catalogue
from tests.servers import serve_asgi

SECRET_KEY = "rest-key-0123456789"
seen: list[str] = []


async def _account(request: Request) -> JSONResponse:
    seen.append(request.scope["raw_path"].decode())
    return JSONResponse({"account": request.path_params["acct"], "private": True})


async def _order(request: Request) -> JSONResponse:
    seen.append(request.scope["raw_path"].decode())
    return JSONResponse({"account": request.path_params["acct"], "order": request.path_params["order"]})


async def _echo_denied(request: Request) -> JSONResponse:
    """An API that quotes the credential it refused, as some do."""
    return JSONResponse({"detail": f"key {request.headers.get('x-api-key')} may not read this"}, status_code=403)


async def _slow(request: Request) -> StreamingResponse:
    async def trickle():
        for _ in range(30):
            yield b" "
            await asyncio.sleep(1)

    return StreamingResponse(trickle(), media_type="application/json")


async def _huge(request: Request) -> StreamingResponse:
    async def flood():
        for _ in range(64):
            yield b"x" * (1 << 20)

    return StreamingResponse(flood(), media_type="text/plain")


APP = Starlette(
    routes=[
        Route("/accounts/{acct}", _account),
        Route("/accounts/{acct}/orders/{order}", _order),
        Route("/denied/{acct}", _echo_denied),
        Route("/slow/{acct}", _slow),
        Route("/huge/{acct}", _huge),
    ]
)


def entry(name: str, path: str, properties: list[str]) -> dict[str, Any]:
    return {
        "type": "api",
        "function": {
            "name": name,
            "description": name,
            "parameters": {"type": "object", "properties": {p: {"type": "string"} for p in properties}},
        },
        "api": {"name": "accounts", "path": path, "method": "GET"},
    }


CONFIG = [
    entry("GetOrder", "/accounts/{acct}/orders/{order}", ["acct", "order"]),
    entry("Denied", "/denied/{acct}", ["acct"]),
    entry("Slow", "/slow/{acct}", ["acct"]),
    entry("Huge", "/huge/{acct}", ["acct"]),
]


def rest_session(base: str, **options: Any) -> Session:
    from examples.kitchen.api import schema

    session = Session(compile_catalogue(schema._schema), LocalExecutor(schema))
    api = RestApi(base_url=base, headers={"X-Api-Key": SECRET_KEY}, **options)
    attach_tools_config(session, CONFIG, executors={"accounts": api})
    return session


async def call(session: Session, name: str, **arguments: Any):
    return await session.call_tool(ToolCall(name=name, arguments=arguments))


@pytest.fixture(scope="module")
def base():
    with serve_asgi(APP) as url:
        yield url


@pytest.mark.parametrize("order", ["..", ".", "", "a/..", "../alice", "%2e%2e", "..%2f", "%2F", "%252f..", "a\\b", ".%2E"])
async def test_a_path_parameter_never_leaves_its_segment(base: str, order: str) -> None:
    session = rest_session(base)
    seen.clear()
    result = await call(session, "GetOrder", acct="alice", order=order)
    assert result.is_error, result.value
    assert "one segment of the path /accounts/{acct}/orders/{order}" in result.content
    assert seen == []  # refused before anything was sent: /accounts/alice was never reached


async def test_ordinary_values_are_encoded_into_their_segment(base: str) -> None:
    session = rest_session(base)
    seen.clear()
    result = await call(session, "GetOrder", acct="alice", order="o 1?x=..#frag")
    assert not result.is_error, result.value
    assert result.value["result"] == {"account": "alice", "order": "o 1?x=..#frag"}
    assert seen == ["/accounts/alice/orders/o%201%3Fx%3D..%23frag"]
    dots = await call(session, "GetOrder", acct="alice", order="...")  # three dots are a name, not a step up
    assert not dots.is_error and dots.value["result"]["order"] == "..."


async def test_a_lone_surrogate_in_a_path_is_an_error_result(base: str) -> None:
    session = rest_session(base)
    result = await call(session, "GetOrder", acct="alice", order="\ud800")
    assert result.is_error and "not valid Unicode" in result.content


async def test_an_echoed_api_key_is_redacted(base: str) -> None:
    session = rest_session(base)
    result = await call(session, "Denied", acct="alice")
    assert result.is_error and "HTTP 403" in result.content
    assert SECRET_KEY not in result.content and "[redacted]" in result.content


async def test_a_trickling_rest_answer_is_cut_at_the_timeout(base: str) -> None:
    session = rest_session(base, timeout=1.0)
    started = time.monotonic()
    result = await call(session, "Slow", acct="alice")
    assert time.monotonic() - started < 3
    assert result.is_error and "did not answer within 1s" in result.content


async def test_a_huge_rest_answer_is_refused(base: str) -> None:
    session = rest_session(base, max_response_bytes=1 << 20)
    result = await call(session, "Huge", acct="alice")
    assert result.is_error and "than the 1 MB one answer may take" in result.content
