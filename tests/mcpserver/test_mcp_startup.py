"""What `dagtools mcp` says when it starts (on stderr only: stdout is the protocol), what a model is
told when the schema has no API behind it, and the HTTP options it shares with the other commands
(--timeout, --no-cache, --refresh-schema, and --endpoint for a schema file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from dagtools.mcpserver import (
    McpConfig,  # noqa: E402
    McpToolServer,  # noqa: E402
)
from tests.conftest import FORGE, ROOT, shared_schema_path  # noqa: E402
from tests.servers import Fault, FaultServer  # noqa: E402

KITCHEN = f"{ROOT / 'examples' / 'kitchen' / 'api.py'}:schema"
KITCHEN_SDL = str(ROOT / "schemas" / "kitchen.graphql")
DAGTOOLS = str(Path(sys.executable).with_name("dagtools"))


def start(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`dagtools mcp ...` with stdin closed: it prints what it serves, then the client (none) hangs up."""
    return subprocess.run(
        [DAGTOOLS, "mcp", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_stdio_start_says_what_it_serves_on_stderr_and_nothing_on_stdout() -> None:
    run = start(KITCHEN)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    said = run.stderr
    assert said.startswith(f"dagtools mcp: serving {KITCHEN}\n")
    assert "calls go to: this process" in said
    assert "tools: fixed (selectTools, callTool, callChain: for any client)" in said
    assert "save: not offered, no outputs declared (--output NAME:TYPE" in said
    assert "transport: stdio" in said
    assert "schema: 7 object types, 40 fields -> 27 tools" in said and "mutations off" in said
    assert "warning" not in said and "tolerated" not in said


def test_start_names_the_dynamic_mode_and_http_address(tmp_path: Path) -> None:
    from dagtools.mcpserver._banner import describe_server

    config = McpConfig(source=KITCHEN, tools="dynamic", transport="http", host="127.0.0.1", port=8123, auth_token_env="TOKENS")
    said = describe_server(McpToolServer(config))
    assert "tools: dynamic" in said
    assert "transport: streamable HTTP at http://127.0.0.1:8123/mcp, callers need a bearer token from $TOKENS" in said


def test_start_names_save_only_with_outputs_and_says_how_to_declare_them() -> None:
    from dagtools.mcpserver._banner import describe_server

    bare = describe_server(McpToolServer(McpConfig(source=KITCHEN)))
    assert "tools: fixed (selectTools, callTool, callChain: for any client)" in bare
    assert "save: not offered, no outputs declared (--output NAME:TYPE, or outputs: in the config file)" in bare
    with_outputs = describe_server(McpToolServer(McpConfig(source=KITCHEN, outputs={"fries": {"type": "Plate"}})))
    assert "tools: fixed (selectTools, callTool, callChain, save: for any client)" in with_outputs
    assert "save: not offered" not in with_outputs


def test_start_lists_what_was_tolerated_in_the_schema() -> None:
    run = start(str(shared_schema_path(FORGE)))  # a large schema with fields defined twice, as GitHub's published SDL
    assert run.returncode == 0, run.stderr
    said = run.stderr
    assert "tolerated in the schema (" in said and "defined twice; kept the first definition" in said
    assert "-v lists them, --strict refuses them" in said
    assert len([line for line in said.splitlines() if "defined twice" in line]) == 1  # one line, however many problems
    assert len(said.splitlines()) <= 10
    every = start(str(shared_schema_path(FORGE)), "-v")
    problems = [line for line in every.stderr.splitlines() if line.startswith("    - ")]
    assert every.returncode == 0 and len(problems) > 1 and all("tolerated: " not in line for line in problems), every.stderr


def test_a_schema_file_warns_at_start_that_calls_cannot_run() -> None:
    run = start(KITCHEN_SDL)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert "calls go to: nowhere" in run.stderr
    assert "warning: " in run.stderr and "every tool call will fail" in run.stderr
    assert "--endpoint https://HOST/graphql" in run.stderr


async def test_a_model_is_told_plainly_that_a_schema_file_cannot_run_calls() -> None:
    server = McpToolServer(McpConfig(source=KITCHEN_SDL))
    async with Client(server.server) as client:
        selected = await client.call_tool("selectTools", {"tools": ["Query_potato"]})
        assert not selected.is_error
        result = await client.call_tool("callTool", {"tool": "Query_potato", "arguments": {}})
    assert result.is_error
    text = result.content[0].text
    assert "only a schema" in text and "retrying will not help" in text and "tell the user" in text
    assert "try again" not in text and "could not be reached" not in text


async def test_a_session_on_a_schema_file_says_so_without_try_again() -> None:
    from dagtools import ToolCall, compile_catalogue, load_schema
    from dagtools.executors._base import SchemaOnlyExecutor
    from dagtools.session._session import Session

    loaded = load_schema(KITCHEN_SDL)
    session = Session(compile_catalogue(loaded.schema), SchemaOnlyExecutor(loaded.origin))
    await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Query_oven"]}))
    result = await session.call_tool(ToolCall(name="Query_oven", arguments={}))
    assert result.is_error and "try again" not in result.content and KITCHEN_SDL in result.content


async def test_endpoint_runs_the_calls_of_a_schema_file(kitchen_server: Any) -> None:
    server = McpToolServer(McpConfig(source=KITCHEN_SDL, endpoint=kitchen_server.url, inputs={"potato": {"field": "potato"}}))
    async with Client(server.server) as client:
        await client.call_tool("selectTools", {"tools": ["Potato_peel"]})
        result = await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {}})
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text)["result"] == "Potato#2"
    assert kitchen_server.requests, "the calls went to the endpoint"


