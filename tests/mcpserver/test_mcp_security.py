"""`dagtools mcp` over streamable HTTP as untrusted callers see it, driven by the MCP SDK's own client:
who shares a session with whom, quotas per caller, forwarded credentials, bearer tokens and the
protected-resource metadata, and Host/Origin checks beyond loopback."""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

from dagtools._errors import ConfigError  # noqa: E402
from dagtools.cli._main import main  # noqa: E402
from dagtools.mcpserver import (
    McpConfig,  # noqa: E402
    McpToolServer,  # noqa: E402
)
from dagtools.mcpserver.sessions import SESSION_HEADER, SESSION_META_KEY  # noqa: E402
from tests.mcpserver.test_mcp import ERAS, KITCHEN, ROOT, strong_key, value  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, McpHttp  # noqa: E402
from tests.servers import Recorder, free_port, wait_for_port  # noqa: E402

ALICE = "alice-" + "a" * 8 + "0123456789abcdef"
BOB = "bob-" + "b" * 8 + "0123456789abcdef"
MALLORY = "mallory-" + "m" * 8 + "0123456789abcdef"
TOKENS = f"alice:{ALICE}, bob:{BOB} mallory:{MALLORY}"


def client(url: str, era: str = "auto", **headers: str) -> Client:
    """An SDK client over streamable HTTP whose every request carries `headers` (mutable through `.http`)."""
    http = create_mcp_http_client(headers=headers or None)
    made = Client(streamable_http_client(url, http_client=http), mode=era)
    made.http = http  # type: ignore[attr-defined]
    return made


def bearer(token: str, **headers: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **headers}


async def peel(c: Client, potato: str = "Potato#1", meta: dict[str, Any] | None = None) -> Any:
    """Select Potato_peel and Potato_slice in fixed mode and peel `potato`, in one session (named by `meta` if given)."""
    await c.call_tool("selectTools", {"tools": ["Potato_peel", "Potato_slice"]}, meta=meta)  # type: ignore[arg-type]
    return await c.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": potato}}, meta=meta)  # type: ignore[arg-type]


async def slice_(c: Client, potato: str = "Potato#2", meta: dict[str, Any] | None = None) -> Any:
    """Slice `potato` without selecting anything: only works in the session that `peel` ran in."""
    arguments = {"tool": "Potato_slice", "arguments": {"Potato": potato, "shape": "STICKS"}}
    return await c.call_tool("callTool", arguments, meta=meta)  # type: ignore[arg-type]


# -- item: no two callers share a session by accident --------------------------------------------------------


async def test_keyless_clients_with_one_name_and_address_never_share_a_session(kitchen_url: str, tmp_path: Path) -> None:
    with McpHttp(kitchen_url, tmp_path, "--config", MCP_YAML) as server:
        async with client(server.url) as first, client(server.url) as second:
            answered: list[str] = []

            async def record(response: httpx.Response) -> None:
                answered.append(response.headers.get(SESSION_HEADER, ""))

            first.http.event_hooks["response"].append(record)  # type: ignore[attr-defined]
            selected = await first.call_tool("selectTools", {"tools": ["Potato_peel", "Potato_slice"]})
            issued = (selected.meta or {}).get(SESSION_META_KEY)
            assert isinstance(issued, str) and len(issued) >= 32, selected.meta  # a key issued to the keyless client
            assert issued in answered  # also in a response header, for clients that keep headers
            mine = {SESSION_META_KEY: issued}
            peeled = await first.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}}, meta=mine)  # type: ignore[arg-type]
            assert value(peeled) == {"result": "Potato#2"}
            # Same client name, same address, no key: a session of its own, which holds no Potato#2.
            theirs = await second.call_tool("callTool", {"tool": "Potato_slice", "arguments": {"Potato": "Potato#2", "shape": "STICKS"}})
            assert theirs.is_error, theirs.content[0].text
            assert (theirs.meta or {}).get(SESSION_META_KEY) not in (None, issued)
            # The issued key, sent back, is the first client's session still.
            assert value(await slice_(first, meta=mine)) == {"result": "Potato#3"}


async def test_guessable_keys_are_refused_and_change_nothing(kitchen_url: str, tmp_path: Path) -> None:
    with McpHttp(kitchen_url, tmp_path, "--config", MCP_YAML) as server:
        for weak in ("alice", "0" * 40, "session-1"):
            async with client(server.url, **{SESSION_HEADER: weak}) as c:
                refused = await c.call_tool("selectTools", {"tools": ["Potato_peel"]})
                assert refused.is_error and "32 random characters" in refused.content[0].text, refused.content[0].text
        key = strong_key("ok")
        async with client(server.url, **{SESSION_HEADER: key}) as c:
            assert value(await peel(c)) == {"result": "Potato#2"}
        async with client(server.url, **{SESSION_HEADER: key}) as c:  # the same key later: the same session
            assert value(await slice_(c)) == {"result": "Potato#3"}


