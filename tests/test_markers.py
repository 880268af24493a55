"""The `e2e` and `slow` lists in tests/conftest.py name tests that exist: a renamed test would otherwise
fall silently back into the fast subset."""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

from .conftest import E2E, SLOW

TESTS = Path(__file__).resolve().parent


def functions_of(module: str) -> list[str]:
    tree = ast.parse((TESTS / module).read_text())
    return [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")]


@pytest.mark.parametrize("table", [E2E, SLOW], ids=["e2e", "slow"])
def test_every_listed_pattern_names_a_test_of_its_module(table: dict[str, tuple[str, ...]]) -> None:
    stale = []
    for module, patterns in table.items():
        if module == "*":
            continue
        assert (TESTS / module).is_file(), f"tests/conftest.py lists tests/{module}, which does not exist"
        names = functions_of(module)
        stale += [f"{module}::{p}" for p in patterns if not any(fnmatch.fnmatchcase(name, p.split("[")[0]) for name in names)]
    assert stale == [], f"tests/conftest.py lists tests that no longer exist: {stale}"


def test_the_markers_are_registered(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert {"e2e", "slow"} <= registered
