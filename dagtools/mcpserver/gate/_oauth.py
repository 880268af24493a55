"""`OAuthResource`: an OAuth 2.1 resource server (MCP authorization, 2025-11-25) that checks access tokens.

An access token is checked as a JWT against the issuer's keys (RFC 9068; found through its RFC 8414 or
OpenID metadata, kept for `KEYS_FOR` seconds, fetched again for a key id not seen before at most once
every `REFETCH_EVERY` seconds; while they cannot be fetched, a token they would judge gets 503, never
401, and they are asked for again at most every `DOWN_RETRY_EVERY` seconds) or by asking the issuer
(RFC 7662 introspection; an answer is kept for at most `INTROSPECTED_FOR` seconds); either way its
issuer, audience (RFC 8707: a token minted for another resource is refused), expiry and not-before
(with `leeway` seconds of skew) and scopes. The caller is the token's subject at its issuer (a JWT must
name one, as RFC 9068 requires; an introspection answer without one is the client's own token, and the
caller is that client); a token without the write scope opens read-only sessions. The caller's name is
who its sessions belong to and who its quotas count against; the token itself is never stored, logged
or passed on to the API.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import anyio

from ..._errors import ConfigError
from ._authenticator import Authenticator, Refused
from ._discovery import protected_resource_metadata

if TYPE_CHECKING:
    from .._config import McpConfig

__all__ = ["OAuthResource"]

REFETCH_EVERY = 30.0
"""Seconds between two fetches of the issuer's keys made because a token named a key id not seen before."""
DOWN_RETRY_EVERY = 1.0
"""Seconds between two fetches of the issuer's keys while the last one failed: until one succeeds, a token
that needs them is answered 503 (it cannot be judged), and the first request a second later asks again."""
KEYS_FOR = 3600.0
"""Seconds the issuer's metadata and keys are used before they are fetched again."""
INTROSPECTED_FOR = 30.0
"""Seconds an introspection answer is used for (never past the token's expiry): how late a revocation may be seen."""
_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
_REQUIRED: Any = {"require": ["exp", "iss", "aud", "sub"]}
_MAX_DOCUMENT = 512 * 1024
_MAX_INTROSPECTED = 10_000
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


