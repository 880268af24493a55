"""Dagger: the `dagger` source finds the session as Dagger's SDKs do, and Dagger's plumbing stays out
of the toolset while `sync` is read when objects are minted."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from graphql import build_schema

from dagtools import ConfigError, LocalExecutor, Session, ToolCall, compile_catalogue, load_schema, open_session
from dagtools.calls._documents import QueryBuilder
from dagtools.load._dagger import dagger_endpoint
from examples.kitchen.api import schema as kitchen
from tests.conftest import shared_schema_path
from tests.servers import serve_asgi

TOKEN = "s3cret-session-token"


class BasicAuth:
    """Answers 401 unless the request carries the session token as basic-auth username, like the engine."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            auth = headers.get(b"authorization", b"").decode()
            self.seen.append(f"{scope['method']} {scope['path']} {auth}")
            expected = "Basic " + base64.b64encode(f"{TOKEN}:".encode()).decode()
            if auth != expected or scope["path"] != "/query":
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await self.app(scope, receive, send)


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[BasicAuth]:
    from strawberry.asgi import GraphQL

    app = BasicAuth(GraphQL(kitchen))
    with serve_asgi(app) as base:
        monkeypatch.setenv("DAGGER_SESSION_PORT", str(urlsplit(base).port))
        monkeypatch.setenv("DAGGER_SESSION_TOKEN", TOKEN)
        monkeypatch.setenv("XDG_CACHE_HOME", "/nonexistent-dagtools-cache")
        yield app


def test_endpoint_from_the_session_variables() -> None:
    url, headers = dagger_endpoint({"DAGGER_SESSION_PORT": "4242", "DAGGER_SESSION_TOKEN": "tok"})
    assert url == "http://127.0.0.1:4242/query"
    assert headers == {"Authorization": "Basic " + base64.b64encode(b"tok:").decode()}


@pytest.mark.parametrize(
    "environ, missing",
    [({}, "DAGGER_SESSION_PORT and DAGGER_SESSION_TOKEN are not set"), ({"DAGGER_SESSION_PORT": "1"}, "DAGGER_SESSION_TOKEN is not set")],
)
async def test_missing_session_variables_are_a_config_error(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], missing: str) -> None:
    monkeypatch.delenv("DAGGER_SESSION_PORT", raising=False)
    monkeypatch.delenv("DAGGER_SESSION_TOKEN", raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError, match=missing):
        await open_session("dagger")


def test_a_port_that_is_not_a_number_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="port number"):
        dagger_endpoint({"DAGGER_SESSION_PORT": "http://x", "DAGGER_SESSION_TOKEN": "t"})


async def test_open_session_on_the_dagger_session(engine: BasicAuth) -> None:
    session = await open_session("dagger", inputs={"Oven": {"field": "oven", "description": "An oven."}})
    try:
        assert session.catalogue.dialect.name == "dagger"
        session.select(["Query_potato", "Potato_peel", "Potato_description"])
        results = await session.call_tools(
            [ToolCall(name="Query_potato", arguments={"variety": "Russet"}), ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"})]
        )
        assert [r.value.get("result") for r in results] == ["Potato#1", "Potato#2"], results
        description = await session.call_tool(ToolCall(name="Potato_description", arguments={}))
        assert description.value == {"result": "an unrinsed, peeled, whole Russet potato"}
    finally:
        await session.executor.aclose()
    expected = "Basic " + base64.b64encode(f"{TOKEN}:".encode()).decode()
    assert engine.seen and all(line == f"POST /query {expected}" for line in engine.seen)


async def test_a_wrong_token_is_refused(engine: BasicAuth, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagtools import DagtoolsError

    monkeypatch.setenv("DAGGER_SESSION_TOKEN", "wrong")
    with pytest.raises(DagtoolsError, match="401"):
        await open_session("dagger")


def test_cli_tools_on_the_dagger_session(engine: BasicAuth, capsys: pytest.CaptureFixture[str]) -> None:
    from dagtools.cli._main import main

    assert main(["tools", "dagger", "--all", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"Potato_peel"' in out and "loadPotatoFromID" not in out


@pytest.mark.public_schemas
@pytest.mark.parametrize("name, loader", [("dagger-v0.19.11.graphqls", "loadContainerFromID"), ("dagger.docs.schema.graphqls", "node")])
def test_dagger_plumbing_stays_out_of_the_catalogue(name: str, loader: str) -> None:
    schema = load_schema(shared_schema_path(name)).schema
    dagger = compile_catalogue(schema)
    plain = compile_catalogue(schema, dialect="plain")
    assert dagger.dialect.name == "dagger"
    identity = dagger.identity("Container")
    assert identity is not None and identity.root_field == loader
    hidden = set(plain.names()) - set(dagger.names())
    assert "Container_id" in hidden and "Container_sync" in hidden and f"Query_{loader}" in hidden
    assert not [n for n in dagger.names() if n.endswith(("_id", "_sync")) or "FromID" in n]
    assert len(dagger) <= len(plain) - 90  # 700 -> 579 and 741 -> 651 tools
    assert "id sync" in QueryBuilder.of(dagger).selection("Container")


SDL = """
scalar ContainerID
type Query { container: Container! loadContainerFromID(id: ContainerID!): Container! }
type Container { id: ContainerID! withExec(args: [String!]!): Container! stdout: String! sync: ContainerID! }
"""


def _container(commands: tuple[str, ...]) -> dict[str, Any]:
    def sync(_info: Any) -> str:
        failed = [c for c in commands if c.startswith("false")]
        if failed:
            raise RuntimeError(f"process {failed[0]!r} exited with 1")
        return "|".join(commands)

    return {
        "id": "|".join(commands),
        "sync": sync,
        "stdout": "\n".join(commands),
        "withExec": lambda _info, args: _container(commands + (" ".join(args),)),
    }


async def test_minting_reads_sync_so_a_failing_pipeline_fails_at_its_call() -> None:
    schema = build_schema(SDL)
    root = {
        "container": lambda _info: _container(()),
        "loadContainerFromID": lambda _info, id: _container(tuple(c for c in id.split("|") if c)),
    }
    session = Session(compile_catalogue(schema, dialect="dagger"), LocalExecutor(schema, root_value=root))
    assert "Container_sync" not in session.catalogue
    session.select(["Query_container", "Container_withExec", "Container_stdout"])
    assert (await session.call_tool(ToolCall(name="Query_container"))).value == {"result": "Container#1"}
    ok = await session.call_tool(ToolCall(name="Container_withExec", arguments={"args": ["echo", "hi"]}))
    assert ok.value == {"result": "Container#2"}
    bad = await session.call_tool(ToolCall(name="Container_withExec", arguments={"args": ["false"]}))
    assert bad.is_error and "exited with 1" in bad.value["error"]
    assert len(session.registry) == 2
    assert (await session.call_tool(ToolCall(name="Container_stdout"))).value == {"result": "echo hi"}
