"""`dagtools mcp` as an OAuth 2.1 resource server, against oidc-provider (a certified OpenID provider, from npm)
run on loopback by the tests (tests/js/oidc.mjs), and with the official Python SDK client's own OAuth flow:
protected resource metadata, discovery, dynamic client registration, PKCE, a sign-in and consent done
over HTTP at the provider's own interaction pages. Tokens from another issuer, for another resource,
expired, or signed by a key the issuer does not publish are refused before any session is reached."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import json
import re
import secrets
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx
import jwt
import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.auth import OAuthClientProvider  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken  # noqa: E402

from dagtools._errors import ConfigError  # noqa: E402
from dagtools.mcpserver import McpConfig  # noqa: E402
from dagtools.mcpserver.sessions import SESSION_HEADER  # noqa: E402
from tests.mcpserver.test_mcp import ERAS, ROOT, value  # noqa: E402
from tests.mcpserver.test_mcp_connections import ACCEPT, INITIALIZE  # noqa: E402
from tests.mcpserver.test_mcp_security import bearer, client, peel, slice_  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, McpHttp  # noqa: E402
from tests.servers import Recorder, free_port  # noqa: E402
from tests.thirdparty import start_node_server  # noqa: E402

SECRETS = {"machine": "machine-secret-0123456789abcdef", "brief": "brief-secret-0123456789abcdef"}
BOTH = "dagtools:read dagtools:write"


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """oidc-provider minting JWT access tokens for the resource a client names."""
    with start_node_server("oidc.mjs", "oidc-provider", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def other_issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second oidc-provider: a real authorization server, but not the one `dagtools mcp` trusts."""
    with start_node_server("oidc.mjs", "oidc-provider", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}"


class OAuthMcp(McpHttp):
    """`dagtools mcp` over HTTP with `--oauth-issuer`, its `--public-url` on the port it listens on."""

    def __init__(self, source: str, cache_dir: Path, issuer: str, *extra: str, env: dict[str, str] | None = None) -> None:
        port = free_port()
        public = f"http://127.0.0.1:{port}/mcp"
        super().__init__(source, cache_dir, "--port", str(port), "--public-url", public, "--oauth-issuer", issuer, *extra, env=env)
        self.port, self.url = port, public  # the last --port given is the one it listens on


def minted(issuer: str, resource: str, *, client_id: str = "machine", scope: str = BOTH) -> str:
    """An access token from the provider's client credentials grant, for `resource` (RFC 8707)."""
    asked = {"grant_type": "client_credentials", "resource": resource, **({"scope": scope} if scope else {})}
    response = httpx.post(f"{issuer}/token", auth=(client_id, SECRETS[client_id]), data=asked)
    assert response.status_code == 200, response.text
    return response.json()["access_token"]


