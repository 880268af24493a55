"""The MCP client setups in examples/clients work as written: each is read the way its client reads it
(Claude Desktop, Cursor, VS Code, and the `claude mcp add` line run by bash), its command started with
the official SDK's stdio client, and a tool listed and called. Each comes in two variants: the published
package run by `uvx`, and an installed `dagtools` run by its path (examples/clients/installed/).

Two substitutions only, both forced by running here: the local venv's `dagtools` for
`uvx --from dagtools-graphql dagtools` (nothing is installed from the network) and for the placeholder
path `/path/to/.venv/bin/dagtools`, and a kitchen API on loopback for api.github.com. The loopback API
demands the bearer token, so the header's `${GITHUB_TOKEN}` must travel from the client's `env` through dagtools to the API.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from tests.conftest import ROOT  # noqa: E402

CLIENTS = ROOT / "examples" / "clients"
DAGTOOLS = str(Path(sys.executable).with_name("dagtools"))
UVX = ["uvx", "--from", "dagtools-graphql", "dagtools"]
#: What the setups that run an installed dagtools say, for the reader to replace with their virtualenv's.
BY_PATH = "/path/to/.venv/bin/dagtools"
GITHUB = "https://api.github.com/graphql"
TOKEN = "test-token-4f1c"


@pytest.fixture(scope="module")
def guarded_kitchen() -> Iterator[tuple[str, list[str]]]:
    """The kitchen API over HTTP on loopback, answering only requests that carry the bearer token.
    Yields its URL and the Authorization headers it received."""
    from strawberry.asgi import GraphQL

    from examples.kitchen.api import schema
    from tests.servers import serve_asgi

    api = GraphQL(schema)
    seen: list[str] = []

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            authorization = dict(scope["headers"]).get(b"authorization", b"").decode()
            seen.append(authorization)
            if authorization != f"Bearer {TOKEN}":
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"bad credentials"})
                return
        await api(scope, receive, send)

    with serve_asgi(guarded) as base:
        yield f"{base}/graphql", seen


def _interpolate(value: str, variables: dict[str, str]) -> str:
    """What the client itself replaces before it starts the server (`${env:X}`, `${input:x}`); anything
    else (`${GITHUB_TOKEN}`) reaches dagtools as written."""
    return re.sub(r"\$\{((?:env|input):[^}]+)\}", lambda m: variables[m.group(1)], value)


def _from_json(name: str, key: str, variables: dict[str, str]) -> tuple[str, list[str], dict[str, str]]:
    config = json.loads((CLIENTS / name).read_text())
    (server,) = config[key].values()
    env = {k: _interpolate(v, variables) for k, v in server.get("env", {}).items()}
    return server["command"], [_interpolate(a, variables) for a in server["args"]], env


def _from_claude_code(name: str, variables: dict[str, str]) -> tuple[str, list[str], dict[str, str]]:
    """claude-code.sh run by bash, with `claude` standing in as a function that prints its arguments:
    the quoting and expansion are the shell's own."""
    script = (CLIENTS / name).read_text()
    printer = f"claude() {{ {sys.executable} -c 'import json, sys; print(json.dumps(sys.argv[1:]))' \"$@\"; }}"
    shell_env = {**os.environ, "GITHUB_TOKEN": variables["env:GITHUB_TOKEN"]}
    run = subprocess.run(["bash", "-c", f"{printer}\n{script}"], capture_output=True, text=True, env=shell_env, timeout=30, check=True)
    argv = json.loads(run.stdout)
    assert argv[:3] == ["mcp", "add", "github"], argv
    split = argv.index("--")
    options, command = argv[3:split], argv[split + 1 :]
    env: dict[str, str] = {}
    for flag, value in zip(options[::2], options[1::2]):
        assert flag in ("-e", "--env"), options
        key, _, val = value.partition("=")
        env[key] = val
    return command[0], command[1:], env


SETUPS = {
    f"{folder}{name}": setup
    for folder in ("", "installed/")
    for name, setup in {
        "claude_desktop_config.json": lambda v, f=folder: _from_json(f"{f}claude_desktop_config.json", "mcpServers", v),
        "cursor-mcp.json": lambda v, f=folder: _from_json(f"{f}cursor-mcp.json", "mcpServers", v),
        "vscode-mcp.json": lambda v, f=folder: _from_json(f"{f}vscode-mcp.json", "servers", v),
        "claude-code.sh": lambda v, f=folder: _from_claude_code(f"{f}claude-code.sh", v),
    }.items()
}


