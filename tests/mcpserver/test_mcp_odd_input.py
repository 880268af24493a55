"""Text that is not valid Unicode, and the characters that often break on the way (NUL, U+2028), in every
argument of every tool of `dagtools mcp`: launched as clients launch it, over stdio and streamable HTTP,
in both protocol eras, driven by the official MCP client.

The official client cannot send a lone surrogate (it encodes what it sends as UTF-8), so it sends a
stand-in character and the wire puts the surrogate's JSON escape in its place: a filter between the
client and the process over stdio, an HTTP transport over HTTP. The server reads exactly what a client
that writes `json.dumps(..., ensure_ascii=True)` of such a string sends."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import anyio.from_thread
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from dagtools.mcpserver.sessions import SESSION_HEADER  # noqa: E402
from tests.mcpserver.test_mcp import DAGTOOLS, ERAS, KITCHEN, ROOT  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, McpHttp  # noqa: E402

#: Stand-ins the wire turns into lone surrogates: two high halves (never a pair, however they meet) and a
#: low one, which pairs only after a high half, so it is drawn only at the start of a string (see `texts`).
STAND_INS = {"\ue000": "\ud800", "\ue001": "\udbff"}
LOW = "\ue002"
ALL_STAND_INS = {**STAND_INS, LOW: "\udc00"}


def with_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return "".join(ALL_STAND_INS.get(c, c) for c in value)
    if isinstance(value, dict):
        return {with_surrogates(k): with_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_surrogates(v) for v in value]
    return value


def rewritten(line: bytes) -> bytes:
    """One JSON message with its stand-ins put back as lone surrogates, escaped as JSON allows."""
    return json.dumps(with_surrogates(json.loads(line))).encode()


class SurrogateTransport(httpx2.AsyncBaseTransport):
    """Sends what the client posts with its stand-ins turned into lone surrogates."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            body = rewritten(await request.aread())
            headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
            request = httpx2.Request(request.method, request.url, headers=headers, content=body, extensions=request.extensions)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def http_client(url: str, era: str) -> Client:
    import secrets

    http = httpx2.AsyncClient(
        transport=SurrogateTransport(), headers={SESSION_HEADER: secrets.token_hex(16)}, timeout=httpx2.Timeout(30, read=300)
    )
    return Client(streamable_http_client(url, http_client=http), mode=era)


#: Between the stdio client and `dagtools mcp`: every line the client writes, rewritten (`rewritten`).
FILTER = f"""
import json, subprocess, sys
STAND_INS = {ALL_STAND_INS!r}
def with_surrogates(value):
    if isinstance(value, str):
        return "".join(STAND_INS.get(c, c) for c in value)
    if isinstance(value, dict):
        return {{with_surrogates(k): with_surrogates(v) for k, v in value.items()}}
    if isinstance(value, list):
        return [with_surrogates(v) for v in value]
    return value
def rewritten(line):
    return json.dumps(with_surrogates(json.loads(line))).encode()
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE)
for line in sys.stdin.buffer:
    child.stdin.write(rewritten(line) + b"\\n")
    child.stdin.flush()
child.stdin.close()
sys.exit(child.wait())
"""


def stdio_client(era: str, *extra: str) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-c", FILTER, DAGTOOLS, "mcp", *extra], cwd=str(ROOT))
    return Client(params, mode=era)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpHttp]:
    with McpHttp(KITCHEN, tmp_path_factory.mktemp("odd"), "--config", MCP_YAML, "--tools", "fixed") as server:
        yield server


@pytest.fixture(scope="module", params=[f"{t}-{e}" for t in ("stdio", "http") for e in ERAS])
def connected(request: pytest.FixtureRequest, http_server: McpHttp) -> Iterator[tuple[anyio.from_thread.BlockingPortal, Client]]:
    """One client of the launched server for the whole module, kept open in a portal's event loop."""
    transport, era = request.param.split("-")
    with anyio.from_thread.start_blocking_portal() as portal:
        made = stdio_client(era, "--config", MCP_YAML, "--tools", "fixed") if transport == "stdio" else http_client(http_server.url, era)
        made.over_http = transport == "http"  # type: ignore[attr-defined]
        with portal.wrap_async_context_manager(made) as client:
            yield portal, client


