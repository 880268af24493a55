"""The benches' own checks can fail: a preview column that would overflow the budget does not fit, a
shown value that is not the server's is caught, bookkeeping is told by its shape, and the chain
document bench's search for the heaviest chains finds the heaviest one and counts a chain it could not
prepare as a failure."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str) -> Any:
    """A bench module, loaded without leaving bench/ on the path (its mcp.py would hide the SDK)."""
    kept = list(sys.path)
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = kept
    return module


previews = _load("previews")
chain_documents = _load("chain_documents")


def test_a_column_fits_only_when_the_grown_answer_stays_within_the_budget():
    answer = {"result": ["Book#1", "Book#2"], "preview": {"Book#1": {"title": "Dune"}, "Book#2": {"title": "Emma"}}}
    size = previews._size(answer)
    assert previews._fits(answer, ["Book#1", "Book#2"], "year", [1965, 1815], size + 40)
    assert not previews._fits(answer, ["Book#1", "Book#2"], "year", [1965, 1815], size + 10)
    assert "year" not in answer["preview"]["Book#1"]  # measured on a copy


def test_shown_values_are_checked_against_the_servers():
    assert previews._true("Dune", "Dune")
    assert previews._true("A long sum…", "A long summary of the book")
    assert not previews._true("Dune", "Emma")
    assert not previews._true("A long sum", "A long summary of the book")  # cut without saying so


def test_bookkeeping_is_told_by_the_shape_of_its_value():
    assert previews._bookkeeping("2024-05-01T10:00:00Z") and previews._bookkeeping("2024-05-01")
    assert previews._bookkeeping("https://example.org/x")
    assert not previews._bookkeeping("Dune") and not previews._bookkeeping(1965)


def test_the_heaviest_chain_is_found_through_light_and_heavy_steps():
    # (tool, next type, bytes as the last step, bytes on the way)
    links = {
        "A": [("A_light", "B", 10, 10), ("A_heavy", "C", 50, 5)],
        "B": [("B_end", None, 100, 0)],
        "C": [("C_end", None, 20, 0), ("C_b", "B", 30, 3)],
    }
    assert chain_documents._heaviest(links, "A", 1)[0] == ["A_heavy"]
    assert chain_documents._heaviest(links, "A", 2)[0] == ["A_light", "B_end"]
    assert chain_documents._heaviest(links, "A", 3)[0] == ["A_heavy", "C_b", "B_end"]


_SMALL = """
type Query { node(id: ID!): Node }
interface Node { id: ID! }
type Book implements Node { id: ID! title: String author: Author }
type Author implements Node { id: ID! name: String books: [Book!] }
"""


def test_a_chain_the_session_refuses_is_counted_with_its_reason(monkeypatch):
    from graphql import build_schema

    from dagtools import ToolCallError, compile_catalogue

    catalogue = compile_catalogue(build_schema(_SMALL), relay_ids=True)
    size, chain, unprepared = chain_documents.largest_chain_document(catalogue)
    assert size > 0 and chain and unprepared == []
    prepare = chain_documents.prepare_chain

    def refusing_long_chains(calls: Any, steps: list[dict[str, Any]]) -> Any:
        if len(steps) > 1:
            raise ToolCallError("too long for this check")
        return prepare(calls, steps)

    monkeypatch.setattr(chain_documents, "prepare_chain", refusing_long_chains)
    short, chain, unprepared = chain_documents.largest_chain_document(catalogue)
    assert unprepared and all("ToolCallError: too long for this check" in why for why in unprepared)
    assert all(why.count(" -> ") >= 1 for why in unprepared) and " -> " not in chain
    assert 0 < short < size
