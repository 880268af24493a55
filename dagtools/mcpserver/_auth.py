"""Bearer-token authentication for `dagtools mcp --transport http`, discoverable as the MCP
authorization spec asks: a 401 carries `WWW-Authenticate: Bearer ... resource_metadata="..."` and
`/.well-known/oauth-protected-resource` (RFC 9728) describes this server as a protected resource.

Tokens come from an environment variable named in the config (`auth_token_env`), never from the
config file or the command line, so they stay out of shell histories and process lists. The
variable holds one or more tokens separated by commas or whitespace; `alice:TOKEN` names the caller
(the token is everything after the first colon), otherwise a caller is named after a digest of its
token. A colon appears in no token alphabet in use (base64 with its `=` padding, base64url, hex,
JWTs), so a token is never misread as a name. A bare entry with `=` inside it (not as trailing
padding) is refused: it is the old `NAME=TOKEN` form, or a token to name. No message ever shows a
token, nor any part of an entry that might be one. The caller's name is who its sessions
belong to and who its quotas count against; the token itself is never stored or passed on.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from collections.abc import Mapping
from typing import Any

from .._errors import ConfigError

__all__ = ["WELL_KNOWN", "BearerTokens", "protected_resource_metadata", "unauthorized"]

WELL_KNOWN = "/.well-known/oauth-protected-resource"
_CALLER = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
_INNER_EQUALS = re.compile(r"=+[^=]")


class BearerTokens:
    """The tokens that may call this server, checked in constant time; a `TokenVerifier` of the MCP SDK."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        if not tokens:
            raise ConfigError("Give at least one bearer token.")
        short = [name for name, token in tokens.items() if len(token) < 16]
        if short:
            raise ConfigError(
                f"Bearer tokens must be at least 16 characters (too short: {', '.join(short)}); use secrets.token_urlsafe(32)."
            )
        self._tokens = [(name, token.encode()) for name, token in tokens.items()]

    @classmethod
    def from_env(cls, name: str, environ: Mapping[str, str] | None = None) -> BearerTokens:
        value = (os.environ if environ is None else environ).get(name, "")
        entries = [entry for entry in re.split(r"[\s,]+", value) if entry]
        if not entries:
            raise ConfigError(f"The environment variable {name} (auth_token_env) is empty or unset; set it to one or more bearer tokens.")
        tokens: dict[str, str] = {}
        for number, entry in enumerate(entries, 1):
            where = f"{name}: entry {number} of {len(entries)}"
            caller, colon, token = entry.partition(":")
            if colon:
                if not _CALLER.fullmatch(caller):
                    raise ConfigError(f"{where} has a colon, so it must be NAME:TOKEN with a NAME of 1 to 64 of A-Z a-z 0-9 _ . @ -.")
                if not token:
                    raise ConfigError(f"{where} names a caller but gives no token after the colon.")
            elif _INNER_EQUALS.search(entry):
                raise ConfigError(
                    f"{where} has '=' inside it. Name a caller with NAME:TOKEN (NAME=TOKEN is no longer read, since "
                    "base64 tokens end in '='); a token with '=' inside it must be named the same way."
                )
            else:
                caller, token = _digest_name(entry), entry
            if len(token) < 16:
                raise ConfigError(f"{where}: the token is shorter than 16 characters; use secrets.token_urlsafe(32).")
            if caller in tokens:
                raise ConfigError(f"{where}: the caller {caller!r} is given twice; give each token its own name.")
            tokens[caller] = token
        return cls(tokens)

    def caller(self, token: str) -> str | None:
        """The name of the caller holding `token`, or None; every token is compared, in constant time."""
        given = token.encode()
        found = None
        for name, expected in self._tokens:
            if hmac.compare_digest(given, expected):
                found = name
        return found

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        caller = self.caller(token)
        return AccessToken(token="", client_id=caller, scopes=[]) if caller is not None else None

    async def authenticate(self, headers: Mapping[str, str]) -> Any:
        """The SDK's `AuthenticatedUser` for a request's headers (lower-case names), or None."""
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        value = headers.get("authorization", "")
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        access = await self.verify_token(token.strip())
        return AuthenticatedUser(access) if access is not None else None


def _digest_name(token: str) -> str:
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:12]


def metadata_url(resource: str) -> str:
    """RFC 9728 section 3.1: the well-known path goes between the host and the resource's path."""
    scheme, _, rest = resource.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}{WELL_KNOWN}{slash + path if path else ''}"


def protected_resource_metadata(resource: str, name: str) -> dict[str, Any]:
    """What a standard client learns before it has a token: this server wants a bearer token in a header.
    No authorization server is listed: tokens are given to clients out of band."""
    return {"resource": resource, "bearer_methods_supported": ["header"], "resource_name": name}


def unauthorized(resource: str, *, given: bool) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """A 401 that tells both people and clients what to send."""
    error = "invalid_token" if given else "invalid_request"
    description = (
        "The bearer token is not one this server accepts; ask its operator for a token."
        if given
        else "This server needs a bearer token: send 'Authorization: Bearer <token>'."
    )
    # RFC 6750 section 3.1: a request without credentials gets no error code, only the challenge.
    detail = f'error="{error}", error_description="{description}", ' if given else ""
    challenge = f'Bearer {detail}resource_metadata="{metadata_url(resource)}"'
    body = json.dumps({"error": error, "error_description": description}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", challenge.encode()),
    ]
    return 401, headers, body