async def test_a_key_reaches_its_session_only_with_the_credentials_it_was_opened_with(kitchen_server: Recorder, tmp_path: Path) -> None:
    key = strong_key("shared")
    with McpHttp(kitchen_server.url, tmp_path, "--config", MCP_YAML, "--forward-header", "X-User-Token") as server:
        async with client(server.url, **{SESSION_HEADER: key, "X-User-Token": "alice-token"}) as alice:
            assert value(await peel(alice)) == {"result": "Potato#2"}
        async with client(server.url, **{SESSION_HEADER: key, "X-User-Token": "bob-token"}) as bob:
            assert (await slice_(bob)).is_error


async def test_an_authenticated_caller_keeps_its_session_without_a_key_and_no_one_else_reaches_it(kitchen_url: str, tmp_path: Path) -> None:
    with McpHttp(kitchen_url, tmp_path, "--config", MCP_YAML, "--auth-token-env", "MCP_TOKENS", env={"MCP_TOKENS": TOKENS}) as server:
        async with client(server.url, **bearer(ALICE)) as alice:
            assert value(await peel(alice)) == {"result": "Potato#2"}
        async with client(server.url, **bearer(ALICE)) as alice_again:
            assert value(await slice_(alice_again)) == {"result": "Potato#3"}
        async with client(server.url, **bearer(BOB)) as bob:
            assert (await slice_(bob)).is_error
        # A short key is fine for an authenticated caller: it is bound to the caller.
        async with client(server.url, **bearer(BOB, **{SESSION_HEADER: "work"})) as bob_work:
            assert value(await peel(bob_work)) == {"result": "Potato#2"}
        async with client(server.url, **bearer(ALICE, **{SESSION_HEADER: "work"})) as alice_work:
            assert (await slice_(alice_work)).is_error


# -- item: quotas per caller ----------------------------------------------------------------------------------


async def test_a_flood_of_sessions_from_one_caller_leaves_a_victims_session_intact(kitchen_url: str, tmp_path: Path) -> None:
    config = tmp_path / "limits.yaml"
    config.write_text(yaml.safe_dump({**yaml.safe_load(Path(MCP_YAML).read_text()), "max_sessions": 7, "max_sessions_per_caller": 5}))
    config_source = str(ROOT / "examples" / "kitchen" / "api.py") + ":schema"
    extra = ("--config", str(config), "--auth-token-env", "MCP_TOKENS")
    with McpHttp(config_source, tmp_path, *extra, env={"MCP_TOKENS": TOKENS}) as server:
        victim_key = {SESSION_META_KEY: "mine"}
        async with client(server.url, **bearer(ALICE)) as alice:
            assert value(await peel(alice, meta=victim_key)) == {"result": "Potato#2"}
        admitted, refused = [], []
        async with client(server.url, **bearer(MALLORY)) as mallory:
            for n in range(12):
                meta = {SESSION_META_KEY: f"flood-{n}"}
                try:
                    flooded = await mallory.call_tool("selectTools", {"tools": ["Potato_peel"]}, meta=meta)  # type: ignore[arg-type]
                except Exception as error:  # 503: this caller holds its most
                    refused.append(str(error))
                else:
                    assert not flooded.is_error, flooded.content[0].text
                    admitted.append(meta)
            # At most 5 (the client's own tools/list may hold one of them, under Mallory's keyless session).
            assert 4 <= len(admitted) <= 5 and len(refused) == 12 - len(admitted), (len(admitted), refused[:1])
            assert "max_sessions_per_caller" in refused[0], refused[0]
            # Mallory's flood pushed out no one, not even Mallory's own first session.
            oldest = await mallory.call_tool("callTool", {"tool": "Potato_peel", "arguments": {}}, meta=admitted[0])  # type: ignore[arg-type]
            assert not oldest.is_error and "stays selected" not in oldest.content[0].text, oldest.content[0].text
        async with client(server.url, **bearer(ALICE)) as alice:
            assert value(await slice_(alice, meta=victim_key)) == {"result": "Potato#3"}
        # Alice 2 (keyed, and keyless for her client's tools/list), Mallory 5: the server is full. Bob is
        # refused, and no one loses a session.
        async with client(server.url, **bearer(BOB)) as bob:
            with pytest.raises(Exception, match="the most it keeps"):
                await bob.call_tool("selectTools", {"tools": ["Potato_peel"]})
        async with client(server.url, **bearer(ALICE)) as alice:
            assert value(await slice_(alice, meta=victim_key)) == {"result": "Potato#3"}


