"""The official MCP conformance suite (`@modelcontextprotocol/conformance`, its server scenarios) against a
launched `dagtools mcp` over streamable HTTP, in fixed and dynamic mode.

The suite and the Node it needs (>= 22) are pinned in tests/conformance/package.json; `npm ci --prefix
tests/conformance` installs both (as .ci/run does). The scenarios a tools-only server fails on purpose
are listed in tests/conformance/expected-failures.yml, each with its reason: the suite fails the run on a
failure not listed there, and on a listed one that now passes.
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


def expected_failures() -> dict[str, str]:
    """The listed scenarios and their reasons."""
    listed: dict[str, str] = {}
    for line in EXPECTED.read_text().splitlines():
        found = re.match(r"^  - ([\w-]+)\s*(?:#\s*(.*))?$", line)
        if found:
            listed[found.group(1)] = (found.group(2) or "").strip()
    return listed


def test_every_expected_failure_says_why_once() -> None:
    lines = [line for line in EXPECTED.read_text().splitlines() if line.startswith("  - ")]
    listed = expected_failures()
    assert len(listed) == len(lines), "a scenario is listed twice, or a line is not `  - scenario  # reason`"
    assert [name for name, reason in listed.items() if not reason] == [], "every expected failure says why after #"
    assert "tools-list" not in listed and "server-initialize" not in listed and "tools-call-error" not in listed


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
    summary = said[said.find("=== SUMMARY ===") :]
    assert run.returncode == 0, (
        f"the conformance suite against `dagtools mcp --tools {mode}` (new failures, or listed ones now passing):\n{summary}"
    )
    assert "all failures are expected" in summary, summary
    assert "Traceback" not in server.stderr, server.stderr
    passed = re.findall(r"✓ ([\w-]+):", summary)
    assert {"server-initialize", "tools-list", "tools-call-error"} <= set(passed), summary