def forged(issuer: str, resource: str, **claims: Any) -> str:
    """A well-formed access token for this resource from this issuer, signed by a key the issuer never published."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    body = {"iss": issuer, "aud": resource, "sub": "mallory", "scope": BOTH, "iat": now, "exp": now + 600, **claims}
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": str(uuid.uuid4()), "typ": "at+jwt"})


def post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(url, json=body, headers={**ACCEPT, **headers}, timeout=30)


def challenge(response: httpx.Response) -> dict[str, str]:
    """The parameters of a `WWW-Authenticate: Bearer k="v", ...` header."""
    scheme, _, rest = response.headers["www-authenticate"].partition(" ")
    assert scheme == "Bearer"
    return dict(re.findall(r'(\w+)="([^"]*)"', rest))


def api_requests(recorder: Recorder) -> int:
    return sum(not r.is_introspection for r in recorder.requests)


# -- the official client's own flow -----------------------------------------------------------------------


class Memory:
    """The client's token storage, in memory (the SDK's `TokenStorage`)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """What a person does when the client opens the authorization URL: sign in at the provider as `login`
    and consent, on the provider's own interaction pages, until it redirects to the client's callback."""

    def __init__(self, login: str, redirect_uri: str) -> None:
        self.login, self.redirect_uri = login, redirect_uri
        self.result: AuthorizationCodeResult | None = None
        self.pages: list[str] = []

    async def open(self, url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=False, timeout=30) as http:  # keeps the provider's cookies
            for _ in range(12):
                if url.startswith(self.redirect_uri):
                    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
                    assert "code" in query, f"the provider refused: {query}"
                    self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
                    return
                response = await http.get(url)
                if response.status_code == 200:  # an interaction page: a sign-in form, or a consent form
                    prompt = "login" if 'name="prompt" value="login"' in response.text else "consent"
                    self.pages.append(prompt)
                    form = {"prompt": "login", "login": self.login, "password": "any"} if prompt == "login" else {"prompt": "consent"}
                    response = await http.post(url, data=form)
                assert response.status_code in (302, 303), f"{response.status_code} at {url}: {response.text[:300]}"
                url = urljoin(url, response.headers["location"])
        raise AssertionError("the provider never redirected back to the client")

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def oauth_client(url: str, login: str, era: str = "auto") -> tuple[Client, Memory, Browser]:
    """The SDK's client over streamable HTTP, authorizing with its own `OAuthClientProvider`."""
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    browser, storage = Browser(login, redirect), Memory()
    metadata = OAuthClientMetadata(
        client_name="dagtools tests",
        redirect_uris=[redirect],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    auth = OAuthClientProvider(url, metadata, storage, redirect_handler=browser.open, callback_handler=browser.callback)
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(auth=auth)), mode=era), storage, browser


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_the_official_client_completes_its_oauth_flow_and_calls_a_tool(
    issuer: str, kitchen_url: str, tmp_path: Path, era: str
) -> None:
    with OAuthMcp(kitchen_url, tmp_path, issuer, "--config", MCP_YAML) as server:
        made, storage, browser = oauth_client(server.url, "alice", era)
        async with made as alice:
            assert value(await peel(alice)) == {"result": "Potato#2"}
        assert browser.pages == ["login", "consent"]
        assert storage.client is not None and storage.client.client_id  # registered dynamically
        assert storage.tokens is not None and set(BOTH.split()) <= set((storage.tokens.scope or "").split())
        claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
        assert claims["aud"] == server.url and claims["iss"] == issuer and claims["sub"] == "alice"


async def signed_in(issuer: str, client_id: str, redirect: str, login: str, scope: str, resource: str) -> OAuthToken:
    """An access token from the authorization code flow with PKCE, as a client that asked for `scope` gets it."""
    verifier = secrets.token_urlsafe(48)
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    browser = Browser(login, redirect)
    asked = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect, "scope": scope, "resource": resource}
    await browser.open(f"{issuer}/auth?" + urlencode({**asked, "code_challenge": digest, "code_challenge_method": "S256", "state": "s"}))
    assert browser.result is not None
    exchange = {"grant_type": "authorization_code", "code": browser.result.code, "code_verifier": verifier}
    response = httpx.post(f"{issuer}/token", data={**exchange, "client_id": client_id, "redirect_uri": redirect, "resource": resource})
    assert response.status_code == 200, response.text
    return OAuthToken.model_validate(response.json())


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_the_official_client_asks_for_the_write_scope_when_a_mutation_is_refused(
    issuer: str, kitchen_url: str, tmp_path: Path, era: str
) -> None:
    with OAuthMcp(kitchen_url, tmp_path, issuer, "--config", MCP_YAML, "--allow-mutations") as server:
        made, storage, browser = oauth_client(server.url, "alice", era)
        registration = {"redirect_uris": [browser.redirect_uri], "token_endpoint_auth_method": "none", "application_type": "native"}
        storage.client = OAuthClientInformationFull.model_validate(httpx.post(f"{issuer}/reg", json=registration).json())
        # Alice consented to reading only, earlier: the client holds that token.
        storage.tokens = await signed_in(issuer, storage.client.client_id or "", browser.redirect_uri, "alice", "dagtools:read", server.url)
        assert storage.tokens.scope == "dagtools:read"
        async with made as alice:
            assert value(await peel(alice)) == {"result": "Potato#2"}
            assert browser.pages == []
            tipped = await alice.call_tool("callTool", {"tool": "Mutation_tip", "arguments": {"amount": 3}})
            assert not tipped.is_error and isinstance(value(tipped)["result"], int)
        assert browser.pages == ["login", "consent"]  # asked again, in a browser of its own, for both scopes
        assert set(BOTH.split()) <= set((storage.tokens.scope or "").split())


