"""The first tool list a client is shown, kept in the schema's compiled form on disk.

A fresh session's tool list depends only on the schema, the catalogue options and the server's
session options (fixed or dynamic tools, outputs, the active-tool cap), never on a request, so the
list the first client of one start was shown is written beside the compiled catalogue, and the
next start answers `tools/list` from it before importing the session machinery or building the
graphql-core schema. Sessions with inputs (whose objects come from calling the API) or kept in a
store (which may hold more) always list through a real session. Headers are never part of the key.
"""

from __future__ import annotations

import json
from collections.abc import Container
from typing import TYPE_CHECKING, Any

from ...load._cache import content_digest

if TYPE_CHECKING:
    from ...load._loaded import LoadedSchema
    from .._config import McpConfig

__all__ = ["cached_listing", "cached_size", "listable_from_cache", "opens_keyed", "opens_session", "remember_listing"]


def listable_from_cache(config: McpConfig) -> bool:
    """Whether every fresh session of this server lists the same tools (no inputs, no store)."""
    return not config.inputs and not config.durable_store


#: The built-in tools every session lists: part of the key, so a list written before one was added is never served.
_BUILT_IN = "selectTools callTool callChain describeTools save readResult"


def _key(config: McpConfig) -> str:
    shaping = {"tools": config.tools, "lenient": config.lenient, "built-in": _BUILT_IN, **config.session_options}
    return content_digest("mcp-listing", json.dumps(shaping, sort_keys=True, default=repr))[:32]


def cached_listing(loaded: LoadedSchema, config: McpConfig) -> list[dict[str, Any]] | None:
    """The first tool list as written by an earlier start, or None."""
    if loaded.compiled is None or not listable_from_cache(config):
        return None
    found = loaded.compiled.section("listings", _key(config))
    tools = found.get("tools") if found else None
    return tools if isinstance(tools, list) and all(isinstance(t, dict) for t in tools) else None


def remember_listing(loaded: LoadedSchema, config: McpConfig, tools: list[dict[str, Any]], size: list[int]) -> None:
    """Write a fresh session's tool list (and the schema's size, which the start-up block tells) into
    the schema's compiled form, for the next start."""
    if loaded.compiled is None or not listable_from_cache(config):
        return
    listing = {"tools": tools, "size": size}
    if loaded.compiled.section("listings", _key(config)) == listing:
        return
    loaded.compiled.put("listings", _key(config), listing)
    loaded.compiled.write()


def cached_size(loaded: LoadedSchema, config: McpConfig) -> tuple[int, int, int] | None:
    """Object types, their fields and the catalogue's tools, as an earlier start counted them, or None."""
    if loaded.compiled is None or not listable_from_cache(config):
        return None
    found = loaded.compiled.section("listings", _key(config))
    size = found.get("size") if found else None
    if isinstance(size, list) and len(size) == 3 and all(isinstance(n, int) for n in size):
        return size[0], size[1], size[2]
    return None


def opens_session(ctx: Any, config: McpConfig, state_key: str) -> bool:
    """Whether this request opens a connection's session (handshake era), whose list is every fresh session's."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or not listable_from_cache(config):
        return False
    connection = getattr(ctx.session, "_connection", None)
    return connection is not None and state_key not in connection.state


def opens_keyed(ctx: Any, config: McpConfig, held: Container[str] | None) -> bool:
    """Whether a stateless-era request would open a session (its key names none of those `held`), whose
    list is every fresh session's: the first client may speak either era, and both fill the cache."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from ..._errors import ConfigError
    from ..sessions import session_key_for
    from ..transport import forwarded_headers, request_headers

    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or not listable_from_cache(config):
        return False
    headers = request_headers(ctx)
    try:
        key = session_key_for(ctx, headers, forwarded_headers(headers, config.forward_headers))
    except ConfigError:
        return False  # a refused key: the session path says why
    return held is None or key.digest not in held
