"""The MCP client setups in examples/clients work as written: each is read the way its client reads it
(Claude Desktop, Cursor, VS Code, and the `claude mcp add` line run by bash), its command started with
the official SDK's stdio client, and a tool listed and called. Each comes in two variants: the published
package run by `uvx`, and an installed `dagtools` run by its path (examples/clients/installed/).

Two substitutions only, both forced by running here (tests/clients.py): the local venv's `dagtools` for
the published package and for the placeholder path, and a kitchen API on loopback for api.github.com
that demands the bearer token, so the header's `${GITHUB_TOKEN}` must travel from the client's `env`
through dagtools to the API.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from tests.clients import BY_PATH, CLIENTS, SETUPS, TOKEN, UVX, measured, runnable, variables  # noqa: E402
from tests.clients import guarded_kitchen as kitchen_behind_token  # noqa: E402
from tests.conftest import ROOT  # noqa: E402


@pytest.fixture(scope="module")
def guarded_kitchen() -> Iterator[tuple[str, list[str]]]:
    """The kitchen API on loopback, answering only requests with the bearer token (tests/clients.py)."""
    with kitchen_behind_token() as served:
        yield served


@pytest.mark.parametrize("setup", sorted(SETUPS))
async def test_a_client_setup_starts_dagtools_that_lists_and_calls_tools(
    setup: str, guarded_kitchen: tuple[str, list[str]], tmp_path: Path
) -> None:
    api, seen = guarded_kitchen
    command, args, env = SETUPS[setup](variables(TOKEN))
    if setup.endswith("claude_desktop_config.json"):  # the one a user pastes the token into
        assert env == {"GITHUB_TOKEN": "paste-your-token-here"}
        env = {"GITHUB_TOKEN": TOKEN}
    line = runnable(command, args, api)
    assert "Authorization: Bearer ${GITHUB_TOKEN}" in line, "the token comes from the environment, never the file"
    # The SDK starts the server as a client does: a few safe variables (PATH, HOME, ...) plus `env`.
    params = StdioServerParameters(
        command=line[0], args=line[1:], env=measured({**env, "DAGTOOLS_CACHE_DIR": str(tmp_path)}), cwd=str(tmp_path)
    )
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
    command, args, _ = SETUPS[setup](variables(""))
    line = runnable(command, args, api)
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
    given = variables(TOKEN)
    for name in published:
        command, args, env = SETUPS[name](given)
        by_path, path_args, path_env = SETUPS[f"installed/{name}"](given)
        assert Path(by_path).is_absolute() and by_path == BY_PATH, by_path
        assert [command, *args][:4] == UVX and args[3:] == path_args and env == path_env, name
