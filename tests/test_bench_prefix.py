"""bench/prefix.py's figures on the kitchen: the deferred run loses no cached prefix where the format
reveals in place, and the dynamic run does (what the deferred rendering is for)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_prefix", ROOT / "bench" / "prefix.py")
assert _spec is not None and _spec.loader is not None
prefix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prefix)  # it puts bench/ last on sys.path: its mcp.py hides no package


def test_changed_bytes_counts_what_a_prefix_cache_loses():
    assert prefix.changed_bytes("abcdef", "abcdefgh") == 0  # a grown request keeps the whole prefix
    assert prefix.changed_bytes("abcdef", "abXdefgh") == 4  # from the first byte that differs
    assert prefix.changed_bytes("abc", "") == 3


async def test_the_deferred_fries_run_changes_no_byte_of_the_prefix_where_the_format_defers():
    figures = await prefix.measure()
    for provider in ("anthropic", "openai-responses"):
        assert figures["deferred", provider] == (0, 0)
        dynamic_whole, dynamic_tools = figures["dynamic", provider]
        assert dynamic_whole > 0 and dynamic_tools > 0
    # Chat Completions cannot defer: the deferred mode falls back to fixed mode's list there.
    assert figures["deferred", "openai"] == figures["fixed", "openai"]
