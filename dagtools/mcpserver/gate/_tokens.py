"""`BearerTokens`: static bearer tokens, read from the environment, that name the callers holding them.

The tokens come from an environment variable named in the config (`auth_token_env`), never from the
config file or the command line. It holds tokens separated by commas or whitespace; `alice:TOKEN` names
the caller (the token is everything after the first colon; no token alphabet in use has a colon), else a
caller is named after a digest of its token. A bare entry with `=` inside it (not as trailing padding) is
refused: it is the old `NAME=TOKEN` form, or a token to name. No message shows a token, nor any part of
an entry that might be one. Every caller may write; tokens are given out of band, so the metadata names
no authorization server.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Mapping
from typing import Any

from ..._errors import ConfigError
from ._authenticator import Authenticator, Refused
from ._discovery import protected_resource_metadata

__all__ = ["BearerTokens"]

_CALLER = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
_INNER_EQUALS = re.compile(r"=+[^=]")


class BearerTokens(Authenticator):
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

    def metadata(self, resource: str, name: str) -> dict[str, Any]:
        return protected_resource_metadata(resource, name)

    def caller_of(self, user: Any) -> str:
        return f"caller:{user.access_token.client_id}"

    async def authenticate(self, headers: Mapping[str, str]) -> Any:
        """The SDK's `AuthenticatedUser` for a request's headers (lower-case names); else raises `Refused` 401."""
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        value = headers.get("authorization")
        scheme, _, token = (value or "").partition(" ")
        access = await self.verify_token(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
        if access is not None:
            return AuthenticatedUser(access)
        if value is None:
            raise Refused(401, "invalid_request", "This server needs a bearer token: send 'Authorization: Bearer <token>'.")
        raise Refused(401, "invalid_token", "The bearer token is not one this server accepts; ask its operator for a token.")


def _digest_name(token: str) -> str:
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:12]
