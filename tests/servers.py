"""Real servers on loopback for HTTP tests: an ASGI app under uvicorn, and a raw server that misbehaves.

`serve_asgi(app)` runs any ASGI app (a strawberry schema's `strawberry.asgi.GraphQL`) in a background
thread on a free port and yields its base URL once it accepts connections. `Recorder` wraps an app
and keeps the method, path, headers and body of every request. `FaultServer` answers GraphQL from a
strawberry schema, except for the faults queued on it (an HTTP status, a hang, a reset connection, a
body that is not JSON), one per request, so tests see exactly what a broken API does to a session.
"""

from __future__ import annotations

import asyncio
import collections
import json
import socket
import struct
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import uvicorn

__all__ = [
    "Fault",
    "FaultServer",
    "QuickServer",
    "Recorder",
    "Request",
    "free_port",
    "read_body",
    "serve_asgi",
    "serve_schema",
    "wait_for_port",
]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    @property
    def is_introspection(self) -> bool:
        return b"__schema" in self.body


async def read_body(receive: Any) -> bytes:
    """The whole body of an ASGI request."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, *, timeout: float = 10.0, alive: Callable[[], bool] = lambda: True) -> None:
    """Return once something accepts connections on 127.0.0.1:port; raise after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError(f"the server meant for port {port} stopped before it accepted connections")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing accepted connections on 127.0.0.1:{port} within {timeout:g}s")


def forwarding(target: str) -> Callable[..., Awaitable[None]]:
    """An ASGI app passing each POST on to `target` and its answer back (a `Recorder` in front of it
    counts what reaches the server)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
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


class Recorder:
    """ASGI middleware that records every HTTP request before passing it on."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app
        self.requests: list[Request] = []
        self.url = ""  # set by whoever serves it

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        body = await read_body(receive)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        self.requests.append(Request(scope["method"], scope["path"], headers, body))
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


class QuickServer(uvicorn.Server):
    """uvicorn's server, stopped as soon as `stop()` is called.

    uvicorn's own main loop looks at `should_exit` every tenth of a second and its shutdown then sleeps
    another tenth: with a few dozen servers started and stopped by the fixtures of a run, those waits
    were seconds of the fast subset. Here the loop wakes on `stop()` (and once a second, for the Date
    header), and shutdown closes the listeners and idle connections and returns at once: the tests are
    done with the server, and the thread's event loop cancels whatever it still ran."""

    _loop: asyncio.AbstractEventLoop | None = None
    _woken: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._woken, self._loop = asyncio.Event(), asyncio.get_running_loop()
        while not await self.on_tick(0):
            try:
                await asyncio.wait_for(self._woken.wait(), 1.0)
            except asyncio.TimeoutError:
                pass

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()

    def stop(self) -> None:
        """Ask the server to stop (from any thread); the caller joins its thread."""
        self.should_exit = True
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(woken.set)
            except RuntimeError:  # the loop closed meanwhile: the server has stopped already
                pass


@contextmanager
def serve_asgi(app: Any, **options: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread; yields `http://127.0.0.1:PORT`. `options` go to
    `uvicorn.Config` (`http=` a protocol class, say)."""
    # IPPROTO_TCP, not 0: asyncio only turns Nagle off for sockets that say they are TCP, and with it
    # on every answer waits for a delayed ACK (about 40 ms a request).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = QuickServer(uvicorn.Config(app, **{"log_level": "warning", "lifespan": "off", "access_log": False, **options}))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name=f"uvicorn:{port}")
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
        thread.join(10)
        sock.close()


@contextmanager
def serve_schema(schema: Any) -> Iterator[tuple[str, Recorder]]:
    """Serve a strawberry schema at `/graphql`; yields its URL and the recorder of its requests."""
    from strawberry.asgi import GraphQL

    recorder = Recorder(GraphQL(schema))
    with serve_asgi(recorder) as base:
        yield f"{base}/graphql", recorder


# -- a server that misbehaves on request -------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """What the fault server does with one request instead of answering it."""

    kind: str  # "answer", "hang", "reset"
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @classmethod
    def status_code(cls, status: int, body: bytes = b"", **headers: str) -> Fault:
        text = body or f"{status} {HTTPStatus(status).phrase}".encode()
        return cls("answer", status, text, {"Content-Type": "text/plain", **_header_names(headers)})

    @classmethod
    def json_body(cls, value: Any, status: int = 200, **headers: str) -> Fault:
        return cls("answer", status, json.dumps(value).encode(), {"Content-Type": "application/json", **_header_names(headers)})

    @classmethod
    def raw(cls, body: bytes, content_type: str = "text/html") -> Fault:
        return cls("answer", 200, body, {"Content-Type": content_type})

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        return cls("hang", seconds=seconds)

    @classmethod
    def reset(cls) -> Fault:
        return cls("reset")


def _header_names(headers: dict[str, str]) -> dict[str, str]:
    return {name.replace("_", "-"): value for name, value in headers.items()}


class FaultServer:
    """A small HTTP/1.1 server on loopback: GraphQL from a strawberry schema, or the next queued fault."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.faults: collections.deque[Fault] = collections.deque()
        self.requests: list[Request] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True, name="fault-server")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/graphql"

    def queue(self, *faults: Fault) -> None:
        self.faults.extend(faults)

    def __enter__(self) -> FaultServer:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the fault server did not start")
        wait_for_port(self.port)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        tasks: set[asyncio.Task[None]] = set()

        async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            tasks.add(task)
            try:
                await self._serve(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
                pass
            finally:
                tasks.discard(task)
                writer.close()

        server = await asyncio.start_server(connected, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for task in list(tasks):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def read_request(self, reader: asyncio.StreamReader) -> bytes | None:
        """The next request's body (the request is recorded), or None when the client has gone."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append(Request(method, path, headers, body))
        return body

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (body := await self.read_request(reader)) is not None:
            fault = self.faults.popleft() if self.faults else None
            if fault is None:
                status, answer, extra = 200, await self._graphql(body), {"Content-Type": "application/json"}
            elif fault.kind == "hang":
                await asyncio.sleep(fault.seconds)
                return
            elif fault.kind == "reset":
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()  # with a zero linger the peer gets RST, not FIN
                return
            else:
                status, answer, extra = fault.status, fault.body, fault.headers
            phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Unknown"
            head_out = f"HTTP/1.1 {status} {phrase}\r\nContent-Length: {len(answer)}\r\n"
            head_out += "".join(f"{k}: {v}\r\n" for k, v in extra.items()) + "\r\n"
            writer.write(head_out.encode("latin-1") + answer)
            await writer.drain()

    async def _graphql(self, body: bytes) -> bytes:
        payload = json.loads(body or b"{}")
        result = await self.schema.execute(
            payload.get("query", ""), variable_values=payload.get("variables"), operation_name=payload.get("operationName")
        )
        answer: dict[str, Any] = {"data": result.data}
        if result.errors:
            answer["errors"] = [error.formatted for error in result.errors]
        return json.dumps(answer).encode()
