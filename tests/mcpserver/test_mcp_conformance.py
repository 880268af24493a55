"""The official MCP conformance suite (`@modelcontextprotocol/conformance`, its server scenarios) against a
launched `dagtools mcp` over streamable HTTP, in fixed and dynamic mode.

The suite and the Node it needs (>= 22) are pinned in tests/conformance/package.json; `npm ci --prefix
tests/conformance` installs both (as .ci/run does). The scenarios a tools-only server fails on purpose
are listed in tests/conformance/expected-failures.yml, each with its reason: the run fails on a failure
not listed there, and on a listed one that now passes. Scenarios listed there as not applicable (they
call a fixture tool dagtools does not have, and dagtools' answer to an unknown tool happens to meet
their check) are never counted as passes: each one's recorded result must be that unknown-tool answer,
whether the suite calls it passed or failed, so a change in why it passes is seen.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients import measured
from tests.conftest import ROOT
from tests.mcpserver.test_mcp_launched import LaunchedHttp

SUITE = ROOT / "tests" / "conformance"
EXPECTED = SUITE / "expected-failures.yml"
PACKAGE = SUITE / "node_modules" / "@modelcontextprotocol" / "conformance"
KITCHEN = f"{ROOT / 'examples' / 'kitchen' / 'api.py'}:schema"
DAGTOOLS = str(Path(sys.executable).with_name("dagtools"))


def _major(node: str) -> int:
    try:
        run = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return 0
    found = re.match(r"v(\d+)\.", run.stdout.strip())
    return int(found.group(1)) if found else 0


def node_22() -> str:
    """Node >= 22: the one tests/conformance installs, else the one on PATH; skips, saying why, without."""
    for node in (str(SUITE / "node_modules" / ".bin" / "node"), shutil.which("node")):
        if node and Path(node).exists() and _major(node) >= 22:
            return node
    pytest.skip("the conformance suite needs Node >= 22: run `npm ci --prefix tests/conformance` (it installs one, as .ci/run does)")


def listed(section: str) -> dict[str, str]:
    """The scenarios of one section of the file (`server`, `not_applicable`) and their reasons."""
    found: dict[str, str] = {}
    current = ""
    for line in EXPECTED.read_text().splitlines():
        if re.match(r"^[\w-]+:", line):
            current = line.split(":", 1)[0]
        item = re.match(r"^  - ([\w-]+)\s*(?:#\s*(.*))?$", line)
        if item and current == section:
            found[item.group(1)] = (item.group(2) or "").strip()
    return found


def expected_failures() -> dict[str, str]:
    """The scenarios dagtools fails on purpose, and why."""
    return listed("server")


def not_applicable() -> dict[str, str]:
    """The scenarios that do not apply though the suite may pass them: each with the fixture tool it calls."""
    tools = {}
    for name, reason in listed("not_applicable").items():
        named = re.match(r"fixture tool (\w+);", reason)
        assert named, f"{name}: write its reason as `# fixture tool NAME; why`"
        tools[name] = named.group(1)
    return tools


def test_every_expected_failure_says_why_once() -> None:
    lines = [line for line in EXPECTED.read_text().splitlines() if line.startswith("  - ")]
    failures, inapplicable = expected_failures(), listed("not_applicable")
    assert len(failures) + len(inapplicable) == len(lines), "a scenario is listed twice, or a line is not `  - scenario  # reason`"
    assert not set(failures) & set(inapplicable), "a scenario is either an expected failure or not applicable"
    assert [name for name, reason in {**failures, **inapplicable}.items() if not reason] == [], "every listed scenario says why after #"
    assert all(re.match(r"fixture tool \w+; \w", reason) for reason in inapplicable.values()), (
        "a not-applicable scenario names its fixture tool: `# fixture tool NAME; why`"
    )
    assert {"tools-call-simple-text", "tools-call-error"} <= set(inapplicable), inapplicable
    assert "tools-list" not in failures and "server-initialize" not in failures


def unknown_tool_answers(results: Path, scenario: str, tool: str) -> list[str]:
    """What is wrong with the recorded result of `scenario`, which should be dagtools' unknown-tool
    answer for `tool` in every check: an error result naming it (empty when it is)."""
    recorded = sorted(results.glob(f"server-{scenario}-*/checks.json"))
    if not recorded:
        return [f"{scenario}: no recorded result in {results}"]
    wrong = []
    for check in json.loads(recorded[-1].read_text()):
        result = (check.get("details") or {}).get("result") or {}
        texts = " ".join(str(c.get("text", "")) for c in result.get("content") or [])
        if not result.get("isError") or f"There is no tool {tool}." not in texts:
            wrong.append(f"{scenario}: {check.get('status')} on {json.dumps(result)[:300]}, not the unknown-tool answer for {tool}")
    return wrong


def test_the_suite_is_pinned() -> None:
    pinned = json.loads((SUITE / "package.json").read_text())["dependencies"]
    assert pinned["@modelcontextprotocol/conformance"] == "0.1.16"
    assert int(pinned["node"].split(".")[0]) >= 22


@pytest.mark.parametrize("mode", ["fixed", "dynamic"])
def test_the_conformance_suite_passes_but_its_listed_failures(mode: str, tmp_path: Path) -> None:
    node = node_22()
    if not (PACKAGE / "package.json").is_file():
        pytest.skip(
            f"@modelcontextprotocol/conformance is not installed in {SUITE / 'node_modules'}: run `npm ci --prefix tests/conformance`"
        )
    binary = json.loads((PACKAGE / "package.json").read_text())["bin"]["conformance"]
    line = [DAGTOOLS, "mcp", KITCHEN, "--tools", mode]
    server = LaunchedHttp(line, {"DAGTOOLS_CACHE_DIR": str(tmp_path / "cache")}, tmp_path)
    try:
        server.wait_until_listening()
        command = [node, str(PACKAGE / binary), "server", "--url", server.url, "--expected-failures", str(EXPECTED)]
        run = subprocess.run(
            [*command, "--output-dir", str(tmp_path / "results")],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env=measured(dict(os.environ)),
        )
    finally:
        server.stop()
    said = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)
    assert "=== SUMMARY ===" in said, f"the conformance suite did not finish:\n{said[-3000:]}"
    summary = said[said.find("=== SUMMARY ===") :]
    passed = set(re.findall(r"^✓ ([\w-]+):", summary, re.MULTILINE))
    failed = set(re.findall(r"^✗ ([\w-]+):", summary, re.MULTILINE))
    inapplicable = not_applicable()
    # Judged here rather than by the suite's exit code: it counts a not-applicable scenario that fails as
    # a new failure, and one that passes as a pass; here neither counts, only why it ended as it did.
    new_failures = failed - set(expected_failures()) - set(inapplicable)
    now_passing = passed & set(expected_failures())
    assert not new_failures and not now_passing, (
        f"the conformance suite against `dagtools mcp --tools {mode}`: new failures {sorted(new_failures)}, "
        f"listed ones now passing {sorted(now_passing)}:\n{summary}"
    )
    wrong = [problem for name, tool in inapplicable.items() for problem in unknown_tool_answers(tmp_path / "results", name, tool)]
    assert wrong == [], "a not-applicable scenario ended on something else than the unknown-tool answer: look at it again\n" + "\n".join(
        wrong
    )
    assert "Traceback" not in server.stderr, server.stderr
    assert {"server-initialize", "tools-list"} <= passed - set(inapplicable), summary