def _runnable(command: str, args: list[str], api: str) -> list[str]:
    """The setup's command line with the two substitutions of this module's docstring, and nothing else."""
    line = [command, *args]
    if line[0] == BY_PATH:
        rest = line[1:]
    else:
        assert line[:4] == UVX, f"the setup should start dagtools with {' '.join(UVX)} or {BY_PATH}: {line}"
        rest = line[4:]
    assert GITHUB in rest
    return [DAGTOOLS, *[api if a == GITHUB else a for a in rest]]


def _variables(token: str) -> dict[str, str]:
    return {"env:GITHUB_TOKEN": token, "input:github-token": token}


@pytest.mark.parametrize("setup", sorted(SETUPS))
async def test_a_client_setup_starts_dagtools_that_lists_and_calls_tools(
    setup: str, guarded_kitchen: tuple[str, list[str]], tmp_path: Path
) -> None:
    api, seen = guarded_kitchen
    command, args, env = SETUPS[setup](_variables(TOKEN))
    if setup.endswith("claude_desktop_config.json"):  # the one a user pastes the token into
        assert env == {"GITHUB_TOKEN": "paste-your-token-here"}
        env = {"GITHUB_TOKEN": TOKEN}
    line = _runnable(command, args, api)
    assert "Authorization: Bearer ${GITHUB_TOKEN}" in line, "the token comes from the environment, never the file"
    # The SDK starts the server as a client does: a few safe variables (PATH, HOME, ...) plus `env`.
    params = StdioServerParameters(command=line[0], args=line[1:], env={**env, "DAGTOOLS_CACHE_DIR": str(tmp_path)}, cwd=str(tmp_path))
    before = len(seen)
    async with Client(params) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        assert listed[:3] == ["selectTools", "callTool", "callChain"]
        selected = await client.call_tool("selectTools", {"tools": ["Query_potato"]})
        assert not selected.is_error, selected.content[0].text
        result = await client.call_tool("callTool", {"tool": "Query_potato", "arguments": {}})
        assert not result.is_error, result.content[0].text
        assert json.loads(result.content[0].text)["result"] == "Potato#1"
    assert seen[before:] and all(h == f"Bearer {TOKEN}" for h in seen[before:])


@pytest.mark.parametrize("setup", ["claude_desktop_config.json", "cursor-mcp.json", "installed/cursor-mcp.json"])
def test_an_unset_token_stops_the_server_at_start(setup: str, guarded_kitchen: tuple[str, list[str]], tmp_path: Path) -> None:
    """A client that does not pass GITHUB_TOKEN: dagtools says so and exits, nothing is sent literally."""
    api, seen = guarded_kitchen
    command, args, _ = SETUPS[setup](_variables(""))
    line = _runnable(command, args, api)
    environment = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"} | {"DAGTOOLS_CACHE_DIR": str(tmp_path)}
    before = len(seen)
    run = subprocess.run(line, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=environment, timeout=60)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "${GITHUB_TOKEN}, which is not set in the environment" in run.stderr
    assert len(seen) == before, "nothing reached the API"


def test_the_pages_show_the_client_files_as_they_are() -> None:
    """The client setups page quotes each file, and the MCP page the kitchen's config; a quoted block must
    be the file, byte for byte."""
    page = (ROOT / "docs" / "clients.md").read_text()
    for name in sorted(SETUPS):
        text = (CLIENTS / name).read_text()
        assert f"examples/clients/{name}" in page, f"docs/clients.md does not name examples/clients/{name}"
        assert f"\n{text}```" in page, f"docs/clients.md's block for examples/clients/{name} differs from the file"
    kitchen = (ROOT / "examples" / "kitchen" / "mcp.yaml").read_text()
    mcp = (ROOT / "docs" / "mcp.md").read_text()
    assert f"```yaml\n{kitchen}```" in mcp, "docs/mcp.md's block for examples/kitchen/mcp.yaml differs from the file"


def test_each_setup_has_a_variant_that_runs_an_installed_dagtools_by_path() -> None:
    """Until the package is published, `uvx --from dagtools-graphql` cannot start anything: every setup
    has a twin that starts an installed dagtools by an absolute path, with the same arguments and env."""
    published = sorted(name for name in SETUPS if not name.startswith("installed/"))
    assert published and sorted(SETUPS) == sorted([*published, *(f"installed/{n}" for n in published)])
    variables = _variables(TOKEN)
    for name in published:
        command, args, env = SETUPS[name](variables)
        by_path, path_args, path_env = SETUPS[f"installed/{name}"](variables)
        assert Path(by_path).is_absolute() and by_path == BY_PATH, by_path
        assert [command, *args][:4] == UVX and args[3:] == path_args and env == path_env, name
