"""A GraphQL server someone else wrote: json-graphql-server (Node), started with npx on loopback."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.command import dagtools
from tests.previews import rows
from tests.servers import free_port, wait_for_port

PACKAGE = "json-graphql-server@3.3.2"
#: npm's words for "the registry could not be reached": then the test cannot run here, which is no failure.
_OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "network")

DB = {
    "posts": [
        {"id": 1, "title": "Lorem Ipsum", "views": 254, "user_id": 123},
        {"id": 2, "title": "Sic Dolor amet", "views": 65, "user_id": 456},
    ],
    "users": [{"id": 123, "name": "John Doe"}, {"id": 456, "name": "Jane Doe"}],
    "comments": [
        {"id": 987, "post_id": 1, "body": "Consectetur adipiscing elit", "date": "2017-07-03"},
        {"id": 995, "post_id": 1, "body": "Nam molestie pellentesque dui", "date": "2017-08-17"},
    ],
}

SCRIPT = {
    "calls": [
        {"tool": "selectTools", "arguments": {"tools": ["Query_allPosts", "Post_User", "User_name", "Post_Comments"]}, "expect": "ok"},
        {"tool": "Query_allPosts", "arguments": {}, "expect": {"result": ["Post#1", "Post#2"]}},
        # the posts page names each post's user (John, then Jane), so Jane, post 2's, is User#2
        {"tool": "Post_User", "arguments": {"Post": "Post#2"}, "expect": {"result": "User#2"}},
        {"tool": "User_name", "arguments": {"User": "User#2"}, "expect": {"result": "Jane Doe"}},
        {"tool": "Post_Comments", "arguments": {"Post": "Post#1"}, "expect": {"result": ["Comment#1", "Comment#2"]}},
        {"tool": "Query_allPosts", "arguments": {"page": "one"}, "expect_error": "page"},
    ],
}


@pytest.fixture(scope="module")
def json_graphql_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start json-graphql-server on a free loopback port; yields its GraphQL URL (it serves at /)."""
    npx = shutil.which("npx")
    if npx is None or shutil.which("node") is None:
        pytest.skip("json-graphql-server needs Node.js: npx/node is not on PATH")
    folder = tmp_path_factory.mktemp("json-graphql-server")
    (folder / "db.json").write_text(json.dumps(DB))
    port = free_port()
    log = (folder / "server.log").open("w+")
    # Its CLI takes the data file, then --port and --host (it listens on localhost:3000 otherwise).
    server = subprocess.Popen(
        [npx, "--yes", PACKAGE, "db.json", "--port", str(port), "--host", "127.0.0.1"],
        cwd=folder,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        try:
            wait_for_port(port, timeout=180, alive=lambda: server.poll() is None)
        except (RuntimeError, TimeoutError) as error:
            log.seek(0)
            output = log.read()[-2000:]
            if server.poll() is not None and any(word in output for word in _OFFLINE):
                pytest.skip(f"npx could not fetch {PACKAGE} (npm registry unreachable): {output[-300:]}")
            pytest.fail(f"json-graphql-server did not start: {error}\n{output}")
        yield f"http://127.0.0.1:{port}/"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # npx runs the server as a child: stop the whole group
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)
        log.close()


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DAGTOOLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DAGTOOLS_HEADERS", raising=False)
    monkeypatch.delenv("DAGTOOLS_AUTHORIZATION", raising=False)
    return tmp_path / "cache"


def test_tools(json_graphql_server: str) -> None:
    done = dagtools("tools", json_graphql_server, "--all", "--json", "--format", "mcp")
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in json.loads(done.stdout)}
    assert {"Query_allPosts", "Query_Post", "Post_User", "Post_Comments", "User_Posts", "Comment_Post"} <= names
    initial = dagtools("tools", json_graphql_server, "--sizes")
    assert initial.returncode == 0, initial.stderr
    assert "2 tools of" in initial.stdout.splitlines()[-1]  # selectTools and callChain


def test_a_script_of_calls(json_graphql_server: str, tmp_path: Path) -> None:
    script = tmp_path / "posts.json"
    script.write_text(json.dumps(SCRIPT))
    started = time.monotonic()
    done = dagtools("call", json_graphql_server, str(script), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    page = rows(lines[1]["result"])  # the foreign key `user_id` gives way to the user's handle and name
    assert page["Post#1"] == {"title": "Lorem Ipsum", "User": "User#1", "id": "1", "views": 254}
    assert page["User#1"]["name"] == "John Doe" and page["User#2"]["name"] == "Jane Doe"
    assert lines[2]["result"]["preview"] == {"name": "Jane Doe", "id": "456"}
    assert lines[-2]["is_error"] is True
    assert lines[-1] == {"outputs": {}}
    assert time.monotonic() - started < 60
