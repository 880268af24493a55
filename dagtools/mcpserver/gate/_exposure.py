"""Exposure: the `Authenticator` a server's config asks for, and the refusal to serve open beyond loopback."""

from __future__ import annotations

from ..._errors import ConfigError
from .._config import McpConfig, is_loopback
from ._authenticator import Authenticator
from ._oauth import OAuthResource
from ._tokens import BearerTokens

__all__ = ["check_exposure"]


def check_exposure(config: McpConfig) -> Authenticator | None:
    """The bearer tokens (read from the environment) or OAuth access tokens to require, None for none;
    refuses an open server beyond loopback."""
    tokens: Authenticator | None = None
    if config.oauth_issuer:
        tokens = OAuthResource.from_config(config)
    elif config.auth_token_env:
        tokens = BearerTokens.from_env(config.auth_token_env)
    if tokens is None and not is_loopback(config.host) and not config.allow_unauthenticated:
        raise ConfigError(
            f"Refusing to serve on {config.host} without authentication: anyone who reaches it could call the "
            "API with this server's credentials. Name an OAuth authorization server with --oauth-issuer URL, or set "
            "bearer tokens in an environment variable and name it with --auth-token-env NAME, or pass "
            "--allow-unauthenticated if something in front of this server "
            "authenticates every caller."
        )
    return tokens
