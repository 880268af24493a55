"""The MCP client setups in examples/clients, read the way each client reads them, and the loopback API
they are pointed at instead of api.github.com (tests/mcpserver/test_mcp_clients.py says why).

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
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

CLIENTS = ROOT / "examples" / "clients"
DAGTOOLS = str(Path(sys.executable).with_name("dagtools"))
UVX = ["uvx", "--from", "dagtools-graphql", "dagtools"]
#: What the setups that run an installed dagtools say, for the reader to replace with their virtualenv's.
BY_PATH = "/path/to/.venv/bin/dagtools"
GITHUB = "https://api.github.com/graphql"
TOKEN = "test-token-4f1c"


@contextmanager
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


def interpolate(value: str, variables: dict[str, str]) -> str:
    """What the client itself replaces before it starts the server (`${env:X}`, `${input:x}`); anything
    else (`${GITHUB_TOKEN}`) reaches dagtools as written."""
    return re.sub(r"\$\{((?:env|input):[^}]+)\}", lambda m: variables[m.group(1)], value)


def _from_json(name: str, key: str, variables: dict[str, str]) -> tuple[str, list[str], dict[str, str]]:
    config = json.loads((CLIENTS / name).read_text())
    (server,) = config[key].values()
    env = {k: interpolate(v, variables) for k, v in server.get("env", {}).items()}
    return server["command"], [interpolate(a, variables) for a in server["args"]], env


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


def runnable(command: str, args: list[str], api: str) -> list[str]:
    """The setup's command line with the two substitutions of this module's docstring, and nothing else."""
    line = [command, *args]
    if line[0] == BY_PATH:
        rest = line[1:]
    else:
        assert line[:4] == UVX, f"the setup should start dagtools with {' '.join(UVX)} or {BY_PATH}: {line}"
        rest = line[4:]
    assert GITHUB in rest
    return [DAGTOOLS, *[api if a == GITHUB else a for a in rest]]


def variables(token: str) -> dict[str, str]:
    return {"env:GITHUB_TOKEN": token, "input:github-token": token}


def launch_line(setup: str, api: str, token: str = TOKEN) -> tuple[list[str], dict[str, str]]:
    """The command line and environment `setup` starts dagtools with, pointed at `api`, with `token`
    where the user's token goes (pasted into Claude Desktop's file, or taken from the environment)."""
    command, args, env = SETUPS[setup](variables(token))
    if setup.endswith("claude_desktop_config.json"):  # the one a user pastes the token into
        env = {"GITHUB_TOKEN": token}
    return runnable(command, args, api), env


#: What coverage.py's subprocess support (`patch = ["subprocess"]` in pyproject.toml) puts in the test
#: process's environment so that the Python processes it starts are measured too.
COVERAGE_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")


def measured(env: dict[str, str]) -> dict[str, str]:
    """`env` for a process a client starts with only the variables it is given (the SDKs' stdio clients
    pass a few safe ones plus `env`), with coverage's variables added when the test run measures it."""
    return {**env, **{name: os.environ[name] for name in COVERAGE_VARIABLES if name in os.environ}}
