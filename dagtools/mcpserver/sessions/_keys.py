"""Which keyed session a stateless-era (2026-07-28) request belongs to, and which caller owns it.

A 2026-07-28 request carries no connection, so a key names its session. No two callers may ever
share a session by accident, so a key is one of:
- a key the client sends (`_meta["dagtools/session"]`, else the `Dagtools-Session` HTTP header).
  From an unauthenticated caller over HTTP it must be unguessable: at least 32 characters of
  `A-Z a-z 0-9 _ -` drawn at random (`secrets.token_hex(16)`, a UUID4). From an authenticated
  caller any short name will do, because the caller's identity is part of the session's key;
- no key from an authenticated caller: that caller's own session;
- no key from an unauthenticated caller over HTTP: a fresh session under a key the server issues
  (192 random bits), returned in the result's `_meta["dagtools/session"]` and in a
  `Dagtools-Session` response header. A client that sends it back keeps its session; one that
  does not gets a fresh session each request. The client's address and name are never a key;
- in process (stdio, an in-memory client): the one client of this process.

The values of the forwarded headers are always part of the key, so a session is reachable only with
the credentials it was opened with. Only digests are kept: neither keys nor credentials are stored.

The owner of a session is who quotas count against: the authenticated caller, else "anyone" (an
unauthenticated HTTP client; it has no quota of its own), else the process. The client's address is
neither: a client that moves (a phone changing networks, another proxy, IPv4 then IPv6) keeps its session,
in memory and in the store alike. Only the connection cap (`transport.guarded_protocol`) counts by address.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..._errors import ConfigError
from ..gate import caller_of, read_only

__all__ = ["ISSUED_SCOPE_KEY", "REFUSED_SCOPE_KEY", "SESSION_HEADER", "SESSION_META_KEY", "SessionKey", "session_key_for"]

SESSION_HEADER = "Dagtools-Session"
SESSION_META_KEY = "dagtools/session"
#: Set on a request whose session was opened under a key the server issued: the key, for the HTTP face to hand back.
ISSUED_SCOPE_KEY = "dagtools.issued_session"
#: Set on a request refused for want of room: the seconds to send in `Retry-After` (with status 503).
REFUSED_SCOPE_KEY = "dagtools.refused"

_STRONG_KEY = re.compile(r"[A-Za-z0-9_-]{32,256}")
_ANY_KEY = re.compile(r"[\x21-\x7e]{1,256}")
_WEAK_KEY_HINT = (
    "Send a key of at least 32 random characters of A-Z a-z 0-9 _ - (python -c 'import secrets; "
    "print(secrets.token_hex(16))'), or send none to be issued one, or authenticate."
)


@dataclass(frozen=True)
class SessionKey:
    """Where one request's session lives: `digest` names it, `owner` is who its quota counts against,
    `issued` is a key the server made up for a keyless client and must hand back to it."""

    digest: str
    owner: str
    issued: str | None = None


def session_key_for(ctx: Any, headers: Mapping[str, str], forwarded: Mapping[str, str]) -> SessionKey:
    """The key of the request's session (see the module docstring); a guessable key raises ConfigError."""
    request = getattr(ctx, "request", None)
    meta = (getattr(ctx, "params", None) or {}).get("_meta") or {}
    explicit = meta.get(SESSION_META_KEY) if isinstance(meta, Mapping) else None
    explicit = explicit if explicit is not None else headers.get(SESSION_HEADER.lower())
    caller = caller_of(request) if request is not None else None
    issued: str | None = None
    if request is None:
        owner = "process"
    elif caller is not None:
        owner = caller
    else:
        owner = "anyone"
    if explicit is not None:
        if not isinstance(explicit, str) or not _ANY_KEY.fullmatch(explicit):
            raise ConfigError(f"The {SESSION_HEADER} key must be 1 to 256 printable ASCII characters. {_WEAK_KEY_HINT}")
        if request is not None and caller is None and not _unguessable(explicit):
            raise ConfigError(f"The {SESSION_HEADER} key is too short or too regular for an unauthenticated caller. {_WEAK_KEY_HINT}")
        base = f"key:{explicit}"
    elif request is None:
        base = "process"
    elif caller is not None:
        base = "own"
    else:
        issued = secrets.token_urlsafe(24)
        base = f"key:{issued}"
    # The caller is part of an authenticated session's key: another caller sending the same key
    # reaches a session of its own.
    # A read-only caller's session is another than the one the same caller opens with the write scope.
    mode = "\nread-only" if request is not None and read_only(request) else ""
    material = f"{caller or ''}{mode}\n{base}" + "".join(f"\n{k}: {v}" for k, v in sorted(forwarded.items()))
    return SessionKey(digest=hashlib.sha256(material.encode()).hexdigest(), owner=owner, issued=issued)


def _unguessable(key: str) -> bool:
    """At least 128 bits if drawn at random; a run of few distinct characters is not."""
    return bool(_STRONG_KEY.fullmatch(key)) and len(set(key)) >= 8
