"""The floor `dagtools mcp` is measured against: a stdio MCP server on the official SDK that lists one tool.

It imports the SDK and nothing else, so the time from spawning it to its tools/list answer is what
Python and the SDK cost before any server does work of its own.
"""

from __future__ import annotations

import anyio
import mcp_types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_TOOL = mcp_types.Tool(
    name="echo", description="Say the text back.", input_schema={"type": "object", "properties": {"text": {"type": "string"}}}
)


async def _list_tools(ctx: object, params: object) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(tools=[_TOOL])


async def _serve() -> None:
    server = Server("floor", on_list_tools=_list_tools)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