#: Every place a string goes in a fixed-mode call: tool names, argument names and values, list items, nested.
POSITIONS: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
    "tool name": lambda s: (s, {}),
    "callTool tool": lambda s: ("callTool", {"tool": s, "arguments": {}}),
    "argument value": lambda s: ("callTool", {"tool": "Query_potato", "arguments": {"variety": s}}),
    "argument name": lambda s: ("callTool", {"tool": "Query_potato", "arguments": {s: "Yukon"}}),
    "nested value": lambda s: ("callTool", {"tool": "Query_potato", "arguments": {"variety": "Yukon", "extra": {"deep": [1, s]}}}),
    "callTool key": lambda s: ("callTool", {"tool": "Query_potato", "arguments": {}, s: True}),
    "selectTools item": lambda s: ("selectTools", {"tools": ["Potato_peel", s]}),
    "selectTools search": lambda s: ("selectTools", {"search": s}),
    "describeTools item": lambda s: ("describeTools", {"tools": [s]}),
}
ODD = ["\x00", "\u2028", "\u2029", "\ufeff", *STAND_INS]
texts = st.builds(
    lambda low, body: (LOW if low else "") + body,
    st.booleans(),
    st.text(alphabet=st.one_of(st.sampled_from(ODD), st.characters(codec="utf-8", exclude_categories=("Cs",))), max_size=12),
)


async def call_within(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    """One call, failed after 20 s: a parse error without an id would otherwise leave the client waiting."""
    with anyio.fail_after(20):
        return await client.call_tool(name, arguments)


def _over_http(client: Client) -> bool:
    return getattr(client, "over_http", False)


def is_invalid(text: str) -> bool:
    return any(c in ALL_STAND_INS for c in text)


@pytest.mark.parametrize("position", list(POSITIONS))
def test_odd_text_in_any_argument_is_a_tool_error_never_a_protocol_error(connected: Any, position: str) -> None:
    portal, client = connected
    if position == "tool name" and _over_http(client) and client.protocol_version != "2025-11-25":
        # 2026-07-28 over HTTP repeats the tool name in an `Mcp-Name` header, as UTF-8: a name that has no UTF-8
        # cannot agree with it, and the SDK answers that the client disagrees with itself before any tool runs.
        pytest.skip("a lone surrogate cannot be in the Mcp-Name header the body's name must match")

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(text=texts)
    @example(text="\ue000")
    @example(text=LOW)
    @example(text="Yukon\x00\u2028")
    def check(text: str) -> None:
        name, arguments = POSITIONS[position](text)
        result = portal.call(call_within, client, name, arguments)  # a JSON-RPC error raises here: that fails the test
        said = result.content[0].text
        if is_invalid(text):
            assert result.is_error and "not valid Unicode" in said and "Nothing was run" in said, said
        else:
            assert "not valid Unicode" not in said, said

    check()
    # Nothing a refused call sent was kept: the session still mints its next potato as Potato#N+1 of its own.
    listed = portal.call(client.call_tool, "selectTools", {})
    assert not listed.is_error, listed.content[0].text


def test_a_refused_call_mints_nothing(http_server: McpHttp) -> None:
    async def run() -> None:
        async with http_client(http_server.url, "auto") as c:
            refused = await c.call_tool("callTool", {"tool": "Query_potato", "arguments": {"variety": "a\ue000"}})
            assert refused.is_error and "arguments.arguments.variety" in refused.content[0].text, refused.content[0].text
            made = await c.call_tool("callTool", {"tool": "Query_potato", "arguments": {"variety": "Yukon"}})
            assert json.loads(made.content[0].text)["result"] == "Potato#2", made.content[0].text

    anyio.run(run)
