"""`dagtools mcp`: one GraphQL API as an MCP server, one dagtools session per MCP client.

`McpToolServer` (`_server`) is the MCP face built on the SDK's low-level server (imported lazily: the
SDK is the `mcp` extra), `McpConfig` (`_config`) its options and config file, `serve_mcp` (`_serve`)
serves it over stdio or HTTP. Around it, each subpackage is one concept, met through its `__init__`:
`gate` (who may call), `transport` (how HTTP clients reach it, what a call may carry), `sessions` (which
session a request belongs to, the pool, what a client sees of a session) and `listing` (the tool
lists a client is shown over time).
"""

from ._config import McpConfig, load_mcp_config
from ._serve import serve_mcp
from ._server import McpToolServer

__all__ = ["McpConfig", "McpToolServer", "load_mcp_config", "serve_mcp"]
