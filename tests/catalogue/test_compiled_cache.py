"""The compiled catalogue on disk: a later start lists exactly what a cold compile lists, without
building the graphql-core schema, and anything changed, damaged or foreign is compiled again."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from dagtools._tools import ToolCall
from dagtools.catalogue._catalogue import compile_catalogue
from dagtools.executors._base import SchemaOnlyExecutor
from dagtools.load._loaded import schema_builds
from dagtools.load._warm_start import load_cached
from dagtools.session._open import catalogue_for
from dagtools.session._session import Session
from tests.conftest import FORGE, ROOT, shared_schema_path

KITCHEN_SDL = ROOT / "schemas" / "kitchen.graphql"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("DAGTOOLS_CACHE_DIR", str(directory))
    return directory


def entries(directory: Path) -> list[Path]:
    return sorted((directory / "compiled").glob("*.json"))


def schema_file(name: str) -> Path:
    return KITCHEN_SDL if name == "kitchen" else shared_schema_path(name)


def listing(catalogue: Any) -> str:
    """Everything a fresh session shows before its first call, as the JSON a client would read."""
    from dagtools.mcpserver.sessions import FixedToolset

    session = Session(catalogue, SchemaOnlyExecutor("a schema file"))
    roots = [n for t in (catalogue.query_type, catalogue.mutation_type) if t for n in catalogue.tools_for_type(t)]
    shown = {
        "names": catalogue.names(),
        "types": catalogue.types(),
        "dynamic": [t.__dict__ for t in session.toolset.list_tools()],
        "fixed": [t.__dict__ for t in FixedToolset(session).list_tools()],
        "root_tools": [t.__dict__ for t in catalogue.tools(roots[:20])],
    }
    return json.dumps(shown, sort_keys=True)


@pytest.mark.parametrize(
    "name",
    [
        FORGE,
        "kitchen",
        *(
            pytest.param(n, marks=pytest.mark.public_schemas)
            for n in ("github.schema.graphql", "linear.schema.graphql", "swapi.schema.graphql")
        ),
    ],
)
def test_a_cached_start_lists_byte_identical_tools_without_building_the_schema(name: str, cache_dir: Path) -> None:
    path = schema_file(name)
    first = load_cached(path)  # builds the schema, compiles, and writes the compiled form
    assert first.built
    cold = listing(compile_catalogue(first.schema))  # a cold compile of the schema just built, the cache aside
    assert listing(catalogue_for(first)) == cold
    assert len(entries(cache_dir)) == 1

    builds = schema_builds()
    again = load_cached(path)
    assert not again.built, "a cached schema is built only when a call needs it"
    assert listing(catalogue_for(again)) == cold
    assert schema_builds() == builds and not again.built
    assert again.warnings == first.warnings


def test_a_changed_schema_or_option_misses_the_cache(tmp_path: Path, cache_dir: Path) -> None:
    sdl = tmp_path / "api.graphql"
    sdl.write_text(KITCHEN_SDL.read_text())
    catalogue_for(load_cached(sdl))
    assert not load_cached(sdl).built

    builds = schema_builds()
    other_options = catalogue_for(load_cached(sdl), mutations=True)  # another option set: compiled from the schema
    assert schema_builds() == builds + 1 and any(n.startswith("Mutation_") for n in other_options.names())
    assert not load_cached(sdl).built and "Mutation_" not in "".join(catalogue_for(load_cached(sdl)).names())

    sdl.write_text(KITCHEN_SDL.read_text() + "\nextend type Potato { grams: Int }\n")
    changed = load_cached(sdl)
    assert changed.built, "a changed schema is never served from the old compiled form"
    assert "Potato_grams" in catalogue_for(changed).names()
    assert len(entries(cache_dir)) == 2


@pytest.mark.parametrize("damage", ["truncated", "not json", "foreign format", "bad catalogue"])
def test_a_damaged_cache_file_is_ignored_and_rebuilt(damage: str, cache_dir: Path) -> None:
    expected = catalogue_for(load_cached(KITCHEN_SDL)).names()
    (entry,) = entries(cache_dir)
    text = entry.read_text()
    data = json.loads(text)
    if damage == "truncated":
        entry.write_text(text[: len(text) // 2])
    elif damage == "not json":
        entry.write_bytes(b"\x00\xff garbage")
    elif damage == "foreign format":
        entry.write_text(json.dumps({**data, "format": 999}))
    else:
        for section in data["catalogues"].values():
            section["tools_in_order"] = [["only a name"]]
        entry.write_text(json.dumps(data))
    loaded = load_cached(KITCHEN_SDL)
    assert catalogue_for(loaded).names() == expected
    assert loaded.built  # compiled again from the schema
    assert not load_cached(KITCHEN_SDL).built, "the rebuilt entry serves the next start"


def test_the_cache_holds_no_header_or_credential(kitchen_url: str, cache_dir: Path) -> None:
    secret = "s3cret-token-4242"
    headers = {"Authorization": f"Bearer {secret}", "X-Api-Key": secret}
    first = load_cached(kitchen_url, headers=headers)
    catalogue_for(first)
    again = load_cached(kitchen_url, headers=headers)
    assert not again.built and again.digest == first.digest
    written = [p for p in cache_dir.rglob("*") if p.is_file()]
    assert entries(cache_dir) and written
    for path in written:
        assert secret not in path.read_text() and secret not in path.name
        assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0 or path.parent == cache_dir


def test_refresh_compiles_again(cache_dir: Path) -> None:
    catalogue_for(load_cached(KITCHEN_SDL))
    assert load_cached(KITCHEN_SDL, refresh=True).built
    assert not load_cached(KITCHEN_SDL).built


async def test_an_mcp_start_from_the_cache_lists_without_the_schema_then_runs_calls(kitchen_url: str, cache_dir: Path) -> None:
    from mcp import Client

    from dagtools.mcpserver import McpConfig, McpToolServer

    config = McpConfig(source=kitchen_url, tools="fixed")

    async def first_list(server: McpToolServer) -> tuple[str, Any]:
        client = Client(server.server, mode="legacy")
        await client.__aenter__()
        listed = await client.list_tools()
        return json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]), client

    cold_server = McpToolServer(config)
    cold, client = await first_list(cold_server)
    await client.__aexit__(None, None, None)

    builds = schema_builds()
    server = McpToolServer(config)
    assert not server.loaded.built and server._catalogue is None
    warm, client = await first_list(server)
    try:
        assert warm == cold, "the cached first list is the list a fresh session shows"
        assert [t.name for t in threading.enumerate() if t.name == "dagtools-warm-up"] or server.loaded.built
        for thread in threading.enumerate():
            if thread.name == "dagtools-warm-up":
                thread.join(60)
        assert schema_builds() == builds + 1, "built once, by the warm-up after the list went out"
        bad = await client.call_tool("callTool", {"tool": "Query_potato", "arguments": {"nope": 1}})
        assert bad.is_error and "nope" in bad.content[0].text
        good = await client.call_tool("callTool", {"tool": "Query_potato", "arguments": {}})
        assert not good.is_error and json.loads(good.content[0].text)["result"] == "Potato#1"
    finally:
        await client.__aexit__(None, None, None)


def test_a_python_source_is_keyed_by_the_sdl_it_prints(cache_dir: Path) -> None:
    source = f"{ROOT / 'examples' / 'kitchen' / 'api.py'}:schema"
    first = load_cached(source)
    compiled = catalogue_for(first)
    again = load_cached(source)
    assert again.digest == first.digest and again.executable
    restored = catalogue_for(again)
    assert restored._schema is None, "restored from the compiled form, not compiled from the schema"
    assert restored.names() == compiled.names()


async def test_open_session_bypasses_or_refreshes_the_compiled_cache(kitchen_url: str, cache_dir: Path) -> None:
    from dagtools.session._open import open_session

    async with await open_session(kitchen_url, cache=False) as session:
        assert "Query_potato" in session.catalogue
    assert not entries(cache_dir), "cache=False neither reads nor writes"
    async with await open_session(kitchen_url) as session:
        assert session.catalogue._schema is not None
    assert len(entries(cache_dir)) == 1
    async with await open_session(kitchen_url) as session:
        assert session.catalogue._schema is None  # restored: built when a call needs it
        result = await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Query_potato"]}))
        result = await session.call_tool(ToolCall(name="Query_potato", arguments={}))
        assert not result.is_error and result.value == {"result": "Potato#1"}
    async with await open_session(kitchen_url, cache="refresh") as session:
        assert session.catalogue._schema is not None
