"""tests/coverage_report.py: every module of a package is listed from coverage data, the ones never
imported too, and a module none of whose lines ran is what fails the check."""

from __future__ import annotations

from pathlib import Path

import coverage

from .coverage_report import main, measure, report


def package(root: Path) -> Path:
    pkg = root / "pkg"
    (pkg / "inner").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "used.py").write_text("A = 1\n\n\ndef f():\n    return A\n")
    (pkg / "inner" / "__init__.py").write_text("")
    (pkg / "inner" / "never.py").write_text("B = 2\nC = 3\n")
    return pkg


def test_modules_never_imported_are_listed_and_flagged(tmp_path: Path) -> None:
    pkg = package(tmp_path)
    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    data.add_lines({str(pkg / "__init__.py"): [], str(pkg / "used.py"): [1, 4]})  # f() defined, never called
    data.write()
    modules = {m.path: m for m in measure(tmp_path / ".coverage", pkg)}
    assert set(modules) == {"pkg/__init__.py", "pkg/used.py", "pkg/inner/__init__.py", "pkg/inner/never.py"}
    assert (modules["pkg/used.py"].statements, modules["pkg/used.py"].run) == (3, 2)
    assert (modules["pkg/inner/never.py"].statements, modules["pkg/inner/never.py"].run) == (2, 0)
    assert [m.path for m in modules.values() if m.untouched] == ["pkg/inner/never.py"]  # empty modules have nothing to run
    lines = report(list(modules.values())).splitlines()
    assert lines[1].startswith("pkg/inner/never.py") and lines[1].endswith("0%  <- no line ran")
    assert lines[-1].split() == ["TOTAL", "5", "2", "40%"]


def test_missing_data_says_how_to_make_it(tmp_path: Path, capsys) -> None:
    assert main(["--data-file", str(tmp_path / "none")]) == 2
    assert "run the tests with --cov=dagtools first" in capsys.readouterr().err


def test_a_module_under_its_floor_fails_the_check_by_name(tmp_path: Path, capsys) -> None:
    from .coverage_report import PACKAGE, module_files

    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    lines = {str(path): list(range(1, path.read_text().count("\n") + 2)) for path in module_files()}
    banner = PACKAGE / "mcpserver" / "_banner.py"
    lines[str(banner)] = lines[str(banner)][: len(lines[str(banner)]) // 4]  # its imports and first lines only
    data.add_lines(lines)
    data.write()
    # one run (each reads every module): a floor every module meets, and one a module falls under
    floors = ["--at-least", "dagtools/load/=70", "--at-least", "dagtools/mcpserver/=70"]
    assert main(["--data-file", str(tmp_path / ".coverage"), *floors]) == 1
    said = capsys.readouterr()
    assert "dagtools/mcpserver/_banner.py (" in said.err and "< 70%" in said.err
    assert "1 module(s) run fewer" in said.err, "only the module under its floor is named, none under the floor it meets"
    assert "dagtools/mcpserver/_server.py" not in said.err and "dagtools/load/" not in said.err
    assert "%" in said.out.splitlines()[1], "each module's line share is printed"
