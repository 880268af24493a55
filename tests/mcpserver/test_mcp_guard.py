"""The connection guard of `dagtools mcp` over HTTP (`guarded_protocol`), in this process: uvicorn on
loopback with the guarded protocol and short deadlines, driven over raw sockets that misbehave on purpose.
tests/mcpserver/test_mcp_connections.py checks the same against the `dagtools mcp` command, with its real deadlines."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from dagtools.mcpserver import McpConfig
from dagtools.mcpserver.transport import guarded_protocol
from tests.servers import read_body, serve_asgi

DEADLINE = 0.2  # seconds: header_timeout and body_timeout here


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers every request with the size of its body, once the whole body is in."""
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": str(len(body)).encode()})


@contextmanager
def guarded(**limits: Any) -> Iterator[tuple[str, int]]:
    config = McpConfig(**{"header_timeout": DEADLINE, "body_timeout": DEADLINE, **limits})
    with serve_asgi(app, http=guarded_protocol(config)) as base:
        yield base, int(base.rsplit(":", 1)[1])


def closed_within(sock: socket.socket, seconds: float) -> tuple[float, bytes]:
    """Seconds until the server closed `sock`, and what it sent before (a socket timeout fails the test)."""
    sock.settimeout(seconds)
    start, received = time.monotonic(), b""
    while chunk := sock.recv(4096):
        received += chunk
    return time.monotonic() - start, received


def test_headers_sent_slowly_are_answered_408_and_closed_at_the_deadline():
    with guarded() as (_, port), socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        waited, sent = closed_within(sock, 5)
    assert DEADLINE * 0.5 < waited < DEADLINE + 2, waited
    assert sent.startswith(b"HTTP/1.1 408") and b"header_timeout, 0.2 s" in sent, sent


def test_a_body_shorter_than_announced_is_closed_at_the_deadline_and_a_whole_one_is_served():
    with guarded() as (base, port):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)
            waited, sent = closed_within(sock, 5)
        assert waited < DEADLINE + 2 and sent == b"", sent  # the app read a disconnect: nothing to answer
        assert httpx.post(base, content=b"x" * 100).text == "100"


def test_an_address_holds_at_most_its_connections_and_is_served_again_once_they_close():
    with guarded(max_connections_per_address=2, header_timeout=10) as (base, port):
        time.sleep(0.1)  # the start-up probe's connection (tests/servers.py's wait_for_port) is gone
        held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2)]
        try:
            time.sleep(0.05)  # both are accepted
            with socket.create_connection(("127.0.0.1", port), timeout=5) as extra:
                _, sent = closed_within(extra, 5)
            assert sent.startswith(b"HTTP/1.1 503") and b"retry-after: 5" in sent.lower(), sent
            assert b"max_connections_per_address" in sent
        finally:
            for sock in held:
                sock.close()
        time.sleep(0.05)  # the server sees them go
        assert httpx.post(base, content=b"abc").text == "3"