async def test_another_subject_cannot_use_a_session(issuer: str, kitchen_url: str, tmp_path: Path) -> None:
    with OAuthMcp(kitchen_url, tmp_path, issuer, "--config", MCP_YAML) as server:
        made, alice_storage, _ = oauth_client(server.url, "alice")
        async with made as alice:
            assert value(await peel(alice, meta={"dagtools/session": "work"})) == {"result": "Potato#2"}
        made, bob_storage, _ = oauth_client(server.url, "bob")
        async with made as bob:  # the same key, another subject: a session of bob's own, which holds no Potato#2
            assert (await slice_(bob, meta={"dagtools/session": "work"})).is_error
        assert alice_storage.tokens is not None and bob_storage.tokens is not None
        alice_token, bob_token = alice_storage.tokens.access_token, bob_storage.tokens.access_token
        async with client(server.url, **bearer(alice_token, **{SESSION_HEADER: "work"})) as alice_again:
            assert value(await slice_(alice_again)) == {"result": "Potato#3"}
        # A handshake-era session (Mcp-Session-Id) is bound to the subject that opened it.
        opened = post(server.url, INITIALIZE, authorization=f"Bearer {alice_token}")
        assert opened.status_code == 200
        sid = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        headers = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        assert post(server.url, listing, authorization=f"Bearer {bob_token}", **headers).status_code == 404
        assert post(server.url, listing, authorization=f"Bearer {alice_token}", **headers).status_code == 200


async def test_the_access_token_never_reaches_the_api_and_a_users_own_api_credential_does(
    issuer: str, kitchen_server: Recorder, tmp_path: Path
) -> None:
    extra = ("--config", MCP_YAML, "--forward-header", "X-Api-Token", "--header", "X-Service: dagtools")
    with OAuthMcp(kitchen_server.url, tmp_path, issuer, *extra) as server:
        made, storage, _ = oauth_client(server.url, "alice")
        async with made as alice:
            assert value(await peel(alice)) == {"result": "Potato#2"}
        assert storage.tokens is not None
        token = storage.tokens.access_token
        first = api_requests(kitchen_server)
        # Her own API credential, in a header of its own: a session of its own, and the API gets that header.
        async with client(server.url, **bearer(token, **{"X-Api-Token": "alice-api-token"})) as alice:
            assert value(await peel(alice)) == {"result": "Potato#2"}
    calls = [r for r in kitchen_server.requests if not r.is_introspection]
    assert first and len(calls) > first, "no call reached the API"
    assert all(token not in json.dumps(r.headers) and "authorization" not in r.headers for r in calls)
    assert all(r.headers["x-service"] == "dagtools" for r in calls)
    assert [r.headers.get("x-api-token") for r in calls] == [None] * first + ["alice-api-token"] * (len(calls) - first)


# -- what the server says before a token -------------------------------------------------------------------


