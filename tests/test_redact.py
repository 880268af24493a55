"""Credentials in URLs and headers never reach the model, the disk or a log: not in error texts, not
when an API echoes them back, not in the schema cache, not in httpx's request log."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagtools import HttpExecutor, Session, ToolCall, compile_catalogue
from dagtools._errors import ExecutorError, HttpStatusError, SchemaLoadError
from dagtools._redact import redact, redact_json, secrets_of
from dagtools.load._introspect import fetch_schema
from examples.kitchen.api import schema as kitchen_schema
from tests.servers import Fault, FaultServer, Recorder, free_port, read_body, serve_asgi

PASSWORD = "hunter2-pass-word"
TOKEN = "url-token-abcdef123"
BEARER = "bearer-secret-7788"
API_KEY = "api-key-99xx-secret"
SECRETS = (PASSWORD, TOKEN, BEARER, API_KEY)
HEADERS = {"Authorization": f"Bearer {BEARER}", "X-Api-Key": API_KEY}


def with_credentials(url: str) -> str:
    """`url` with a user and password and an access token in its query."""
    return url.replace("http://", f"http://alice:{PASSWORD}@", 1) + f"?access_token={TOKEN}&page=2"


def assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, text


# -- the function ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://user:pw@api.example.com/graphql", "https://[redacted]@api.example.com/graphql"),
        ("GET https://h/graphql?token=t1&page=2", "GET https://h/graphql?token=[redacted]&page=2"),
        (
            "https://h/x?access_token=a&api_key=b&apikey=c&key=d&auth=e&password=f&secret=g&client_secret=h&author=bob",
            "https://h/x?access_token=[redacted]&api_key=[redacted]&apikey=[redacted]&key=[redacted]&auth=[redacted]"
            "&password=[redacted]&secret=[redacted]&client_secret=[redacted]&author=bob",
        ),
        ('{"authorization": "Bearer abc.def-ghi"}', '{"authorization": "Bearer [redacted]"}'),
        ("no credentials here: a & b, x=y", "no credentials here: a & b, x=y"),
    ],
)
def test_credential_shapes_are_redacted(text: str, shown: str) -> None:
    assert redact(text) == shown


def test_known_values_are_redacted_in_every_spelling() -> None:
    secrets = secrets_of({"X-Api-Key": 'k"ey/with+odd', "Accept": "application/json", "X-Team": "abc"}, "https://u:p4ssw0rd@h/")
    assert "application/json" not in secrets  # harmless headers stay readable
    assert "abc" not in secrets  # too short to hide without hiding words
    echoed = 'raw k"ey/with+odd json "k\\"ey/with+odd" url k%22ey%2Fwith%2Bodd and p4ssw0rd'
    assert redact(echoed, secrets) == 'raw [redacted] json "[redacted]" url [redacted] and [redacted]'


def test_only_credential_headers_hide_short_words() -> None:
    secrets = secrets_of({"X-Client": "dagtools", "X-Tenant-Secret": "blue", "X-Customer": "c7f0e9a1b2d34e56"})
    assert redact("dagtools asked blue for c7f0e9a1b2d34e56", secrets) == "dagtools asked [redacted] for [redacted]"


def test_errors_keep_their_json_shape() -> None:
    secrets = secrets_of({"X-Api-Key": "true"})
    error = {"message": "key true refused", "path": ["a", 1], "extensions": {"ok": True, "deep": [[["true"]]]}}
    assert redact_json(error, secrets) == {
        "message": "key [redacted] refused",
        "path": ["a", 1],
        "extensions": {"ok": True, "deep": [[["[redacted]"]]]},
    }
    nested: list[object] = []
    for _ in range(100):
        nested = [nested]
    assert json.dumps(redact_json({"message": "m", "extensions": nested}))  # too deep: cut, not a RecursionError


def test_basic_credentials_are_redacted_decoded_too() -> None:
    secrets = secrets_of({"Authorization": "Basic YWxpY2U6czNjcjN0LXB3"})  # alice:s3cr3t-pw
    assert redact("user alice:s3cr3t-pw, token YWxpY2U6czNjcjN0LXB3", secrets) == "user [redacted], token [redacted]"


# -- error texts the model sees ----------------------------------------------------------------------------


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    with FaultServer(kitchen_schema) as server:
        yield server


async def test_a_url_with_credentials_is_never_shown(fault_server: FaultServer) -> None:
    executor = HttpExecutor(with_credentials(fault_server.url), headers=HEADERS, retries=1, backoff=0.01)
    assert_clean(repr(executor))
    try:
        fault_server.queue(Fault.status_code(500), Fault.status_code(500))
        with pytest.raises(HttpStatusError) as failed:
            await executor.execute("{ potato { variety } }")
        assert_clean(str(failed.value))
        assert "alice:[redacted]@" not in str(failed.value) and "[redacted]@127.0.0.1" in str(failed.value)
        fault_server.queue(Fault.reset(), Fault.reset())
        with pytest.raises(ExecutorError) as reset:
            await executor.execute("{ potato { variety } }")
        assert_clean(str(reset.value))
    finally:
        await executor.aclose()
    down = HttpExecutor(with_credentials(f"http://127.0.0.1:{free_port()}/graphql"), retries=0)
    with pytest.raises(ExecutorError) as refused:
        await down.execute("{ potato { variety } }")
    assert "could not be reached" in str(refused.value)
    assert_clean(str(refused.value))


class Echo:
    """An API that quotes the request's credentials back in its errors, as some do."""

    def __init__(self, status: int) -> None:
        self.status = status

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await read_body(receive)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        echoed = f"refused {headers.get('authorization')} with key {headers.get('x-api-key')} for {scope['query_string'].decode()}"
        body = {"errors": [{"message": echoed, "extensions": {"headers": headers}}]}
        if self.status != 200:
            body = {"message": echoed, "request": {"headers": headers}}
        data = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": self.status, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": data})