class OAuthResource(Authenticator):
    """Access tokens from one OAuth 2.1 authorization server, checked for this resource (see the module
    docstring)."""

    def __init__(
        self,
        *,
        issuer: str,
        resource: str,
        audience: str = "",
        scope: str = "",
        write_scope: str = "",
        leeway: float = 30.0,
        introspection_env: str = "",
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.issuer, self.resource = issuer, resource  # the issuer compared exactly, as it names itself (RFC 8414 3.3)
        self.audience = audience or resource
        self.scope, self.write_scope, self.leeway = scope, write_scope, leeway
        self._client_auth: tuple[str, str] | None = None
        if introspection_env:
            client_id, colon, secret = (os.environ if environ is None else environ).get(introspection_env, "").partition(":")
            if not (colon and client_id and secret):
                raise ConfigError(
                    f"The environment variable {introspection_env} (oauth_introspection_env) must hold CLIENT_ID:CLIENT_SECRET: "
                    "the credentials the authorization server gave this server to introspect tokens with."
                )
            self._client_auth = (client_id, secret)
        self._metadata: tuple[float, dict[str, Any]] | None = None
        self._keys: dict[str | None, Any] = {}
        self._fetched = self._refetched = -KEYS_FOR
        self._failed: tuple[float, Refused] | None = None  # when the last fetch of the keys failed, and why
        self._lock = anyio.Lock()
        self._introspected: dict[str, tuple[float, Any]] = {}

    @classmethod
    def from_config(cls, config: McpConfig) -> OAuthResource:
        """The resource server a config's `oauth_*` options describe, for its `public_url`."""
        return cls(
            issuer=config.oauth_issuer,
            resource=config.public_url,
            audience=config.oauth_audience,
            scope=config.oauth_scope,
            write_scope=config.oauth_write_scope,
            leeway=config.oauth_leeway,
            introspection_env=config.oauth_introspection_env,
        )

    @property
    def scopes(self) -> list[str]:
        """The scopes this server knows, to ask for: reading (every call) and writing (mutations)."""
        return [s for s in (self.scope, self.write_scope) if s]

    def metadata(self, resource: str, name: str) -> dict[str, Any]:
        return protected_resource_metadata(self.resource, name, servers=[self.issuer], scopes=self.scopes)

    def may_write(self, user: Any) -> bool:
        return not self.write_scope or self.write_scope in getattr(user, "scopes", ())

    def caller_of(self, user: Any) -> str:
        """The token's subject at this issuer, whichever client it used, as a digest."""
        subject = user.access_token.subject
        return "caller:sub-" + hashlib.sha256(f"{self.issuer}\n{subject}".encode()).hexdigest()[:24]

    async def authenticate(self, headers: Mapping[str, str]) -> Any:
        """The SDK's `AuthenticatedUser` for a request's headers (lower-case names); else raises `Refused`."""
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        scheme, _, token = headers.get("authorization", "").partition(" ")
        token, wanted = token.strip(), " ".join(self.scopes)
        if scheme.lower() != "bearer" or not token:
            raise Refused(
                401, "invalid_request", "This server needs an OAuth access token: send 'Authorization: Bearer <token>'.", scope=wanted
            )
        access = await (self._introspect(token) if self._client_auth else self._verify(token))
        if self.scope and self.scope not in access.scopes:
            raise Refused(
                403, "insufficient_scope", f"The access token lacks the scope {self.scope}; authorize again asking for it.", scope=wanted
            )
        return AuthenticatedUser(access)

    def _invalid(self, why: str) -> Refused:
        return Refused(
            401, "invalid_token", f"The access token is refused: {why}. Authorize again at {self.issuer}.", scope=" ".join(self.scopes)
        )

    async def _verify(self, token: str) -> Any:
        import jwt

        if not _JWT.fullmatch(token):
            raise self._invalid("it is not a JWT (set oauth_introspection_env to check opaque tokens)")
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise self._invalid("it is not a well-formed JWT") from None
        if unverified.get("iss") != self.issuer:
            raise self._invalid("it was issued by another authorization server")
        if header.get("alg") not in _ALGORITHMS:
            raise self._invalid("it is not signed with a public-key algorithm this server accepts")
        key = await self._key(header.get("kid"))
        if key is None:
            raise self._invalid("it is signed with a key its issuer does not publish")
        try:
            claims = jwt.decode(token, key.key, [header["alg"]], _REQUIRED, audience=self.audience, issuer=self.issuer, leeway=self.leeway)
        except jwt.ExpiredSignatureError:
            raise self._invalid("it has expired") from None
        except jwt.ImmatureSignatureError:
            raise self._invalid("it is not valid yet (nbf or iat is in the future)") from None
        except jwt.MissingRequiredClaimError as error:
            if error.claim == "sub":
                raise self._invalid(
                    "it names no subject (sub), which a JWT access token must (RFC 9068; a client's own token names the client there)"
                ) from None
            raise self._invalid(f"{str(error).lower()} (this resource is {self.audience})") from None
        except jwt.InvalidAudienceError:
            raise self._invalid(f"it was issued for another resource (this resource is {self.audience})") from None
        except jwt.PyJWTError:
            raise self._invalid("its signature does not verify") from None
        return self._access(claims)

    async def _key(self, kid: Any) -> Any:
        """The issuer's key `kid` names (None: the issuer does not publish it, as of a fetch that succeeded),
        or `Refused` 503 when the keys that would say cannot be fetched now."""
        async with self._lock:
            now = time.monotonic()
            if not self._keys or now - self._fetched > KEYS_FOR:
                await self._fetch_keys(now, keep=bool(self._keys))
            elif kid not in self._keys and self._failed is not None:
                # The last fetch failed: the key may be one the issuer published since. Not judged until a fetch
                # succeeds (a 401 would make the client drop a good token); asked again at most once a second.
                await self._fetch_keys(now, keep=False, unknown=True)
            elif kid not in self._keys and now - self._refetched >= REFETCH_EVERY:
                await self._fetch_keys(now, keep=False, unknown=True)  # rotation; made-up key ids cost one fetch a window
            if kid is None and len(self._keys) == 1:
                return next(iter(self._keys.values()))
            return self._keys.get(kid)

    async def _fetch_keys(self, now: float, *, keep: bool, unknown: bool = False) -> None:
        """Fetch the issuer's keys; when that fails, keep the keys held (`keep`) or raise 503. While the last
        fetch failed, the next is made only `DOWN_RETRY_EVERY` seconds after it: many requests, one fetch. One made
        for an `unknown` key id that succeeds opens the window of `REFETCH_EVERY` seconds without another."""
        import jwt

        if self._failed is not None and now - self._failed[0] < DOWN_RETRY_EVERY:
            if not keep:
                raise self._failed[1]
            return
        try:
            uri = (await self._issuer_metadata()).get("jwks_uri")
            if not isinstance(uri, str):
                raise _unreachable(self.issuer, "it publishes no jwks_uri (set oauth_introspection_env to introspect its tokens)")
            keys = jwt.PyJWKSet.from_dict(await self._fetch(uri, "its keys (jwks_uri)")).keys
        except (Refused, jwt.PyJWTError) as error:
            refused = error if isinstance(error, Refused) else _unreachable(self.issuer, "its keys (jwks_uri) are not a JWK set")
            self._failed = (time.monotonic(), refused)
            if not keep:
                raise refused from None
            self._fetched = now - KEYS_FOR + 60  # the keys held still serve; try again in a minute
            return
        self._keys = {k.key_id: k for k in keys if k.public_key_use in (None, "sig")}
        self._fetched = now
        if unknown:
            self._refetched = now
        self._failed = None

    async def prepare(self) -> str | None:
        """Fetch now what checking tokens needs, so that a start says at once what is wrong: that, or None."""
        try:
            await (self._issuer_metadata() if self._client_auth else self._key(None))
        except Refused as error:
            return error.description
        return None

    async def _issuer_metadata(self) -> dict[str, Any]:
        if self._metadata is not None and time.monotonic() - self._metadata[0] < KEYS_FOR:
            return self._metadata[1]
        parts = urlsplit(self.issuer)
        base, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
        for url in (f"{base}/.well-known/oauth-authorization-server{path}", f"{base}{path}/.well-known/openid-configuration"):
            data = await self._fetch(url, "its metadata", missing_ok=True)
            if data is None:
                continue
            if data.get("issuer") != self.issuer:
                raise Refused(
                    503,
                    "temporarily_unavailable",
                    f"The metadata at {url} names another issuer; set oauth_issuer to the issuer exactly as it names itself.",
                )
            self._metadata = (time.monotonic(), data)
            return data
        raise _unreachable(self.issuer, "it publishes no authorization server metadata (RFC 8414 or OpenID)")

    async def _fetch(self, url: str, what: str, *, form: dict[str, str] | None = None, missing_ok: bool = False) -> Any:
        """A JSON object from the authorization server: GET `url`, or POST `form` with this server's client credentials."""
        import httpx

        from ...executors._tls import tls_context

        auth = (quote(self._client_auth[0], safe=""), quote(self._client_auth[1], safe="")) if form and self._client_auth else None
        body = b""
        try:
            with anyio.fail_after(10):
                async with httpx.AsyncClient(timeout=5, follow_redirects=False, verify=tls_context(), auth=auth) as client:
                    async with client.stream("POST" if form else "GET", url, data=form, headers={"accept": "application/json"}) as response:
                        if response.status_code == 404 and missing_ok:
                            return None
                        async for chunk in response.aiter_bytes():
                            body += chunk
                            if len(body) > _MAX_DOCUMENT:
                                raise _unreachable(self.issuer, f"{what} is larger than {_MAX_DOCUMENT // 1024} KB")
                        status = response.status_code
        except (httpx.HTTPError, TimeoutError) as error:
            raise _unreachable(self.issuer, f"{what} could not be fetched ({type(error).__name__})") from None
        try:
            data = json.loads(body) if status == 200 else None
        except ValueError:
            data = None  # said below
        if not isinstance(data, dict):
            raise _unreachable(self.issuer, f"{what} answered HTTP {status}, not a JSON object")
        return data

    async def _introspect(self, token: str) -> Any:
        digest, now = hashlib.sha256(token.encode()).hexdigest(), time.time()
        held = self._introspected.get(digest)
        if held is not None and held[0] > now:
            return held[1]
        endpoint = (await self._issuer_metadata()).get("introspection_endpoint")
        if not isinstance(endpoint, str):
            raise Refused(
                503,
                "temporarily_unavailable",
                f"{self.issuer} publishes no introspection_endpoint; drop oauth_introspection_env to check JWTs.",
            )
        data = await self._fetch(endpoint, "introspection", form={"token": token, "token_type_hint": "access_token"})
        if data.get("active") is not True:
            raise self._invalid("its issuer says it is not active (expired, revoked or unknown)")
        if data.get("iss", self.issuer) != self.issuer:
            raise self._invalid("it was issued by another authorization server")
        audience = data.get("aud")
        if self.audience not in ([audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []):
            raise self._invalid(f"it was issued for another resource (this resource is {self.audience})")
        expires, begins = data.get("exp"), data.get("nbf")
        if isinstance(expires, (int, float)) and expires + self.leeway < now:
            raise self._invalid("it has expired")
        if isinstance(begins, (int, float)) and begins - self.leeway > now:
            raise self._invalid("it is not valid yet (nbf is in the future)")
        access = self._access({**data, "iss": self.issuer})
        if len(self._introspected) >= _MAX_INTROSPECTED:  # the oldest half goes: bounded, and cheap on average
            self._introspected = dict(list(self._introspected.items())[_MAX_INTROSPECTED // 2 :])
        until = now + INTROSPECTED_FOR
        self._introspected[digest] = (min(until, expires) if isinstance(expires, (int, float)) else until, access)
        return access

    def _access(self, claims: Mapping[str, Any]) -> Any:
        """The SDK's `AccessToken` for checked claims: the subject, client and scopes; never the token itself."""
        from mcp.server.auth.provider import AccessToken

        client = claims.get("client_id") or claims.get("azp")
        # Introspection may name no subject: a client's own token (client credentials) is the client's.
        subject = claims.get("sub") or (f"client:{client}" if client else None)
        if not isinstance(subject, str) or not subject:
            raise self._invalid("it names no subject (sub) nor client (client_id)")
        words = str(claims.get("scope") or "").split()
        scp = claims.get("scp")
        words += [str(s) for s in scp] if isinstance(scp, list) else str(scp or "").split()
        expires = claims.get("exp")
        return AccessToken(
            token="",
            client_id=str(client or subject),
            scopes=list(dict.fromkeys(words)),
            expires_at=int(expires) if isinstance(expires, (int, float)) else None,
            resource=self.resource,
            subject=subject,
            claims={"iss": self.issuer},
        )


def _unreachable(issuer: str, why: str) -> Refused:
    return Refused(503, "temporarily_unavailable", f"The authorization server {issuer} cannot check tokens now: {why}. Try again soon.")