async def test_the_metadata_names_the_authorization_server_and_a_missing_token_is_challenged(
    issuer: str, kitchen_url: str, tmp_path: Path
) -> None:
    with OAuthMcp(kitchen_url, tmp_path, issuer, "--config", MCP_YAML) as server:
        base = f"http://127.0.0.1:{server.port}"
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            metadata = httpx.get(base + path).json()
            assert metadata["resource"] == server.url
            assert metadata["authorization_servers"] == [issuer]
            assert metadata["scopes_supported"] == BOTH.split()
        refused = post(server.url, INITIALIZE)
        assert refused.status_code == 401
        said = challenge(refused)
        assert said["resource_metadata"] == f"{base}/.well-known/oauth-protected-resource/mcp"
        assert said["scope"] == BOTH and "error" not in said


# -- tokens that are refused -------------------------------------------------------------------------------


async def test_tokens_from_another_issuer_for_another_resource_expired_or_signed_by_an_unknown_key_are_refused(
    issuer: str, other_issuer: str, kitchen_server: Recorder, tmp_path: Path
) -> None:
    config = tmp_path / "mcp.yaml"
    config.write_text(yaml.safe_dump({**yaml.safe_load(Path(MCP_YAML).read_text()), "oauth_leeway": 0}))
    with OAuthMcp(kitchen_server.url, tmp_path, issuer, "--config", str(config)) as server:
        good = minted(issuer, server.url)
        async with client(server.url, **bearer(good, **{SESSION_HEADER: "work"})) as machine:
            assert value(await peel(machine)) == {"result": "Potato#2"}
        before = api_requests(kitchen_server)
        brief = minted(issuer, server.url, client_id="brief")
        time.sleep(2.2)  # its one second, and then some: no leeway is allowed here
        refused = {
            "another issuer": minted(other_issuer, server.url),
            "another resource": minted(issuer, "http://127.0.0.1:1/elsewhere"),
            "expired": brief,
            "an unknown key": forged(issuer, server.url),
            "not a JWT": secrets.token_urlsafe(32),
            "unsigned": jwt.encode(
                {"iss": issuer, "aud": server.url, "sub": "machine", "exp": int(time.time()) + 60}, None, algorithm="none"
            ),
        }
        reasons = {}
        for name, token in refused.items():
            call = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "callTool", "arguments": {"tool": "Potato_slice", "arguments": {"Potato": "Potato#2"}}},
            }
            for body in (INITIALIZE, call):
                response = post(server.url, body, authorization=f"Bearer {token}", **{SESSION_HEADER: "work"})
                assert response.status_code == 401, (name, response.status_code, response.text)
                said = challenge(response)
                assert said["error"] == "invalid_token" and said["scope"] == BOTH, name
                assert token not in response.text and token not in response.headers["www-authenticate"]
            reasons[name] = said["error_description"]
        assert "another authorization server" in reasons["another issuer"]
        assert "another resource" in reasons["another resource"]
        assert "expired" in reasons["expired"]
        assert "does not publish" in reasons["an unknown key"]
        assert api_requests(kitchen_server) == before  # no session was reached, so nothing was sent to the API
        async with client(server.url, **bearer(good, **{SESSION_HEADER: "work"})) as machine:  # the session is as it was
            assert value(await slice_(machine)) == {"result": "Potato#3"}


async def test_a_rotated_key_is_fetched_once_and_made_up_key_ids_cannot_make_the_server_hammer_the_issuer(
    issuer: str, kitchen_url: str, tmp_path: Path
) -> None:
    before = httpx.get(f"{issuer}/-/stats").json()["jwks"]
    with OAuthMcp(kitchen_url, tmp_path, issuer, "--config", MCP_YAML) as server:  # fetches the keys at start
        first = minted(issuer, server.url)
        async with client(server.url, **bearer(first)) as machine:
            assert value(await peel(machine)) == {"result": "Potato#2"}
        fetched = httpx.get(f"{issuer}/-/stats").json()["jwks"]
        assert fetched == before + 1
        rotated = httpx.post(f"{issuer}/-/rotate").json()["kid"]
        token = minted(issuer, server.url)
        assert jwt.get_unverified_header(token)["kid"] == rotated
        async with httpx.AsyncClient(timeout=30) as http:  # a crowd with a key id not seen before: the keys are fetched once
            calls = [http.post(server.url, json=INITIALIZE, headers={**ACCEPT, "authorization": f"Bearer {token}"}) for _ in range(8)]
            assert [r.status_code for r in await asyncio.gather(*calls)] == [200] * 8
        assert httpx.get(f"{issuer}/-/stats").json()["jwks"] == fetched + 1
        async with client(server.url, **bearer(token)) as machine:
            assert value(await slice_(machine)) == {"result": "Potato#3"}
        for _ in range(5):  # within the window, made-up key ids are refused without asking the issuer again
            assert post(server.url, INITIALIZE, authorization=f"Bearer {forged(issuer, server.url)}").status_code == 401
        assert httpx.get(f"{issuer}/-/stats").json()["jwks"] == fetched + 1


