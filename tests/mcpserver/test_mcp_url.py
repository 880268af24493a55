"""`dagtools mcp URL`: an MCP server whose API is a real GraphQL server over HTTP (the kitchen, served by
uvicorn on loopback), driven by the MCP SDK's own client over stdio and over streamable HTTP."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

from dagtools.mcpserver.sessions import SESSION_HEADER  # noqa: E402
from tests.clients import measured  # noqa: E402
from tests.mcpserver.test_mcp import DAGTOOLS, ERAS, ROOT, expected_version, fries_fixed, http_client, strong_key, value  # noqa: E402
from tests.servers import Recorder, Request, free_port, wait_for_port  # noqa: E402

MCP_YAML = str(ROOT / "examples" / "kitchen" / "mcp.yaml")
# The fries task's inputs and output as options, instead of the config file.
FRIES_OPTIONS = [
    "--input",
    "oven=oven # An oven you can use for cooking.",
    "--input",
    "potato=potato # The raw potato to turn into french fries.",
    "--input",
    "sink=sink # A sink for cleaning food.",
    "--input",
    "plate=plate # A plate for serving food.",
    "--output",
    "fries=Plate # The baked french fries, on a plate.",
]


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """A schema cache of this test's own, so no subprocess reads or writes the user's."""
    return tmp_path / "cache"


def subprocess_env(cache_dir: Path) -> dict[str, str]:
    """The environment of a `dagtools mcp` started directly: isolated cache, no ambient API headers."""
    env = {k: v for k, v in os.environ.items() if k not in ("DAGTOOLS_HEADERS", "DAGTOOLS_AUTHORIZATION")}
    env["DAGTOOLS_CACHE_DIR"] = str(cache_dir)
    return env


def stdio(url: str, cache_dir: Path, *extra: str) -> StdioServerParameters:
    # The SDK starts the server with a small safe environment, merged under `env`.
    return StdioServerParameters(
        command=DAGTOOLS, args=["mcp", url, *extra], cwd=str(ROOT), env=measured({"DAGTOOLS_CACHE_DIR": str(cache_dir)})
    )


def api_calls(recorder: Recorder) -> list[Request]:
    """The requests that ran operations on the API, not the one that read its schema."""
    return [r for r in recorder.requests if not r.is_introspection]


class McpHttp:
    """`dagtools mcp URL --transport http` in a subprocess; `.url` is its MCP endpoint."""

    def __init__(self, source: str, cache_dir: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.log = ""
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [DAGTOOLS, "mcp", source, "--transport", "http", "--port", str(self.port), *extra],
            cwd=str(ROOT),
            env={**subprocess_env(cache_dir), **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def __enter__(self) -> McpHttp:
        try:
            wait_for_port(self.port, timeout=30, alive=lambda: self.process.poll() is None)
        except (RuntimeError, TimeoutError):
            self.__exit__()
            raise RuntimeError(f"dagtools mcp did not start: {self.log}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        """Stops the server and keeps what it wrote to stderr (its start-up lines and its log) in `.log`."""
        self.process.terminate()
        try:
            said = self.process.communicate(timeout=10)[1]
        except subprocess.TimeoutExpired:
            self.process.kill()
            said = self.process.communicate()[1]
        self.log = said.decode(errors="replace")


@pytest.fixture
def mcp_http(kitchen_url: str, cache_dir: Path) -> Iterator[McpHttp]:
    """`dagtools mcp <kitchen URL>` over streamable HTTP in fixed mode, the task given as options."""
    with McpHttp(kitchen_url, cache_dir, "--tools", "fixed", *FRIES_OPTIONS) as server:
        yield server


# -- over stdio ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_stdio_fixed_fries_against_the_url(kitchen_server: Recorder, cache_dir: Path, era: str) -> None:
    params = stdio(kitchen_server.url, cache_dir, "--config", MCP_YAML)  # the URL overrides the file's source
    async with Client(params, mode=era) as client:
        assert client.protocol_version == expected_version(era)
        assert "Saved fries = Plate#2" in await fries_fixed(client)
    assert sum(r.is_introspection for r in kitchen_server.requests) == 1
    assert api_calls(kitchen_server) and all(r.method == "POST" for r in kitchen_server.requests)
    assert list(cache_dir.iterdir()), "the schema was not cached in DAGTOOLS_CACHE_DIR"


async def test_stdio_with_input_and_output_options(kitchen_url: str, cache_dir: Path) -> None:
    async with Client(stdio(kitchen_url, cache_dir, *FRIES_OPTIONS), mode="legacy") as client:
        assert "Saved fries = Plate#2" in await fries_fixed(client)


async def test_header_option_reaches_the_api(kitchen_server: Recorder, cache_dir: Path) -> None:
    params = stdio(kitchen_server.url, cache_dir, "--config", MCP_YAML, "--header", "X-Api-Key: secret", "--header", "X-Tenant: kitchen")
    async with Client(params, mode="legacy") as client:
        await client.call_tool("selectTools", {"tools": ["Potato_peel"]})
        peeled = await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}})
        assert value(peeled) == {"result": "Potato#2"}
    introspection = [r for r in kitchen_server.requests if r.is_introspection]
    assert len(introspection) == 1 and api_calls(kitchen_server)
    for request in kitchen_server.requests:  # the schema's introspection and every operation
        assert request.headers.get("x-api-key") == "secret", request.body
        assert request.headers.get("x-tenant") == "kitchen", request.body


# -- over streamable HTTP -----------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_http_fixed_fries_against_the_url(mcp_http: McpHttp, kitchen_server: Recorder, era: str) -> None:
    async with http_client(mcp_http.url, era, key=f"fries-{era}") as client:
        assert client.protocol_version == expected_version(era)
        assert "Saved fries = Plate#2" in await fries_fixed(client)
    assert api_calls(kitchen_server)


@pytest.mark.parametrize("era", ERAS)
async def test_forward_header_passes_only_the_listed_headers(kitchen_server: Recorder, cache_dir: Path, era: str) -> None:
    with McpHttp(kitchen_server.url, cache_dir, "--config", MCP_YAML, "--forward-header", "X-User-Token") as server:
        before = len(kitchen_server.requests)
        headers = {"X-User-Token": "alice-token", "X-Unlisted": "keep-me-here", SESSION_HEADER: strong_key("forward")}
        transport = streamable_http_client(server.url, http_client=create_mcp_http_client(headers=headers))
        async with Client(transport, mode=era) as client:
            await client.call_tool("selectTools", {"tools": ["Potato_peel"]})
            peeled = await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}})
            assert value(peeled) == {"result": "Potato#2"}
    sent = [r for r in kitchen_server.requests[before:] if not r.is_introspection]
    assert sent, "no operation reached the API"
    for request in sent:
        assert request.headers.get("x-user-token") == "alice-token", request.headers
        assert "x-unlisted" not in request.headers, request.headers
    # The schema was read when the server started, before any client: nothing to forward then.
    assert all("x-user-token" not in r.headers for r in kitchen_server.requests[:before])
