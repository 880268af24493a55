"""A hostile or broken GraphQL server over real HTTP on loopback cannot redirect the request elsewhere,
hold a call past its timeout, or make dagtools buffer an answer of any size; what the model is shown
stays a few KB, and text that is not valid Unicode does not crash a request."""

from __future__ import annotations

import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from dagtools import HttpExecutor, Session, ToolCall, compile_catalogue
from dagtools._errors import ExecutorError, TransportError
from examples.kitchen.api import schema as kitchen_schema
from tests.servers import Fault, FaultServer, Recorder, read_body, serve_asgi

QUERY = "{ potato { variety } }"


# -- a raw server that does one thing to every request ---------------------------------------------------


@contextmanager
def raw_server(behave: Callable[[socket.socket, threading.Event], None]) -> Iterator[str]:
    """A loopback HTTP server that reads each request and then hands the socket to `behave`."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    stop = threading.Event()

    def handle(conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            head, _, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
            while len(body) < length:
                body += conn.recv(65536)
            try:
                behave(conn, stop)
            except OSError:
                pass  # the client hung up, as it should

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/graphql"
    finally:
        stop.set()
        listener.close()


def trickle_body(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
    while not stop.is_set():
        conn.sendall(b" ")
        time.sleep(1)


def trickle_head(conn: socket.socket, stop: threading.Event) -> None:
    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
        if stop.is_set():
            return
        conn.sendall(bytes([byte]))
        time.sleep(1)


def flood(megabytes: int, *, announce: bool) -> Callable[[socket.socket, threading.Event], None]:
    """An answer of `megabytes` MB of JSON, sent in 1 MB pieces; `sent` counts what left the server."""
    chunk = b"a" * (1 << 20)
    prefix, suffix = b'{"data": {"potato": {"variety": "', b'"}}}'

    def behave(conn: socket.socket, stop: threading.Event) -> None:
        size = len(prefix) + megabytes * len(chunk) + len(suffix)
        length = f"Content-Length: {size}\r\n" if announce else "Connection: close\r\n"
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{length}\r\n".encode() + prefix)
        for _ in range(megabytes):
            conn.sendall(chunk)
            behave.sent += len(chunk)  # type: ignore[attr-defined]
        conn.sendall(suffix)

    behave.sent = 0  # type: ignore[attr-defined]
    return behave


# -- redirects -------------------------------------------------------------------------------------------


class Redirecting:
    """Serves the kitchen at /graphql; /same redirects there, /away redirects to `elsewhere`."""

    def __init__(self, status: int = 307) -> None:
        from strawberry.asgi import GraphQL

        self.graphql = GraphQL(kitchen_schema)
        self.elsewhere = ""
        self.status = status

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        target = {"/same": "/graphql", "/away": self.elsewhere, "/loop": "/loop"}.get(scope["path"])
        if target is None:
            return await self.graphql(scope, receive, send)
        await read_body(receive)
        await send({"type": "http.response.start", "status": self.status, "headers": [(b"location", target.encode())]})
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture
def two_origins() -> Iterator[tuple[Recorder, Recorder]]:
    """Two kitchen servers on different ports, each recording what it receives."""
    first, second = Recorder(Redirecting()), Recorder(Redirecting())
    with serve_asgi(first) as one, serve_asgi(second) as two:
        first.url, second.url = one, two
        first.app.elsewhere = f"{two}/graphql?stolen=1"
        yield first, second


HEADERS = {"Authorization": "Bearer redirect-token-1234", "X-Api-Key": "redirect-key-5678"}


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_to_another_origin_is_not_followed(two_origins: tuple[Recorder, Recorder], status: int) -> None:
    first, second = two_origins
    first.app.status = status
    executor = HttpExecutor(f"{first.url}/away", headers=HEADERS, retries=2, backoff=0.01)
    try:
        with pytest.raises(ExecutorError) as raised:
            await executor.execute(QUERY)
    finally:
        await executor.aclose()
    text = str(raised.value)
    assert f"redirected (HTTP {status}) to another origin, {second.url}," in text
    assert "point dagtools at that URL" in text
    assert "redirect-token-1234" not in text and "redirect-key-5678" not in text and "stolen" not in text
    assert second.requests == []  # nothing reached the other host: no header, no query, no variables
    assert len(first.requests) == 1  # and a redirect is an answer, not a failure to retry


async def test_a_redirect_within_the_origin_keeps_every_header(two_origins: tuple[Recorder, Recorder]) -> None:
    first, _ = two_origins
    executor = HttpExecutor(f"{first.url}/same", headers=HEADERS)
    try:
        response = await executor.execute("query ($v: String!) { potato(variety: $v) { variety } }", {"v": "Yukon"})
    finally:
        await executor.aclose()
    assert response.data == {"potato": {"variety": "Yukon"}}
    assert [r.path for r in first.requests] == ["/same", "/graphql"]
    final = first.requests[-1]
    assert final.method == "POST" and final.json()["variables"] == {"v": "Yukon"}
    assert final.headers["authorization"] == HEADERS["Authorization"]
    assert final.headers["x-api-key"] == HEADERS["X-Api-Key"]


async def test_a_redirect_loop_ends(two_origins: tuple[Recorder, Recorder]) -> None:
    first, _ = two_origins
    executor = HttpExecutor(f"{first.url}/loop", retries=0)
    try:
        with pytest.raises(ExecutorError, match="redirected more than 5 times"):
            await executor.execute(QUERY)
    finally:
        await executor.aclose()


# -- time: the timeout is a deadline for the whole call --------------------------------------------------


@pytest.mark.parametrize("behave", [trickle_body, trickle_head], ids=["body", "head"])
async def test_a_trickling_server_cannot_hold_a_call_past_its_timeout(behave: Any) -> None:
    with raw_server(behave) as url:
        executor = HttpExecutor(url, timeout=2.0, retries=3, backoff=0.01)
        started = time.monotonic()
        try:
            with pytest.raises(TransportError, match="did not answer within 2s"):
                await executor.execute(QUERY)
        finally:
            await executor.aclose()
        held = time.monotonic() - started
    print(f"a server trickling one byte a second ({behave.__name__}) held a timeout=2 call for {held:.2f}s")
    assert held < 3.0


async def test_retries_and_their_waits_fit_in_the_timeout() -> None:
    with FaultServer(kitchen_schema) as server:
        server.queue(*[Fault.status_code(503, b"busy", Retry_After="10")] * 5)
        executor = HttpExecutor(server.url, timeout=2.0, retries=4, backoff=0.01)
        started = time.monotonic()
        try:
            with pytest.raises(ExecutorError) as raised:
                await executor.execute(QUERY)
        finally:
            await executor.aclose()
    assert time.monotonic() - started < 1.0  # no ten-second wait is started that the deadline would cut
    assert "HTTP 503" in str(raised.value) and "busy" in str(raised.value)
    assert len(server.requests) == 1


# -- size: an answer is read up to a limit ---------------------------------------------------------------


@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "streamed"])
async def test_an_answer_over_the_limit_is_refused_without_reading_it(announce: bool) -> None:
    behave = flood(64, announce=announce)
    with raw_server(behave) as url:
        executor = HttpExecutor(url, max_response_bytes=2 << 20, retries=2)
        try:
            with pytest.raises(ExecutorError) as raised:
                await executor.execute(QUERY)
        finally:
            await executor.aclose()
    assert "answered more than the 2 MB one answer may take" in str(raised.value) and "max_response_bytes" in str(raised.value)
    assert ("(it announced 64 MB)" in str(raised.value)) == announce
    assert "tried" not in str(raised.value)  # the same answer would come again: not retried
    assert behave.sent < 32 << 20  # the client hung up long before the end


async def test_a_200_mb_answer_costs_little_memory() -> None:
    behave = flood(200, announce=False)
    with raw_server(behave) as url:
        executor = HttpExecutor(url)
        tracemalloc.start()
        try:
            with pytest.raises(ExecutorError, match="than the 16 MB one answer may take"):
                await executor.execute(QUERY)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            await executor.aclose()
    print(f"memory peak of a call answered with 200 MB (default limit 16 MB): {peak / 2**20:.1f} MB")
    assert peak < 40 << 20


async def test_an_answer_under_the_limit_is_read() -> None:
    with raw_server(flood(3, announce=True)) as url:
        executor = HttpExecutor(url, max_response_bytes=4 << 20)
        try:
            response = await executor.execute(QUERY)
        finally:
            await executor.aclose()
    assert len(response.data["potato"]["variety"]) == 3 << 20


# -- what the model is shown stays small; text that is not Unicode does not crash ------------------------


async def kitchen_session(url: str) -> Session:
    session = Session(compile_catalogue(kitchen_schema._schema), HttpExecutor(url, retries=0))
    session.select(["Query_potato"])
    return session


async def test_a_huge_error_text_and_an_echoed_argument_are_cut() -> None:
    with FaultServer(kitchen_schema) as server:
        session = await kitchen_session(server.url)
        server.queue(Fault.json_body({"data": None, "errors": [{"message": "bad " * 500_000}]}))
        result = await session.call_tool(ToolCall(name="Query_potato", arguments={"variety": "x" * 1_000_000}))
        await session.executor.aclose()
    assert result.is_error
    assert len(result.content) < 5_000, len(result.content)
    assert "more characters not shown]" in result.content
    assert result.content.startswith('{"error": "The API returned an error for potato(variety: \\"xxx')
    assert "more characters)" in result.content  # the argument is echoed by its start


async def test_a_huge_argument_is_not_echoed_in_the_list_of_objects() -> None:
    with FaultServer(kitchen_schema) as server:
        session = await kitchen_session(server.url)
        result = await session.call_tool(ToolCall(name="Query_potato", arguments={"variety": "y" * 1_000_000}))
        await session.executor.aclose()
    assert not result.is_error and result.value["result"] == "Potato#1"
    assert len(session.registry.get("Potato#1").expression) < 300


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\udc80" * 3])
async def test_a_lone_surrogate_in_a_variable_does_not_crash_the_request(text: str) -> None:
    with FaultServer(kitchen_schema) as server:
        executor = HttpExecutor(server.url, retries=0)
        try:
            response = await executor.execute("query ($v: String!) { potato(variety: $v) { variety } }", {"v": text})
        finally:
            await executor.aclose()
        sent = server.requests[-1].body
        session = await kitchen_session(server.url)
        result = await session.call_tool(ToolCall(name="Query_potato", arguments={"variety": text}))
        await session.executor.aclose()
    assert sent.isascii() and json.loads(sent)["variables"] == {"v": text}  # escaped, not dropped
    assert response.errors or response.data is not None
    assert isinstance(result.value, dict)  # an answer or an error result, never an exception