def test_start_shows_a_url_without_its_credentials(kitchen_server: Any, tmp_path: Path) -> None:
    url = kitchen_server.url.replace("http://", "http://user:hunter2@") + "?token=s3cret"
    run = start(url, "--timeout", "7", "--no-cache", env={"DAGTOOLS_CACHE_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert "hunter2" not in run.stderr and "s3cret" not in run.stderr
    assert "calls go to: http://[redacted]@127.0.0.1:" in run.stderr and "(timeout 7 s)" in run.stderr
    assert "warning" not in run.stderr


def test_no_cache_and_refresh_schema_reach_the_schema_cache(kitchen_server: Any, tmp_path: Path) -> None:
    env = {"DAGTOOLS_CACHE_DIR": str(tmp_path)}

    def introspections() -> int:
        return sum(b"IntrospectionQuery" in r.body for r in kitchen_server.requests)

    assert start(kitchen_server.url, "--no-cache", env=env).returncode == 0
    assert introspections() == 1 and not list(tmp_path.iterdir()), "--no-cache writes no cache"
    assert start(kitchen_server.url, env=env).returncode == 0
    assert introspections() == 2 and list(tmp_path.iterdir())
    assert start(kitchen_server.url, env=env).returncode == 0
    assert introspections() == 2, "a fresh cached schema is not fetched again"
    assert start(kitchen_server.url, "--refresh-schema", env=env).returncode == 0
    assert introspections() == 3


def test_timeout_bounds_the_schema_fetch(tmp_path: Path) -> None:
    from examples.kitchen.api import schema

    with FaultServer(schema) as server:
        server.queue(*[Fault.hang(60)] * 8)
        began = time.monotonic()
        run = start(server.url, "--no-cache", "--timeout", "1", env={"DAGTOOLS_CACHE_DIR": str(tmp_path)}, timeout=60)
        took = time.monotonic() - began
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert took < 20, f"--timeout 1 took {took:.1f} s"


def test_start_says_when_the_server_understood_only_an_older_introspection(tmp_path: Path) -> None:
    """A server that knows no `isRepeatable` is asked again in an older form; the start says so, from
    the cache too."""
    from examples.kitchen.api import schema

    refusal = {"errors": [{"message": 'Cannot query field "isRepeatable" on type "__Directive".'}]}
    env = {"DAGTOOLS_CACHE_DIR": str(tmp_path)}
    with FaultServer(schema) as server:
        server.queue(Fault.json_body(refusal, status=400))
        fetched = start(server.url, env=env)
        cached = start(server.url, env=env)
        asked = len(server.requests)
    older = "the server understood only an older form of the introspection query (as graphql-js 15 servers do)"
    assert fetched.returncode == 0 and older in fetched.stderr, fetched.stderr
    assert cached.returncode == 0 and older in cached.stderr and asked == 2


def test_mcp_options_override_the_config_file(tmp_path: Path) -> None:
    import argparse

    from dagtools.cli._mcp import add_mcp_command, mcp_config_from_args

    config = tmp_path / "mcp.yaml"
    config.write_text(f"source: {KITCHEN_SDL}\ntimeout: 12\ncache: false\nendpoint: http://127.0.0.1:9/graphql\n")
    parser = argparse.ArgumentParser()
    add_mcp_command(parser.add_subparsers())
    from_file = mcp_config_from_args(parser.parse_args(["mcp", "--config", str(config)]))
    assert (from_file.timeout, from_file.cache, from_file.endpoint) == (12, False, "http://127.0.0.1:9/graphql")
    given = mcp_config_from_args(parser.parse_args(["mcp", "--config", str(config), "--timeout", "3", "--refresh-schema"]))
    assert (given.timeout, given.cache) == (3, "refresh")
