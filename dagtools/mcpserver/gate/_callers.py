"""Callers as a request carries them past the gate: who it is, and whether it may only read.

The gate asks its `Authenticator` once per request and marks the request's ASGI scope with the answers;
everything after the gate (session keys, quotas, the session's mutations) reads them here, never the
token nor which kind of authenticator admitted it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CALLER_SCOPE_KEY", "READ_ONLY_SCOPE_KEY", "caller_of", "read_only"]

#: Set on an admitted request: the caller's name (`Authenticator.caller_of`).
CALLER_SCOPE_KEY = "dagtools.caller"
#: Set on a request whose caller may not write (an OAuth access token without the write scope): its sessions are read-only ones.
READ_ONLY_SCOPE_KEY = "dagtools.read_only"


def caller_of(request: Any) -> str | None:
    """The authenticated caller of an HTTP request (named by the gate), or None: an OAuth token's subject
    at its issuer (whichever client it used), else the name of a static token."""
    scope = getattr(request, "scope", None)
    caller = scope.get(CALLER_SCOPE_KEY) if isinstance(scope, Mapping) else None
    return caller if isinstance(caller, str) and caller else None


def read_only(request: Any) -> bool:
    """Whether the request's caller may open only read-only sessions (an OAuth token without the write scope)."""
    scope = getattr(request, "scope", None)
    return bool(isinstance(scope, Mapping) and scope.get(READ_ONLY_SCOPE_KEY))
