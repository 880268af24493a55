"""tests/ is laid out like the package: every folder of test modules is named after a package of dagtools/
(or is tests/interop/, the servers someone else wrote), and is a package itself, so its modules import
as tests.FOLDER.MODULE and two folders may hold modules of the same name."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "dagtools"
OWN_FOLDERS = {"interop"}


def folders_of_tests() -> list[Path]:
    return sorted({p.parent for p in TESTS.rglob("test_*.py") if "node_modules" not in p.parts and p.parent != TESTS})


def test_every_folder_of_tests_is_named_after_a_package_of_dagtools():
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    strays = [f.relative_to(TESTS).as_posix() for f in folders_of_tests() if f.name not in packages | OWN_FOLDERS]
    assert strays == [], f"tests/ folders not named after a package of dagtools/ ({', '.join(sorted(packages))}): {strays}"
    assert all(f.parent == TESTS for f in folders_of_tests()), "tests/ is one level deep, as dagtools/ is"


def test_every_folder_of_tests_is_a_package():
    loose = [f.relative_to(TESTS).as_posix() for f in folders_of_tests() if not (f / "__init__.py").is_file()]
    assert loose == [], f"add an __init__.py to tests/{loose[0] if loose else ''}: its modules would import by their bare names"