async def test_an_audience_other_than_the_url_is_the_one_tokens_must_name(issuer: str, kitchen_url: str, tmp_path: Path) -> None:
    config = tmp_path / "mcp.yaml"
    config.write_text(yaml.safe_dump({**yaml.safe_load(Path(MCP_YAML).read_text()), "oauth_audience": "urn:example:kitchen"}))
    with OAuthMcp(kitchen_url, tmp_path, issuer, "--config", str(config)) as server:
        async with client(server.url, **bearer(minted(issuer, "urn:example:kitchen"))) as machine:
            assert value(await peel(machine)) == {"result": "Potato#2"}
        refused = post(server.url, INITIALIZE, authorization=f"Bearer {minted(issuer, server.url)}")
        assert refused.status_code == 401 and "another resource" in challenge(refused)["error_description"]


# -- scopes ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_without_the_write_scope_no_mutation_is_offered_or_run(issuer: str, kitchen_url: str, tmp_path: Path, era: str) -> None:
    with OAuthMcp(kitchen_url, tmp_path, issuer, "--config", MCP_YAML, "--allow-mutations") as server:
        reader = minted(issuer, server.url, scope="dagtools:read")
        async with client(server.url, era, **bearer(reader)) as c:
            assert "Mutation_tip" not in json.dumps(value(await c.call_tool("selectTools", {"search": "tip the cook"})))
            assert value(await peel(c)) == {"result": "Potato#2"}  # reading works
        for params in ({"name": "Mutation_tip", "arguments": {"amount": 1}}, {"name": "callTool", "arguments": {"tool": "Mutation_tip"}}):
            refused = post(
                server.url, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params}, authorization=f"Bearer {reader}"
            )
            assert refused.status_code == 403
            said = challenge(refused)
            assert said["error"] == "insufficient_scope" and said["scope"] == BOTH and "dagtools:write" in said["error_description"]
        writer = minted(issuer, server.url)
        async with client(server.url, era, **bearer(writer)) as c:
            assert "Mutation_tip" in json.dumps(value(await c.call_tool("selectTools", {"search": "tip the cook"})))
            tipped = await c.call_tool("callTool", {"tool": "Mutation_tip", "arguments": {"amount": 2}})
            assert not tipped.is_error and isinstance(value(tipped)["result"], int)
        nothing = minted(issuer, server.url, scope="")
        refused = post(server.url, INITIALIZE, authorization=f"Bearer {nothing}")
        assert refused.status_code == 403 and challenge(refused)["scope"] == BOTH


# -- introspection, and an authorization server that is down ----------------------------------------------


@pytest.fixture(scope="module")
def opaque_issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """oidc-provider minting opaque access tokens, which only it can read (RFC 7662 introspection)."""
    with start_node_server("oidc.mjs", "oidc-provider", tmp_path_factory, "--opaque") as port:
        yield f"http://127.0.0.1:{port}"


