"""Serving one `McpToolServer` until the client or a signal stops it: over stdio, or streamable HTTP
under uvicorn. The schema is loaded first, outside the event loop that serves it."""

from __future__ import annotations

import gc
import sys

import anyio

from ._app import check_exposure
from ._auth import OAuthResource
from ._banner import describe_server
from ._config import McpConfig
from ._server import McpToolServer

__all__ = ["serve_http", "serve_mcp", "serve_stdio"]


def serve_mcp(config: McpConfig) -> None:
    """Serve the configured API over the configured transport, after the exposure check."""
    if config.transport == "http":
        check_exposure(config)
    server = McpToolServer(config)
    print(describe_server(server), file=sys.stderr, flush=True)  # stdout is the protocol in stdio mode
    gc.collect()
    gc.freeze()  # the schema and catalogue live as long as the process: later collections skip them
    anyio.run(serve_http if config.transport == "http" else serve_stdio, server)


async def serve_stdio(server: McpToolServer) -> None:
    from mcp.server.stdio import stdio_server

    try:
        await server.check_store()
        async with stdio_server() as (read_stream, write_stream):
            await server.server.run(read_stream, write_stream, server.server.create_initialization_options())
    finally:
        await server.aclose()


async def serve_http(server: McpToolServer) -> None:
    import uvicorn

    from ._connections import guarded_protocol

    c = server.config
    app = server.http_app()
    # Deadlines for reading requests and a cap on connections per address (`_connections`).
    config = uvicorn.Config(app, host=c.host, port=c.port, log_level="warning", lifespan="on", http=guarded_protocol(c))
    try:
        await server.check_store()
        if isinstance(app.tokens, OAuthResource):  # the authorization server may come up later: said, not fatal
            trouble = await app.tokens.prepare()
            if trouble:
                print(f"dagtools mcp: {trouble} Until then, requests with a token are answered 503.", file=sys.stderr, flush=True)
        await uvicorn.Server(config).serve()
    finally:
        await server.aclose()
