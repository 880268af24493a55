"""How much of each module of dagtools/ a test run ran, from its coverage data; exits 1 where one ran none.

    pytest -m "not e2e and not slow" -n 2 --cov=dagtools --cov-report=
    python -m tests.coverage_report            # reads .coverage; --data-file PATH for another
    python -m tests.coverage_report --at-least dagtools/mcpserver/=70   # and each module there >= 70% of lines

Every module file under dagtools/ is listed, the ones never imported too (coverage's own report leaves
those out): its statements, the lines that ran and their share, least covered first. The fast subset
keeps every module in reach of the edit-test loop, so a module none of whose lines ran there fails the
check, named, with what to do. `.ci/run` runs it on the fast subset's data before the other tests add
theirs, and again on the whole run's with `--at-least`: a module under the prefix whose share of lines
is below the floor fails it. The Python processes the tests start (`dagtools mcp` launched as clients
start it) are measured too (coverage.py's subprocess support, `[tool.coverage.run]` in pyproject.toml),
and their lines count.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dagtools"


@dataclass(frozen=True)
class ModuleCoverage:
    path: str  # relative to the repository, e.g. dagtools/calls/_batch.py
    statements: int
    run: int

    @property
    def share(self) -> float:
        return 1.0 if self.statements == 0 else self.run / self.statements

    @property
    def untouched(self) -> bool:
        """Statements, and not one of them ran (a module without statements has nothing to run)."""
        return self.statements > 0 and self.run == 0


def module_files(package: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def measure(data_file: Path, package: Path = PACKAGE) -> list[ModuleCoverage]:
    """Each module's statements and the lines that ran, from the coverage data in `data_file`."""
    import coverage

    if not data_file.is_file():
        raise FileNotFoundError(
            f"{data_file} does not exist: run the tests with --cov=dagtools first "
            '(pytest -m "not e2e and not slow" -n 2 --cov=dagtools --cov-report=)'
        )
    cov = coverage.Coverage(data_file=str(data_file), config_file=False)
    cov.load()
    measured = {str(Path(name).resolve()) for name in cov.get_data().measured_files()}
    modules = []
    for path in module_files(package):
        _, statements, _, missing, _ = cov.analysis2(str(path))
        ran = len(statements) - len(missing) if str(path.resolve()) in measured else 0
        modules.append(ModuleCoverage(str(path.relative_to(package.parent)), len(statements), ran))
    return modules


def report(modules: list[ModuleCoverage]) -> str:
    width = max(len(m.path) for m in modules)
    lines = [f"{'module':<{width}}  {'stmts':>5}  {'run':>5}  {'cover':>5}"]
    for module in sorted(modules, key=lambda m: (m.share, m.path)):
        flag = "  <- no line ran" if module.untouched else ""
        lines.append(f"{module.path:<{width}}  {module.statements:>5}  {module.run:>5}  {module.share:>5.0%}{flag}")
    statements = sum(m.statements for m in modules)
    run = sum(m.run for m in modules)
    lines.append(f"{'TOTAL':<{width}}  {statements:>5}  {run:>5}  {run / max(statements, 1):>5.0%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.coverage_report", description=__doc__.split("\n")[0])
    parser.add_argument("--data-file", type=Path, default=ROOT / ".coverage", help="coverage data to read (default: .coverage)")
    parser.add_argument(
        "--at-least",
        action="append",
        default=[],
        metavar="PREFIX=PERCENT",
        help="fail when a module whose path starts with PREFIX runs under PERCENT of its lines (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        floors = [(prefix, float(percent) / 100) for prefix, _, percent in (f.rpartition("=") for f in args.at_least)]
    except ValueError:
        parser.error("--at-least takes PREFIX=PERCENT, e.g. dagtools/mcpserver/=70")
    try:
        modules = measure(args.data_file)
    except FileNotFoundError as error:
        print(f"coverage_report: {error}", file=sys.stderr)
        return 2
    print(report(modules))
    untouched = [m.path for m in modules if m.untouched]
    if untouched:
        print(
            f"\n{len(untouched)} module(s) of dagtools/ ran no line in these tests: {', '.join(untouched)}. "
            "Add a test that runs in this process and is neither e2e nor slow (see tests/conftest.py), "
            "or delete the module if nothing uses it.",
            file=sys.stderr,
        )
        return 1
    print(f"\nEvery one of the {len(modules)} modules of dagtools/ ran in these tests.")
    below = [
        f"{m.path} ({m.share:.0%} < {floor:.0%})"
        for prefix, floor in floors
        for m in modules
        if m.path.startswith(prefix) and m.share < floor
    ]
    if below:
        print(
            f"\n{len(below)} module(s) run fewer of their lines than their floor: {', '.join(below)}. "
            "Add tests that reach the lines `coverage report -m` lists as missing.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
