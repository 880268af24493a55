"""Slow, idle and abandoned HTTP clients of `dagtools mcp`: over raw sockets (which, unlike the official
client, can misbehave on purpose), with the official client where a well-behaved one is needed."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml

pytest.importorskip("mcp")

from tests.mcpserver.test_mcp import KITCHEN, value  # noqa: E402
from tests.mcpserver.test_mcp_security import client, peel, slice_  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, McpHttp  # noqa: E402

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def server(tmp_path: Path, **options: Any) -> McpHttp:
    path = tmp_path / "limits.yaml"
    path.write_text(yaml.safe_dump({**yaml.safe_load(Path(MCP_YAML).read_text()), "source": KITCHEN, **options}))
    return McpHttp(KITCHEN, tmp_path, "--config", str(path))


def closed_within(sock: socket.socket, seconds: float) -> tuple[float, bytes]:
    """Seconds until the server closed `sock`, and what it sent before; fails if it stays open."""
    sock.settimeout(seconds)
    start, received = time.monotonic(), b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        pytest.fail(f"still open after {seconds:g} s; received {received[:200]!r}")
    return time.monotonic() - start, received


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def test_headers_sent_slowly_are_cut_off_at_the_deadline(tmp_path: Path) -> None:
    with server(tmp_path, header_timeout=1) as mcp:
        slow = [connect(mcp.port) for _ in range(20)]
        for sock in slow:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and then nothing, or a byte now and then
        silent = connect(mcp.port)  # connects and never sends a byte
        for _ in range(3):
            time.sleep(0.25)
            for sock in slow:
                try:
                    sock.sendall(b"X")
                except OSError:
                    pass
        for sock in [*slow, silent]:
            took, sent = closed_within(sock, 5)
            assert took < 2, took
            assert sent == b"" or sent.startswith(b"HTTP/1.1 408"), sent[:80]
        assert b"header_timeout" in sent or sent == b""


def test_a_body_shorter_than_announced_is_cut_off_at_the_deadline(tmp_path: Path) -> None:
    with server(tmp_path, body_timeout=1) as mcp:
        sock = connect(mcp.port)
        head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
        sock.sendall(head.encode() + b'{"jsonrpc":')
        took, _ = closed_within(sock, 5)
        assert took < 2.5, took
        chunked = connect(mcp.port)  # a chunk size far larger than what follows
        head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        chunked.sendall(head.encode() + b"fffffff\r\n{")
        took, _ = closed_within(chunked, 5)
        assert took < 2.5, took


def test_an_address_holds_at_most_its_connections(tmp_path: Path) -> None:
    with server(tmp_path, max_connections_per_address=5) as mcp:
        time.sleep(0.3)  # the start-up probe's connection is gone
        held = [connect(mcp.port) for _ in range(5)]
        time.sleep(0.2)
        extra = connect(mcp.port)
        _, sent = closed_within(extra, 5)
        assert sent.startswith(b"HTTP/1.1 503") and b"retry-after" in sent.lower() and b"max_connections_per_address" in sent, sent
        for sock in held:
            sock.close()
        time.sleep(0.3)
        with httpx.Client() as http:  # once they are gone, the address is served again
            assert http.post(mcp.url, json=INITIALIZE, headers=ACCEPT).status_code == 200


async def test_abandoned_handshakes_end_and_a_used_session_stays(tmp_path: Path) -> None:
    with server(tmp_path, max_sessions=3, handshake_timeout=1) as mcp:
        async with client(mcp.url, "legacy") as used:
            assert value(await peel(used)) == {"result": "Potato#2"}
            async with httpx.AsyncClient() as http:
                for _ in range(2):  # initialize, then walk away
                    opened = await http.post(mcp.url, json=INITIALIZE, headers=ACCEPT)
                    assert opened.status_code == 200 and opened.headers.get("mcp-session-id")
                full = await http.post(mcp.url, json=INITIALIZE, headers=ACCEPT)
                assert full.status_code == 503 and int(full.headers["retry-after"]) >= 1
                assert "max_sessions" in json.loads(full.text)["error"]["message"], full.text
                await anyio.sleep(2.5)  # the abandoned ones end; the used one is not abandoned
                again = await http.post(mcp.url, json=INITIALIZE, headers=ACCEPT)
                assert again.status_code == 200, again.text
            assert value(await slice_(used)) == {"result": "Potato#3"}


async def test_an_abandoned_event_stream_ends_and_lets_its_session_go(tmp_path: Path) -> None:
    with server(tmp_path, session_ttl=1) as mcp:
        async with httpx.AsyncClient(timeout=10) as http:
            opened = await http.post(mcp.url, json=INITIALIZE, headers=ACCEPT)
            sid = opened.headers["mcp-session-id"]
            headers = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
            await http.post(mcp.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={**ACCEPT, **headers})
            started = time.monotonic()
            async with http.stream("GET", mcp.url, headers={"Accept": "text/event-stream", **headers}) as stream:
                assert stream.status_code == 200
                try:
                    async for _ in stream.aiter_bytes():
                        pass
                except httpx.HTTPError:
                    pass  # cut short: what matters is that it ended
            assert time.monotonic() - started < 5, "the stream stayed open"
            await anyio.sleep(1.5)  # its session, no longer held open, idles out
            gone = await http.post(mcp.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers={**ACCEPT, **headers})
            assert gone.status_code == 404, gone.text