# -- item: forwarded credentials, per request -----------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_each_request_goes_upstream_with_its_own_forwarded_token_or_none(kitchen_server: Recorder, tmp_path: Path, era: str) -> None:
    key = strong_key("forwarding")
    with McpHttp(kitchen_server.url, tmp_path, "--config", MCP_YAML, "--forward-header", "X-User-Token") as server:
        async with client(server.url, era, **{SESSION_HEADER: key}) as c:
            sent: list[str | None] = []
            for token in ("alice-token", "bob-token", None, "alice-token"):
                if token is None:
                    c.http.headers.pop("X-User-Token", None)  # type: ignore[attr-defined]
                else:
                    c.http.headers["X-User-Token"] = token  # type: ignore[attr-defined]
                before = len(kitchen_server.requests)
                result = await peel(c)
                assert not result.is_error, result.content[0].text
                calls = [r for r in kitchen_server.requests[before:] if not r.is_introspection]
                assert calls, "no operation reached the API"
                sent += list({r.headers.get("x-user-token") for r in calls})
            assert sent == ["alice-token", "bob-token", None, "alice-token"]


# -- item: bearer tokens, metadata, DNS rebinding, refusing to be open beyond loopback ------------------------


async def test_bearer_token_is_required_and_discoverable(kitchen_url: str, tmp_path: Path) -> None:
    with McpHttp(kitchen_url, tmp_path, "--config", MCP_YAML, "--auth-token-env", "MCP_TOKENS", env={"MCP_TOKENS": TOKENS}) as server:
        base = server.url.removesuffix("/mcp")
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        async with httpx.AsyncClient() as http:
            anonymous = await http.post(server.url, json=body)
            assert anonymous.status_code == 401
            challenge = anonymous.headers["www-authenticate"]
            assert challenge.startswith("Bearer ") and f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge
            wrong = await http.post(server.url, json=body, headers=bearer("not-a-token-of-this-server"))
            assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
            metadata = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
            assert metadata["resource"] == server.url and metadata["bearer_methods_supported"] == ["header"]
            assert ALICE not in anonymous.text + wrong.text + json.dumps(metadata)
        for era in ERAS:
            async with client(server.url, era, **bearer(ALICE, **{SESSION_HEADER: f"fries-{era}"})) as alice:
                assert value(await peel(alice)) == {"result": "Potato#2"}


async def test_handshake_sessions_belong_to_the_caller_that_opened_them(kitchen_url: str, tmp_path: Path) -> None:
    with McpHttp(kitchen_url, tmp_path, "--config", MCP_YAML, "--auth-token-env", "MCP_TOKENS", env={"MCP_TOKENS": TOKENS}) as server:
        async with client(server.url, "legacy", **bearer(ALICE)) as alice:
            assert value(await peel(alice)) == {"result": "Potato#2"}
            alice.http.headers["Authorization"] = f"Bearer {BOB}"  # type: ignore[attr-defined]
            with pytest.raises(Exception, match="(?i)session"):
                await slice_(alice)
            alice.http.headers["Authorization"] = f"Bearer {ALICE}"  # type: ignore[attr-defined]


def test_refuses_to_serve_beyond_loopback_without_auth(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", KITCHEN, "--transport", "http", "--host", "0.0.0.0"]) == 2
    assert "--auth-token-env" in capsys.readouterr().err
    assert main(["mcp", KITCHEN, "--transport", "http", "--host", "0.0.0.0", "--auth-token-env", "DAGTOOLS_TEST_UNSET"]) == 2
    assert "DAGTOOLS_TEST_UNSET" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="X-Api-Token"):  # the server's own token must never reach the API
        McpConfig(source=KITCHEN, auth_token_env="MCP_TOKENS", forward_headers=("authorization",))


