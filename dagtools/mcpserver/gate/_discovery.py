"""Discovery: what a client learns of this server's authorization before it holds a token.

The protected-resource metadata (RFC 9728) at `WELL_KNOWN` says where tokens come from and which scopes
to ask for; every refusal carries a `WWW-Authenticate` challenge (RFC 6750) that points at it, or a
`Retry-After` when the authorization server cannot be asked now.
"""

from __future__ import annotations

import json
from typing import Any

from ._authenticator import Refused

__all__ = ["WELL_KNOWN", "metadata_url", "protected_resource_metadata", "unauthorized"]

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def protected_resource_metadata(
    resource: str, name: str, *, servers: list[str] | None = None, scopes: list[str] | None = None
) -> dict[str, Any]:
    """What a standard client learns before it has a token (RFC 9728): this server wants a bearer token in
    a header, from the authorization `servers` named (none: tokens are given out of band), with `scopes`."""
    data: dict[str, Any] = {"resource": resource, "bearer_methods_supported": ["header"], "resource_name": name}
    if servers:
        data["authorization_servers"] = servers
    if scopes:
        data["scopes_supported"] = scopes
    return data


def metadata_url(resource: str) -> str:
    """RFC 9728 section 3.1: the well-known path goes between the host and the resource's path."""
    scheme, _, rest = resource.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}{WELL_KNOWN}{slash + path if path else ''}"


def unauthorized(resource: str, *, given: bool, refused: Refused) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """A refusal that tells both people and clients what to send: 401 or 403 with a `WWW-Authenticate`
    challenge naming the metadata (and the scopes to ask for), or 503 with `Retry-After`. `given`: the
    request sent credentials of some kind."""
    # RFC 6750 section 3.1: a request without credentials gets no error code, only the challenge.
    quoted = refused.description.replace("\\", "/").replace('"', "'")  # a quoted-string holds neither as it is
    parts = [f'error="{refused.error}"', f'error_description="{quoted}"'] if given or refused.status != 401 else []
    parts.append(f'resource_metadata="{metadata_url(resource)}"')
    if refused.scope:
        parts.append(f'scope="{refused.scope}"')
    body = json.dumps({"error": refused.error, "error_description": refused.description}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if refused.status == 503:
        headers.append((b"retry-after", b"5"))
    else:
        headers.append((b"www-authenticate", ("Bearer " + ", ".join(parts)).encode()))
    return refused.status, headers, body