async def test_opaque_tokens_are_introspected_and_checked_for_this_resource(opaque_issuer: str, kitchen_url: str, tmp_path: Path) -> None:
    env = {"RS_CREDENTIALS": "dagtools-rs:rs-secret-0123456789abcdef"}
    with OAuthMcp(
        kitchen_url, tmp_path, opaque_issuer, "--config", MCP_YAML, "--oauth-introspection-env", "RS_CREDENTIALS", env=env
    ) as server:
        token = minted(opaque_issuer, server.url)
        assert token.count(".") == 0
        async with client(server.url, **bearer(token)) as machine:
            assert value(await peel(machine)) == {"result": "Potato#2"}
            assert value(await slice_(machine)) == {"result": "Potato#3"}
        stats = httpx.get(f"{opaque_issuer}/-/stats").json()
        assert 1 <= stats["introspections"] <= 2  # an answer is kept for a while, not asked again for every request
        assert stats["metadata"] == 1  # at start, and kept
        elsewhere = minted(opaque_issuer, "http://127.0.0.1:1/elsewhere")
        for token, why in ((elsewhere, "another resource"), (secrets.token_urlsafe(43), "not active")):
            refused = post(server.url, INITIALIZE, authorization=f"Bearer {token}")
            assert refused.status_code == 401 and why in challenge(refused)["error_description"]


async def test_while_the_authorization_server_is_down_tokens_get_503_with_retry_after(kitchen_url: str, tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    with OAuthMcp(kitchen_url, tmp_path, down, "--config", MCP_YAML) as server:
        refused = post(server.url, INITIALIZE, authorization=f"Bearer {forged(down, server.url)}")
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
        assert "cannot check tokens now" in refused.json()["error_description"]
        assert post(server.url, INITIALIZE).status_code == 401  # no token: still told where to get one
    assert f"callers need an OAuth access token from {down}" in server.log
    assert "cannot check tokens now" in server.log and "answered 503" in server.log  # said at start


async def test_a_new_key_is_not_judged_while_its_issuer_is_down_and_is_accepted_once_it_is_back(
    issuer: str, kitchen_url: str, tmp_path: Path
) -> None:
    """A token signed with a key the server has not seen, while the issuer is down: `503` with `Retry-After`
    for as long as the keys cannot be fetched (a `401` would tell the client to drop a good token), then,
    once the issuer is back, the next request fetches the keys and is let in; a crowd fetches once."""
    with OAuthMcp(kitchen_url, tmp_path, issuer, "--config", MCP_YAML) as server:
        # the keys as they are now, fetched before the rotation whenever the server would first have fetched them
        assert post(server.url, INITIALIZE, authorization=f"Bearer {minted(issuer, server.url)}").status_code == 200
        rotated = httpx.post(f"{issuer}/-/rotate").json()["kid"]
        token = minted(issuer, server.url)
        assert jwt.get_unverified_header(token)["kid"] == rotated
        made_up = forged(issuer, server.url)
        down = 6.0
        assert httpx.post(f"{issuer}/-/down?seconds={down:g}").status_code == 200
        gone = time.monotonic()
        answers = []
        while time.monotonic() - gone < down - 1.5:  # every second or so while it is down: 503, never 401
            for each in (token, made_up):
                refused = post(server.url, INITIALIZE, authorization=f"Bearer {each}")
                answers.append((refused.status_code, refused.headers.get("retry-after")))
                assert "cannot check tokens now" in refused.json()["error_description"], (answers, each == token, refused.text)
            await asyncio.sleep(1.1)
        assert len(answers) >= 6 and set(answers) == {(503, "5")}, answers
        while True:  # the issuer is back
            try:
                before = httpx.get(f"{issuer}/-/stats", timeout=2).json()["jwks"]
                break
            except httpx.TransportError:
                assert time.monotonic() - gone < down + 10, "the issuer did not come back"
                await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # past the pause between two fetches while it was down
        async with httpx.AsyncClient(timeout=30) as http:  # a crowd, at once: one fetch decides for all of it
            calls = [http.post(server.url, json=INITIALIZE, headers={**ACCEPT, "authorization": f"Bearer {token}"}) for _ in range(8)]
            assert [r.status_code for r in await asyncio.gather(*calls)] == [200] * 8
        assert httpx.get(f"{issuer}/-/stats").json()["jwks"] == before + 1
        refused = post(server.url, INITIALIZE, authorization=f"Bearer {made_up}")  # decided now: the issuer does not publish it
        assert refused.status_code == 401 and "does not publish" in challenge(refused)["error_description"]
        assert httpx.get(f"{issuer}/-/stats").json()["jwks"] == before + 1
        async with client(server.url, **bearer(token)) as machine:
            assert value(await peel(machine)) == {"result": "Potato#2"}


async def test_a_jwt_without_a_subject_is_refused_saying_what_it_lacks() -> None:
    """RFC 9068 requires `sub` of a JWT access token (a client's own token names the client there): one
    without it is refused, never bound to its client, which an issuer may share among many users."""
    from dagtools.mcpserver.gate import OAuthResource, Refused

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    resource = OAuthResource(issuer="https://auth.example.com", resource="https://mcp.example.com/mcp")
    resource._keys = {"k1": jwt.PyJWK({**public, "kid": "k1", "use": "sig", "alg": "RS256"})}
    resource._fetched = time.monotonic()
    now = int(time.time())
    claims = {"iss": resource.issuer, "aud": resource.resource, "client_id": "shared-app", "scope": BOTH, "iat": now, "exp": now + 60}
    with pytest.raises(Refused) as refused:
        await resource.authenticate({"authorization": "Bearer " + jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})})
    assert refused.value.status == 401 and "names no subject (sub)" in refused.value.description
    with_subject = jwt.encode({**claims, "sub": "shared-app"}, key, algorithm="RS256", headers={"kid": "k1"})
    user = await resource.authenticate({"authorization": f"Bearer {with_subject}"})
    assert user.access_token.subject == "shared-app"


