"""The floor `dagtools mcp --transport http` is measured against under load: the official SDK's
`MCPServer` with one trivial tool, served by uvicorn over streamable HTTP on loopback, as dagtools is.

    python -P bench/_floor_http.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("floor")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


if __name__ == "__main__":
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
