"""The sessions `dagtools mcp` holds for its clients: which one a request belongs to (its key and
owner), the pool of keyed sessions, the memory closed ones give back, and what a client sees of one
(the fixed toolset and the MCP shapes of tools and results)."""

import typing as _typing

from ..._lazy import lazy_exports as _lazy_exports
from ._keys import ISSUED_SCOPE_KEY, REFUSED_SCOPE_KEY, SESSION_HEADER, SESSION_META_KEY, SessionKey, session_key_for
from ._memory import MemoryReturn

# Imported on first use: the pool and the toolsets bring the session machinery (and graphql-core),
# which a start served from the compiled cache defers until after its first tool list.
__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "ClientState": "._pool",
        "SessionPool": "._pool",
        "SessionsFull": "._pool",
        "CALL_TOOL": "._toolsets",
        "SCHEMAS_BUDGET": "._toolsets",
        "FixedToolset": "._toolsets",
        "mcp_result": "._toolsets",
        "mcp_tool": "._toolsets",
        "tool_schemas": "._toolsets",
    },
)

if _typing.TYPE_CHECKING:
    from ._pool import ClientState, SessionPool, SessionsFull
    from ._toolsets import CALL_TOOL, SCHEMAS_BUDGET, FixedToolset, mcp_result, mcp_tool, tool_schemas

__all__ = [
    "CALL_TOOL",
    "ClientState",
    "FixedToolset",
    "ISSUED_SCOPE_KEY",
    "MemoryReturn",
    "REFUSED_SCOPE_KEY",
    "SCHEMAS_BUDGET",
    "SESSION_HEADER",
    "SESSION_META_KEY",
    "SessionKey",
    "SessionPool",
    "SessionsFull",
    "mcp_result",
    "mcp_tool",
    "session_key_for",
    "tool_schemas",
]