# -- one interface for the gate ------------------------------------------------------------------------------


async def test_bearer_tokens_and_oauth_answer_the_gate_as_one_authenticator() -> None:
    """The gate asks an `Authenticator` only: who the caller is, whether it may write, what to refuse with,
    what the metadata says, what to tell the operator at start. Both kinds answer every question."""
    from dagtools.mcpserver.gate import Authenticator, BearerTokens, OAuthResource, Refused

    tokens = BearerTokens({"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"})
    alice = await tokens.authenticate({"authorization": "Bearer alice-token-0123456789"})
    assert isinstance(tokens, Authenticator) and tokens.caller_of(alice) == "caller:alice"
    assert tokens.may_write(alice) and tokens.write_scope == "" and await tokens.prepare() is None
    assert "authorization_servers" not in tokens.metadata("https://m.example.com/mcp", "x")
    for headers, error in [({}, "invalid_request"), ({"authorization": "Bearer bob-token-0123456789xx"}, "invalid_token")]:
        with pytest.raises(Refused) as refused:
            await tokens.authenticate(headers)
        assert (refused.value.status, refused.value.error) == (401, error) and "token-0123" not in refused.value.description

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    resource = OAuthResource(
        issuer="https://auth.example.com", resource="https://mcp.example.com/mcp", scope="dagtools:read", write_scope="dagtools:write"
    )
    resource._keys = {"k1": jwt.PyJWK({**public, "kid": "k1", "use": "sig", "alg": "RS256"})}
    resource._fetched = time.monotonic()
    now = int(time.time())
    claims = {"iss": resource.issuer, "aud": resource.resource, "sub": "carol", "iat": now, "exp": now + 60}

    async def user(**more: Any) -> Any:
        token = jwt.encode({**claims, **more}, key, algorithm="RS256", headers={"kid": "k1"})
        return await resource.authenticate({"authorization": f"Bearer {token}"})

    reader, writer = await user(client_id="app-1", scope="dagtools:read"), await user(client_id="app-2", scope=BOTH)
    assert isinstance(resource, Authenticator)
    assert resource.caller_of(reader) == resource.caller_of(writer), "one subject is one caller, whichever client it used"
    assert resource.caller_of(reader).startswith("caller:sub-") and "carol" not in resource.caller_of(reader)
    assert resource.caller_of(await user(sub="dave", scope="dagtools:read")) != resource.caller_of(reader)
    assert not resource.may_write(reader) and resource.may_write(writer)
    needs = resource.needs_write()
    assert (needs.status, needs.error, needs.scope) == (403, "insufficient_scope", BOTH) and "dagtools:write" in needs.description
    assert resource.metadata("ignored", "x")["authorization_servers"] == ["https://auth.example.com"]


