"""`dagtools serve`: an example API over HTTP in one command, which the other commands then read as a URL."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import httpx
import pytest

from dagtools.cli._serve import MAX_BODY, graphql_app
from dagtools.examples import KITCHEN
from dagtools.executors import LocalExecutor
from tests.command import ROOT, dagtools
from tests.servers import free_port, wait_for_port


@pytest.fixture
def kitchen_app():
    from dagtools.load._sources import load_schema

    loaded = load_schema(f"{KITCHEN / 'api.py'}:schema")
    return graphql_app(LocalExecutor(loaded.strawberry_schema, validate_documents=True))


async def _client(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


async def test_a_query_is_answered_by_post_and_by_get(kitchen_app):
    async with await _client(kitchen_app) as client:
        posted = await client.post(
            "/graphql", json={"query": "query ($n: String!) { __type(name: $n) { name } }", "variables": {"n": "Potato"}}
        )
        got = await client.get("/graphql", params={"query": "{ __typename }"})
    assert posted.status_code == 200 and posted.json() == {"data": {"__type": {"name": "Potato"}}}
    assert got.json() == {"data": {"__typename": "Query"}}


async def test_a_document_a_person_wrote_is_validated_and_errors_come_back_as_graphql_errors(kitchen_app):
    async with await _client(kitchen_app) as client:
        answer = (await client.post("/graphql", json={"query": "{ noSuchField }"})).json()
    assert answer["data"] is None
    assert "noSuchField" in answer["errors"][0]["message"]


@pytest.mark.parametrize(
    ("method", "kwargs", "status", "says"),
    [
        ("post", {"content": b"not json"}, 400, "not JSON"),
        ("post", {"json": {"variables": {}}}, 400, '"query"'),
        ("post", {"json": {"query": "{ __typename }", "variables": [1]}}, 400, '"variables"'),
        ("post", {"content": b" " * (MAX_BODY + 1)}, 413, "over"),
        ("get", {}, 400, "Send a query"),
        ("get", {"params": {"query": "mutation { __typename }"}}, 405, "POST"),
        ("get", {"params": {"query": "{ __typename }", "variables": "{n:"}}, 400, "variables= is not JSON"),
        ("put", {"content": b"{}"}, 405, "Use POST"),
    ],
)
async def test_a_bad_request_is_refused_with_a_message_that_says_what_to_send(kitchen_app, method, kwargs, status, says):
    async with await _client(kitchen_app) as client:
        response = await client.request(method.upper(), "/graphql", **kwargs)
    assert response.status_code == status
    assert says in response.json()["errors"][0]["message"]


async def test_another_path_says_where_the_endpoint_is(kitchen_app):
    async with await _client(kitchen_app) as client:
        response = await client.post("/elsewhere", json={"query": "{ __typename }"})
    assert response.status_code == 404 and "/graphql" in response.json()["errors"][0]["message"]


def test_a_schema_without_resolvers_is_refused_with_what_to_serve_instead():
    result = dagtools("serve", str(ROOT / "schemas" / "kitchen.graphql"))
    assert result.returncode == 2
    assert "no resolvers" in result.stderr and "file.py:attribute" in result.stderr


@pytest.mark.e2e
def test_dagtools_serve_gives_the_other_commands_a_live_api(tmp_path):
    """As the quickstart has it: `dagtools serve` in one terminal, a URL command in another."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "dagtools.cli", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, timeout=30, alive=lambda: server.poll() is None)
        url = f"http://127.0.0.1:{port}/graphql"
        env = {**__import__("os").environ, "DAGTOOLS_CACHE_DIR": str(tmp_path)}
        result = dagtools("call", url, str(KITCHEN / "fries.yaml"), "--json", env=env)
        assert result.returncode == 0, result.stderr
        records = [json.loads(line) for line in result.stdout.splitlines()]
        assert records[-1] == {"outputs": {"fries": "Plate#2"}}
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=10)
    assert f"serving the kitchen API at http://127.0.0.1:{port}/graphql" in stderr


def test_a_port_in_use_is_said_in_one_line_before_serving_is_announced():
    """The quickstart's `dagtools serve` started twice, or beside another server on 8000: one line with
    what to do, exit 2, never "serving ... at" followed by the web server's own error."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = dagtools("serve", "--port", str(port))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"dagtools: 127.0.0.1:{port} is already in use"), result.stderr
    assert "--port" in result.stderr and "serving" not in result.stderr and "ERROR" not in result.stderr


@pytest.mark.e2e
def test_serve_on_port_0_announces_the_port_it_got(tmp_path):
    """`--port 0` (any free port, as the port messages offer) is announced with the real port, which answers."""
    server = subprocess.Popen([sys.executable, "-m", "dagtools.cli", "serve", "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        announced = server.stderr.readline()
        url = announced.split(" at ", 1)[1].split(" ", 1)[0]
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        assert port > 0, announced
        wait_for_port(port, timeout=30, alive=lambda: server.poll() is None)
        answer = httpx.post(url, json={"query": "{ potato { variety } }"}, timeout=10)
        assert answer.status_code == 200 and answer.json()["data"]["potato"]["variety"]
    finally:
        server.terminate()
        server.communicate(timeout=10)
