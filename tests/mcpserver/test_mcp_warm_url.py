"""A URL source's warm start: `dagtools mcp URL` launched twice on one cache, over stdio and HTTP, with
the official MCP client, against public schemas served over loopback as their APIs serve them,
including those whose introspection a lenient load must tolerate (GitHub's, Shopify's)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from tests.conftest import FORGE_JSON, shared_schema_path  # noqa: E402
from tests.mcpserver.test_mcp import DAGTOOLS, ROOT, http_client  # noqa: E402
from tests.mcpserver.test_mcp_url import McpHttp, subprocess_env  # noqa: E402


@contextmanager
def served(introspection: Path) -> Iterator[str]:
    """An API on loopback that answers any query with this introspection answer, as it was captured."""
    raw = json.loads(introspection.read_text(encoding="utf-8-sig"))
    body = json.dumps(raw if "data" in raw else {"data": raw}).encode()

    class Api(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/graphql"
    finally:
        server.shutdown()
        server.server_close()


def compiled_listings(cache: Path) -> int:
    """How many first tool lists the compiled cache holds."""
    count = 0
    for path in (cache / "compiled").rglob("*"):
        if path.is_file():
            try:
                count += len(json.loads(path.read_bytes()).get("listings") or {})
            except (ValueError, AttributeError):
                continue
    return count


def said_at_start(url: str, cache: Path) -> str:
    done = subprocess.run(
        [DAGTOOLS, "-v", "mcp", url], cwd=str(ROOT), env=subprocess_env(cache), input="", capture_output=True, text=True, timeout=120
    )
    return done.stderr


@pytest.mark.parametrize(
    "schema",
    [FORGE_JSON, *(pytest.param(n, marks=pytest.mark.public_schemas) for n in ("github.schema.json", "shopify.storefront.schema.json"))],
)
async def test_a_url_with_tolerated_warnings_starts_warm_over_stdio(schema: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with served(shared_schema_path(schema)) as url:
        params = StdioServerParameters(command=DAGTOOLS, args=["mcp", url], cwd=str(ROOT), env={"DAGTOOLS_CACHE_DIR": str(cache)})
        async with Client(params) as client:
            first = (await client.list_tools()).tools
        assert compiled_listings(cache) == 1, "the first start wrote no compiled catalogue and listing"
        said = said_at_start(url, cache)
        assert "loaded from its compiled form" in said and "tolerated in the schema" in said, said
        async with Client(params) as client:
            assert (await client.list_tools()).tools == first


@pytest.mark.parametrize("schema", [FORGE_JSON, pytest.param("github.schema.json", marks=pytest.mark.public_schemas)])
async def test_a_url_with_tolerated_warnings_starts_warm_over_http(schema: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with served(shared_schema_path(schema)) as url:
        for start in range(2):
            with McpHttp(url, cache) as server:
                async with http_client(server.url, "auto") as client:
                    listed = (await client.list_tools()).tools
            assert listed and compiled_listings(cache) == 1, start
            if start == 0:
                assert os.path.isdir(cache / "compiled")
        assert "loaded from its compiled form" in said_at_start(url, cache)
