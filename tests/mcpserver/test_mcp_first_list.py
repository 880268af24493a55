"""The first tool list of a `dagtools mcp` start is answered from the compiled cache whichever protocol
era the client that filled it spoke: the official client in its default (2026-07-28) mode fills it as
a handshake-era client does, and either era is then served from it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from dagtools.load._warm_start import load_cached  # noqa: E402
from dagtools.mcpserver import McpConfig  # noqa: E402
from dagtools.mcpserver.listing import cached_listing  # noqa: E402
from tests.clients import measured  # noqa: E402
from tests.mcpserver.test_mcp import DAGTOOLS, ERAS, ROOT, expected_version  # noqa: E402

SCHEMA = str(ROOT / "schemas" / "kitchen.graphql")


async def listed(era: str, cache: Path) -> list[str]:
    params = StdioServerParameters(
        command=DAGTOOLS, args=["mcp", SCHEMA], cwd=str(ROOT), env=measured({"DAGTOOLS_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)})
    )
    async with Client(params, mode=era) as client:
        assert client.protocol_version == expected_version(era)
        return [t.name for t in (await client.list_tools()).tools]


@pytest.mark.parametrize("era", ERAS)
async def test_the_first_client_fills_the_cached_list_in_either_era(era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGTOOLS_CACHE_DIR", str(tmp_path))
    assert cached_listing(load_cached(SCHEMA), McpConfig(source=SCHEMA)) is None  # a fresh cache
    first = await listed(era, tmp_path)
    remembered = cached_listing(load_cached(SCHEMA), McpConfig(source=SCHEMA))
    assert remembered is not None, f"a {era} client's first list was not kept for the next start"
    assert [t["name"] for t in remembered] == first
    for other in ERAS:  # the next start answers either era from it, with the same tools
        assert await listed(other, tmp_path) == first
