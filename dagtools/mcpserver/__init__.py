"""`dagtools mcp`: one GraphQL API as an MCP server, one dagtools session per MCP client.

`server` is the MCP face built on the SDK's low-level server (imported lazily: the SDK is the `mcp`
extra); `toolsets` holds the fixed and dynamic toolsets; `config` the options and config file; `cli`
the command.
"""

from ._config import McpConfig, load_mcp_config
from ._serve import serve_mcp
from ._server import McpToolServer

__all__ = ["McpConfig", "McpToolServer", "load_mcp_config", "serve_mcp"]