@pytest.mark.parametrize("status", [200, 401, 403, 500])
async def test_credentials_an_api_echoes_do_not_reach_the_model(status: int) -> None:
    recorder = Recorder(Echo(status))
    with serve_asgi(recorder) as base:
        executor = HttpExecutor(with_credentials(f"{base}/graphql"), headers=HEADERS, retries=0)
        session = Session(compile_catalogue(kitchen_schema._schema), executor)
        session.select(["Query_potato"])
        result = await session.call_tool(ToolCall(name="Query_potato", arguments={}))
        try:
            if status == 200:
                response = await executor.execute("{ potato { variety } }")
                assert_clean(json.dumps(response.errors))
            else:
                with pytest.raises(HttpStatusError) as failed:
                    await executor.execute("{ potato { variety } }")
                assert_clean(str(failed.value))
                assert_clean(failed.value.body)
        finally:
            await executor.aclose()
    assert recorder.requests[0].headers["x-api-key"] == API_KEY  # the API did get the credentials
    assert result.is_error and "[redacted]" in result.content
    assert_clean(result.content)


# -- the disk and the log ----------------------------------------------------------------------------------


async def test_the_schema_cache_holds_no_credential(kitchen_url: str, tmp_path: Path) -> None:
    loaded = await fetch_schema(with_credentials(kitchen_url), headers=HEADERS, cache_dir=tmp_path)
    assert_clean(loaded.origin)
    files = list(tmp_path.iterdir())
    assert len(files) == 1
    assert_clean(files[0].name)
    entry = files[0].read_text(encoding="utf-8")
    assert_clean(entry)
    assert json.loads(entry)["url"].startswith("http://[redacted]@127.0.0.1:")
    again = await fetch_schema(with_credentials(kitchen_url), headers=HEADERS, cache_dir=tmp_path)  # from the cache
    assert_clean(again.origin)


async def test_a_schema_that_cannot_be_loaded_says_so_without_credentials(tmp_path: Path) -> None:
    with pytest.raises(SchemaLoadError) as failed:
        await fetch_schema(with_credentials(f"http://127.0.0.1:{free_port()}/graphql"), headers=HEADERS, cache_dir=tmp_path)
    assert_clean(str(failed.value))
    recorder = Recorder(Echo(200))
    with serve_asgi(recorder) as base:
        with pytest.raises(SchemaLoadError) as refused:
            await fetch_schema(with_credentials(f"{base}/graphql"), headers=HEADERS, cache_dir=tmp_path)
    assert "refused the introspection query" in str(refused.value)
    assert_clean(str(refused.value))


async def test_the_request_log_holds_no_credential(kitchen_url: str, caplog: pytest.LogCaptureFixture) -> None:
    executor = HttpExecutor(with_credentials(kitchen_url), headers=HEADERS)
    with caplog.at_level(logging.DEBUG):
        try:
            await executor.execute("{ potato { variety } }")
        finally:
            await executor.aclose()
    assert "HTTP Request: POST" in caplog.text  # httpx did log the request
    assert_clean(caplog.text)
