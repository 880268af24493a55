"""`Authenticator`, the one interface the HTTP gate asks about a caller, whatever proves who it is.

Static bearer tokens (`BearerTokens`) and OAuth 2.1 access tokens (`OAuthResource`) answer the same
questions: who holds these headers (or `Refused`: what to tell the client), what name its sessions and
quotas go under, whether it may write, what the protected-resource metadata says, and what to tell the
operator at start when the authorization server cannot be asked yet. The gate asks only these, so it
never needs to know which kind it holds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

__all__ = ["Authenticator", "Refused"]


class Refused(Exception):
    """A request turned away before it reaches a session: 401 (no token, or one not accepted), 403 (a
    scope is missing: `scope` says what to ask for) or 503 (the authorization server cannot be asked
    now). Its description says what to do; it never shows the token."""

    def __init__(self, status: int, error: str, description: str, *, scope: str = "") -> None:
        super().__init__(description)
        self.status, self.error, self.description, self.scope = status, error, description, scope


class Authenticator(ABC):
    """Who may call this server, asked by the gate of every HTTP request (see the module docstring)."""

    #: The scope a caller needs for mutation tools to be offered and run; "" when every caller may write.
    write_scope: str = ""

    @property
    def scopes(self) -> list[str]:
        """The scopes a client may ask for, named in challenges and in the metadata (none by default)."""
        return []

    @abstractmethod
    async def authenticate(self, headers: Mapping[str, str]) -> Any:
        """The SDK's `AuthenticatedUser` for a request's headers (lower-case names); else raises `Refused`,
        whose description tells the client what to send instead."""

    @abstractmethod
    def caller_of(self, user: Any) -> str:
        """The name of an admitted caller (`authenticate`'s answer): who its sessions belong to and who its
        quotas count against, the same on every request it makes with any of its tokens."""

    def may_write(self, user: Any) -> bool:
        """Whether an admitted caller may see and call mutation tools (see `write_scope`)."""
        return True

    def needs_write(self) -> Refused:
        """What a caller that may not write is told when it calls a mutation tool: 403 naming the scope, so
        that its client asks for it."""
        return Refused(
            403,
            "insufficient_scope",
            f"Mutation tools need the scope {self.write_scope}; authorize again asking for it.",
            scope=" ".join(self.scopes),
        )

    @abstractmethod
    def metadata(self, resource: str, name: str) -> dict[str, Any]:
        """The protected-resource metadata (RFC 9728) of this server at `resource`, called `name`."""

    async def prepare(self) -> str | None:
        """Fetch now what checking tokens needs, so that a start says at once what is wrong: that (requests
        are then answered 503 until it is right), or None."""
        return None
