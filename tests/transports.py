"""The same test in process and over real HTTP on loopback.

The `transport` fixture (tests/conftest.py, params "local" and "http") hands a test a `Transport`
whose `executor(schema)` is a `RecordingExecutor` around either a `LocalExecutor` on that schema or
an `HttpExecutor` posting to that very schema instance, served by uvicorn on 127.0.0.1. Tests keep
their assertions either way: counting `executor.sent` counts documents, and over HTTP each document
is one POST (no retries; the transport checks the server saw exactly the requests sent), while
counters kept on the schema's store still tell how often a resolver ran.

One `Loopback` server runs for the whole test run: starting and stopping uvicorn costs about a fifth
of a second, against nothing to mount a schema on it. Every executor gets its own path
(`/s1/graphql`, `/s2/graphql`, ...) served by its own app, so no state crosses between tests, and the
path is unmounted when the test ends. It runs through `tests.servers.serve_asgi`, whose TCP socket
keeps Nagle off.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from graphql import GraphQLSchema, graphql

from dagtools import HttpExecutor, LocalExecutor, Session, ToolCall, compile_catalogue
from tests.recording import RecordingExecutor
from tests.servers import Recorder, read_body, serve_asgi

__all__ = ["GraphQLCoreApp", "Loopback", "TRANSPORTS", "Transport"]

TRANSPORTS = ("local", "http")


async def _answer(send: Any, status: int, body: bytes, content_type: str = "application/json") -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class GraphQLCoreApp:
    """ASGI app answering GraphQL POSTs from a plain graphql-core schema, with an optional root value."""

    def __init__(self, schema: GraphQLSchema, *, root_value: Any = None) -> None:
        self.schema = schema
        self.root_value = root_value

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        payload = json.loads(await read_body(receive) or b"{}")
        result = await graphql(
            self.schema,
            payload.get("query", ""),
            root_value=self.root_value,
            variable_values=payload.get("variables"),
            operation_name=payload.get("operationName"),
        )
        answer: dict[str, Any] = {"data": result.data}
        if result.errors:
            answer["errors"] = [error.formatted for error in result.errors]
        await _answer(send, 200, json.dumps(answer).encode())


class Loopback:
    """One uvicorn server on 127.0.0.1 that routes `/sN/...` to the app mounted as N."""

    def __init__(self) -> None:
        self.base = ""
        self._apps: dict[str, Recorder] = {}
        self._numbers = itertools.count(1)

    @classmethod
    @contextmanager
    def serve(cls) -> Iterator[Loopback]:
        loopback = cls()
        with serve_asgi(loopback) as base:
            loopback.base = base
            yield loopback

    def mount(self, schema: Any, *, root_value: Any = None) -> Recorder:
        """Serve `schema` (strawberry, or graphql-core with `root_value`) at a fresh path; returns its recorder."""
        if isinstance(schema, GraphQLSchema):
            app: Any = GraphQLCoreApp(schema, root_value=root_value)
        else:
            from strawberry.asgi import GraphQL

            if root_value is not None:
                raise ValueError("a strawberry schema brings its own root value")
            app = GraphQL(schema)
        prefix = f"/s{next(self._numbers)}"
        recorder = Recorder(app)
        recorder.url = f"{self.base}{prefix}/graphql"
        self._apps[prefix] = recorder
        return recorder

    def unmount(self, recorder: Recorder) -> None:
        self._apps = {prefix: app for prefix, app in self._apps.items() if app is not recorder}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return None
        prefix = "/" + scope["path"].split("/", 2)[1]
        app = self._apps.get(prefix)
        if app is None:
            await read_body(receive)
            return await _answer(send, 404, b"nothing is mounted here", "text/plain")
        await app(scope, receive, send)


class _CountingHttpExecutor(HttpExecutor):
    """An HttpExecutor that counts the documents it was given (tests may clear a recording's list)."""

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self.documents = 0

    async def execute(self, document: str, variables: dict[str, Any] | None = None, **options: Any) -> Any:
        self.documents += 1
        return await super().execute(document, variables, **options)


class Transport:
    """Makes recording executors for one test, in process ("local") or over loopback HTTP ("http")."""

    def __init__(self, name: str, loopback: Loopback | None = None) -> None:
        if name not in TRANSPORTS:
            raise ValueError(f"unknown transport {name!r}")
        if name == "http" and loopback is None:
            raise ValueError("the http transport needs a Loopback server")
        self.name = name
        self.loopback = loopback
        self._made: list[tuple[RecordingExecutor, Recorder | None]] = []

    def __repr__(self) -> str:
        return f"Transport({self.name!r})"

    def executor(self, schema: Any, *, root_value: Any = None) -> RecordingExecutor:
        """A recording executor running documents against this very `schema` instance."""
        recorder: Recorder | None = None
        if self.loopback is None:
            inner: Any = LocalExecutor(schema, root_value=root_value)
        else:
            recorder = self.loopback.mount(schema, root_value=root_value)
            inner = _CountingHttpExecutor(recorder.url, retries=0, timeout=10.0)
        executor = RecordingExecutor(inner)
        self._made.append((executor, recorder))
        return executor

    async def aclose(self) -> None:
        """Close every executor made and unmount its schema; over HTTP, check each document was one request."""
        made, self._made = self._made, []
        mismatched = []
        for executor, recorder in made:
            await executor.aclose()
            if recorder is not None and self.loopback is not None:
                self.loopback.unmount(recorder)
                if len(recorder.requests) != executor.inner.documents:
                    mismatched.append((recorder.url, executor.inner.documents, len(recorder.requests)))
        assert not mismatched, f"documents sent vs HTTP requests received differ: {mismatched}"


def relay_session(transport: Transport, *, relay_ids: bool = True, **options: Any) -> tuple[Session, Any, RecordingExecutor]:
    """A session on a fresh Relay example API with every tool selected; its store shows what ran."""
    from examples.relay.api import make_schema

    api = make_schema()
    executor = transport.executor(api)
    catalogue = compile_catalogue(api._schema, relay_ids=relay_ids, **options)
    session = Session(catalogue, executor)
    session.select(catalogue.names())
    return session, api.store, executor


async def call(session: Session, tool: str, /, **arguments: Any) -> Any:
    """Run one call that must succeed; its result value."""
    result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
    assert not result.is_error, result.value
    return result.value