@contextmanager
def serve(server: McpToolServer) -> Iterator[str]:
    """`server.http_app()` with its lifespan, by uvicorn on 127.0.0.1, whatever address its config names."""
    import uvicorn

    port = free_port()
    runner = uvicorn.Server(uvicorn.Config(server.http_app(), host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        wait_for_port(port, timeout=10, alive=thread.is_alive)
        while not runner.started:
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        runner.should_exit = True
        thread.join(10)


async def test_host_and_origin_are_checked_when_bound_beyond_loopback() -> None:
    config = McpConfig(source=KITCHEN, host="0.0.0.0", allow_unauthenticated=True, allowed_hosts=("mcp.example.test",))
    with serve(McpToolServer(config)) as url:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as http:
            rebound = await http.post(url, json=body, headers={**headers, "Host": "attacker.example"})
            assert rebound.status_code == 421
            cross = await http.post(url, json=body, headers={**headers, "Host": "mcp.example.test", "Origin": "http://attacker.example"})
            assert cross.status_code == 403
            allowed = await http.post(url, json=body, headers={**headers, "Host": "mcp.example.test"})
            assert allowed.status_code not in (403, 421)


# -- memory: a closed client's arguments go with its session -------------------------------------------------


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


async def test_large_arguments_are_released_when_the_session_closes(tmp_path: Path) -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("reads the server's resident memory from /proc, which this system does not have")
    big = "x" * (3 * 1024 * 1024)

    async def send_large_arguments() -> None:
        async with client(server.url, "legacy") as c:
            for n in range(10):
                note = big + str(n)
                result = await c.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1", "note": note}})
                assert result.is_error

    with McpHttp(KITCHEN, tmp_path, "--config", MCP_YAML) as server:
        async with client(server.url, "legacy") as warm:  # imports, caches and the first session
            await warm.call_tool("selectTools", {})
        before = rss_mb(server.process.pid)
        async with anyio.create_task_group() as clients:
            clients.start_soon(send_large_arguments)
            clients.start_soon(send_large_arguments)
        # The SDK ends a closed session's task shortly after the client's DELETE: give it 10 s.
        deadline = time.monotonic() + 10
        while (retained := rss_mb(server.process.pid) - before) >= 15 and time.monotonic() < deadline:
            await anyio.sleep(0.2)
    assert retained < 15, f"{retained:.0f} MB of the 60 MB of arguments stayed after both clients closed"


# -- bearer tokens are read one way only, and never shown ----------------------------------------------------


def test_token_entries_are_unambiguous_and_no_error_shows_a_token() -> None:
    from dagtools.mcpserver.gate import BearerTokens

    padded = base64.b64encode(b"a token of twenty bytes!!").decode()  # ends in '='
    assert padded.endswith("=")
    named = BearerTokens.from_env("T", {"T": f"{padded} carol:{padded[::-1]}z"})
    assert named.caller(padded) is not None and named.caller(padded).startswith("token-")  # type: ignore[union-attr]
    assert named.caller(padded[::-1] + "z") == "carol"
    secret = "c2VjcmV0LXRva2VuLXZhbHVl"
    for value_, says in [
        (f"alice={secret}", "NAME:TOKEN"),  # the old form: refused, not read as a token nor as a name
        (f"{secret}==x", "NAME:TOKEN"),
        (f"al/ice:{secret}", "NAME of 1 to 64"),
        ("dave:", "no token after the colon"),
        (f"erin:{secret[:10]}", "shorter than 16"),
        (secret[:12] + "==", "shorter than 16"),
        (f"{secret} {secret}", "given twice"),
    ]:
        with pytest.raises(ConfigError, match=says) as refused:
            BearerTokens.from_env("T", {"T": value_})
        assert secret[:8] not in str(refused.value), str(refused.value)


async def test_a_base64_token_ending_in_padding_authenticates_over_http(kitchen_url: str, tmp_path: Path) -> None:
    token = base64.b64encode(secrets.token_bytes(31)).decode()
    assert token.endswith("=")
    tokens = f"frank:{token} {ALICE}"
    with McpHttp(kitchen_url, tmp_path, "--config", MCP_YAML, "--auth-token-env", "MCP_TOKENS", env={"MCP_TOKENS": tokens}) as server:
        async with client(server.url, **bearer(token)) as frank:
            assert value(await peel(frank)) == {"result": "Potato#2"}
        async with httpx.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            assert (await http.post(server.url, json=body, headers=bearer(token[:-1]))).status_code == 401


def test_a_malformed_token_variable_stops_the_server_without_printing_it(capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    secret = "c2VjcmV0LXRva2VuLXZhbHVlLXRoYXQtbXVzdA"
    monkeypatch.setenv("DAGTOOLS_TEST_TOKENS", f"alice={secret}==")
    assert main(["mcp", KITCHEN, "--transport", "http", "--auth-token-env", "DAGTOOLS_TEST_TOKENS"]) == 2
    err = capsys.readouterr().err
    assert "NAME:TOKEN" in err and secret[:6] not in err, err
