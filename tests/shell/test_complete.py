"""Completion as a line is typed: tools (and built-ins first on a line), the objects held of the tool's
type, argument names not given yet, enum values (also inside a list), and IDs for other arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagtools import compile_catalogue, load_schema
from dagtools.shell._complete import complete_line

DESK = f"{Path(__file__).resolve().parent / 'desk_api.py'}:schema"
HELD = [("Repository#1", "Repository"), ("Issue#1", "Issue"), ("Repository#2", "Repository")]


@pytest.fixture(scope="module")
def catalogue():
    return compile_catalogue(load_schema(DESK).schema)


@pytest.mark.parametrize(
    ("text", "back", "candidates"),
    [
        ("Query_re", -8, ["Query_repository"]),
        ("he", -2, ["help", "held"]),
        ("Query_repository owner=x | Repository_is", -13, ["Repository_issues"]),
        ("Repository_issues ", 0, ["Repository#2", "Repository#1", "first=", "states=", "fields="]),
        ("Repository_issues Repository#1 ", 0, ["first=", "states=", "fields="]),
        ("Repository_issues Repository#1 first=3 s", -1, ["states="]),
        ("Repository_issues states=", 0, ["[OPEN", "[CLOSED"]),
        ("Repository_issues states=[OPEN, C", -8, ["[OPEN, CLOSED"]),
        ("Query_repository owner=Rep", -3, ["Repository#2", "Repository#1"]),
        ("Query_repository owner=", 0, []),
        ("help Iss", -3, ["Issue_number", "Issue_title", "Issue_state", "Issue_author", "Issue"]),
        ("Nope_nope ", 0, []),
    ],
)
def test_completion(catalogue, text, back, candidates):
    assert complete_line(catalogue, HELD, text) == (back, candidates)


def test_an_enum_argument_completes_its_values():
    catalogue = compile_catalogue(load_schema(f"{Path(__file__).resolve().parents[2] / 'examples' / 'kitchen' / 'api.py'}:schema").schema)
    assert complete_line(catalogue, [], "Potato_slice shape=S") == (-1, ["STICKS", "SLICES"])