# -- configuration ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, said",
    [
        ({"oauth_issuer": "https://auth.example.com"}, "oauth_issuer needs public_url"),
        ({"oauth_issuer": "http://auth.example.com", "public_url": "https://mcp.example.com/mcp"}, "must be an https:// URL"),
        (
            {"oauth_issuer": "https://auth.example.com", "public_url": "https://mcp.example.com/mcp", "auth_token_env": "T"},
            "not both",
        ),
        (
            {"oauth_issuer": "https://auth.example.com", "public_url": "https://m.example.com/mcp", "forward_headers": ("Authorization",)},
            "must never reach the API",
        ),
        ({"oauth_issuer": "https://auth.example.com", "public_url": "https://m.example.com/mcp", "oauth_leeway": 3600}, "0 to 300"),
        ({"oauth_issuer": "https://auth.example.com", "public_url": "https://m.example.com/mcp", "oauth_scope": "a b"}, "one scope"),
    ],
)
def test_an_oauth_config_that_cannot_work_is_refused_at_start(options: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        McpConfig(source="x.graphql", transport="http", **options)


def test_the_authorization_page_states_every_oauth_option_with_its_default() -> None:
    page = (ROOT / "docs" / "authorization.md").read_text()
    rows = {name: shown.strip() for name, shown in re.findall(r"^\| `(oauth_\w+)` \| ([^|]+) \|", page, re.M)}
    defaults = {f.name: f.default for f in dataclasses.fields(McpConfig) if f.name.startswith("oauth_")}
    assert set(rows) == set(defaults)
    for name, default in defaults.items():
        expected = {"(none)", "`public_url`"} if default == "" else {f"`{default:g}`" if isinstance(default, float) else f"`{default}`"}
        assert rows[name] in expected, name


def test_a_refusal_keeps_its_challenge_header_well_formed() -> None:
    from dagtools.mcpserver.gate import Refused, unauthorized

    refused = Refused(401, "invalid_token", 'token is missing the "exp" claim', scope="a b")
    status, headers, body = unauthorized("https://m.example.com/mcp", given=True, refused=refused)
    assert status == 401 and json.loads(body)["error_description"] == 'token is missing the "exp" claim'
    assert dict(re.findall(r'(\w+)="([^"]*)"', dict(headers)[b"www-authenticate"].decode())) == {
        "error": "invalid_token",
        "error_description": "token is missing the 'exp' claim",
        "resource_metadata": "https://m.example.com/.well-known/oauth-protected-resource/mcp",
        "scope": "a b",
    }


@pytest.mark.parametrize("value", ["", "no-colon", ":secret", "client:"])
def test_introspection_credentials_that_cannot_work_are_refused_at_start(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagtools.mcpserver.gate import check_exposure

    monkeypatch.setenv("RS_CREDENTIALS", value)
    config = McpConfig(
        source="x.graphql",
        transport="http",
        host="0.0.0.0",
        public_url="https://mcp.example.com/mcp",
        oauth_issuer="https://auth.example.com",
        oauth_introspection_env="RS_CREDENTIALS",
    )
    with pytest.raises(ConfigError, match="must hold CLIENT_ID:CLIENT_SECRET") as refused:
        check_exposure(config)
    assert "secret" not in str(refused.value).replace("CLIENT_SECRET", "")
