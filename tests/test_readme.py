"""Every code block in README.md and in the documentation pages (docs/*.md) is a test, so what they
show works when copied.

Each fenced block is treated by its language tag and its content:

- `sh`, `bash`, `shell`: the commands run with bash (`set -e`) in a scratch folder that sees the
  checkout's `examples/`, `schemas/`, `bench/` and `dagtools/`, with this interpreter's `dagtools`
  and `python` first on PATH. Command by command:
  - `pip install ...` is checked, not run: it installs `.` or `dagtools-graphql` (never `dagtools`,
    another project on PyPI) with extras that exist in pyproject.toml; `.ci/run` and
    tests/test_packaging.py do the installing;
  - `python3 -m venv ...` and `. .venv/bin/activate` are not run: the tests already run in a
    virtualenv with dagtools installed;
  - a command that matches NEEDS below (a real API key, the internet, a model server, the test suite
    itself) is skipped, and its reason is printed as a skipped test of its own;
  - `npx` runs offline, from npm's cache (which `.ci/run` fills); a package missing from the cache
    skips the block, saying so.
- `python`: runs in a fresh interpreter in the scratch folder (top-level `await` is allowed). A
  `print(...)` with a trailing comment must print what the comment shows (`...` stands for anything).
  A block that imports an optional extra that is not installed skips, naming the extra.
- `yaml`, `json`: must parse. A call script (a `calls:` list) must be a file (marked `file:`) that a
  shell block runs.
- `text`, `mermaid`: output shown to the reader, not run (a test elsewhere may compare it).
- Whole pages whose blocks another module runs with checks of its own are named in `RUN_ELSEWHERE`.
- Any other tag, or none, fails: give the block one of these.

A block is marked by an HTML comment on the line right before its fence:

- `<!-- readme-test: skip: REASON -->`: the block cannot run here (it needs a real API key, the
  internet, a web page); the test skips it and prints the reason.
- `<!-- readme-test: file: PATH -->`: the block is the file PATH (relative to the repository),
  character for character.
- `<!-- readme-test: part-of: PATH -->`: the block (JSON or YAML) is one entry of the list in PATH.

A yaml or json block right after text that names an example file must carry `file:` or `part-of:`,
and every path under examples/, schemas/ or bench/ that a page names must exist.

Beyond the blocks: the README stays short (the reference is the site), every relative link and anchor
in the README and the pages resolves, every page is in the site's nav, and every line that installs
from PyPI says it needs the published package.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

README = ROOT / "README.md"
#: The README and the documentation site's pages, each a path relative to the repository.
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 200

#: Commands that cannot run here, each with the reason printed when it is skipped; first match wins.
NEEDS: list[tuple[str, str]] = [
    (r"--base-url https?://(127\.0\.0\.1|localhost)", "needs a model server (vLLM, Ollama, llama.cpp) running on this machine"),
    (r"--model (openai|anthropic|ollama):", "calls a hosted model: needs its API key (OPENAI_API_KEY, ANTHROPIC_API_KEY) and the internet"),
    (r"https?://(?!127\.0\.0\.1[:/]|localhost[:/])[\w.-]+", "reaches a host on the internet"),
    (r"^pytest\b", "runs the test suite this test belongs to (.ci/run runs it)"),
]
#: Not run: the tests already run inside a virtualenv that has dagtools installed.
ENVIRONMENT = [r"^python3? -m venv\b", r"^(\.|source) \S*activate$"]
#: Optional extras by the module a block imports.
EXTRAS = {
    "pydantic_ai": "pydantic-ai",
    "agents": "openai-agents",
    "langchain": "langchain",
    "langgraph": "langchain",
    "mellea": "mellea",
    "mcp": "mcp",
    "redis": "redis",
}
SHELLS = {"sh", "bash", "shell"}
DATA = {"yaml", "json"}
LINKED = ["examples", "schemas", "bench", "dagtools", "docs", "pyproject.toml", "README.md", "mkdocs.yml"]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


@dataclass
class Block:
    page: str  # README.md or docs/NAME.md
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    before: str  # the text between the previous block and this one
    mark: tuple[str, str] | None  # ("skip" | "file" | "part-of", argument)

    @property
    def id(self) -> str:
        return f"{self.page}-L{self.line}-{self.lang or 'untagged'}"

    @property
    def where(self) -> str:
        return f"{self.page} line {self.line}"


def readme_blocks(text: str, page: str = "README.md") -> list[Block]:
    blocks, lines, i, last = [], text.splitlines(), 0, 0
    while i < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        mark = re.match(r"^<!-- readme-test: (skip|file|part-of): (.+?) -->$", lines[i - 1]) if i else None
        code = "\n".join(lines[i + 1 : end]) + "\n"
        before = "\n".join(lines[last:i])
        blocks.append(Block(page, i + 1, fence.group(1), code, before, (mark.group(1), mark.group(2)) if mark else None))
        last, i = end + 1, end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in readme_blocks((ROOT / page).read_text(), page)]

#: Pages whose blocks another test module runs, with checks of its own (each framework's test model,
#: the Mermaid shown against the one written): not run a second time here.
RUN_ELSEWHERE = {"docs/integrations.md": "integrations/test_integration_readme.py", "docs/traces.md": "trace/test_trace.py"}

RUN_HERE = [b for b in BLOCKS if b.page not in RUN_ELSEWHERE]


def shell_commands(code: str) -> list[str]:
    """One string per line of the block, continuation lines joined, comment-only lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def classify(command: str) -> tuple[str, str]:
    """("run" | "pip" | "environment" | "skip", reason) for one command."""
    if re.match(r"^(python3? -m )?pip install\b", command):
        return "pip", ""
    if any(re.match(pattern, command) for pattern in ENVIRONMENT):
        return "environment", ""
    for pattern, reason in NEEDS:
        if re.search(pattern, command):
            return "skip", reason
    return "run", ""


def split_block(code: str) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """The script to run, the (command, reason) pairs skipped, and the pip install commands."""
    script, skipped, pips = [], [], []
    for line in shell_commands(code):
        kept = []
        for part in (p.strip() for p in line.split(" && ")):
            kind, reason = classify(part)
            if kind == "run":
                kept.append(part)
            elif kind == "pip":
                pips.append(part)
            elif kind == "skip":
                skipped.append((part, reason))
        if kept:
            script.append(" && ".join(kept))
    return script, skipped, pips


SKIPPED_COMMANDS = [
    (block, command, reason)
    for block in BLOCKS
    if block.lang in SHELLS and not block.mark
    for command, reason in split_block(block.code)[1]
]


@pytest.fixture
def scratch(tmp_path) -> tuple[Path, dict[str, str]]:
    """A folder that sees the checkout's examples and schemas, and the environment to run in it."""
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "DAGTOOLS_HEADERS", "DAGTOOLS_AUTHORIZATION"}}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["DAGTOOLS_CACHE_DIR"] = str(tmp_path / ".cache")
    env["DAGTOOLS_STATE_DIR"] = str(tmp_path / ".state")  # the shell's named sessions and history
    env["npm_config_offline"] = "true"  # npx from npm's cache only: tests never reach the internet
    env["npm_config_update_notifier"] = "false"
    return tmp_path, env


def _skip_if_marked(block: Block) -> None:
    if block.mark and block.mark[0] == "skip":
        print(f"{block.where}: skipped: {block.mark[1]}")
        pytest.skip(f"{block.where}: {block.mark[1]}")


# -- the blocks, one test each ------------------------------------------------------------------------


@pytest.mark.parametrize("block", [b for b in RUN_HERE if b.lang in SHELLS], ids=lambda b: b.id)
def test_shell_block_runs(block, scratch):
    _skip_if_marked(block)
    folder, env = scratch
    script, skipped, pips = split_block(block.code)
    for command in pips:
        check_pip_install(command)
    for command, reason in skipped:
        print(f"{block.where}: not run: {command!r}: {reason}")
    if not script:
        return
    done = subprocess.run(
        # A job a block starts in the background (a server) ends with the block, also when a later command
        # fails: it would otherwise hold the output pipes open until the timeout.
        ["bash", "-c", "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(script)],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    if done.returncode and re.search(r"ENOTCACHED|request to https?://\S+ failed|offline mode", output):
        print(f"{block.where}: an npx package is not in npm's cache (.ci/run fetches it)")
        pytest.skip(f"{block.where}: an npx package is not in npm's cache, and tests stay offline: {output[-300:]}")
    assert done.returncode == 0, f"{block.where}:\n" + "\n".join(script) + f"\nfailed:\n{output[-3000:]}"


def test_the_pages_run_elsewhere_are_run_there():
    for page, module in RUN_ELSEWHERE.items():
        assert any(b.page == page for b in BLOCKS), f"{page} has no blocks"
        assert page in (ROOT / "tests" / module).read_text(), f"tests/{module} no longer runs the blocks of {page}"


@pytest.mark.parametrize(
    ("block", "command", "reason"), SKIPPED_COMMANDS, ids=[f"{b.page}-L{b.line}-{c[:40]}" for b, c, _ in SKIPPED_COMMANDS]
)
def test_shell_command_that_cannot_run_here(block, command, reason):
    print(f"{block.where}: {command!r} is not run: {reason}")
    pytest.skip(f"{block.where}: {command[:60]!r}: {reason}")


#: Runs a block with top-level await allowed, as the page shows it (tracebacks name the page's lines).
RUNNER = """
import ast, asyncio, sys
line, page, source = int(sys.argv[1]), sys.argv[2], sys.stdin.read()
code = compile("\\n" * line + source, page, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
result = eval(code, {"__name__": "__main__"})
if asyncio.iscoroutine(result):
    asyncio.run(result)
"""


@pytest.mark.parametrize("block", [b for b in RUN_HERE if b.lang == "python"], ids=lambda b: b.id)
def test_python_block_runs(block, scratch):
    _skip_if_marked(block)
    folder, env = scratch
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", RUNNER, str(block.line), block.page],
        input=block.code,
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", done.stderr)
    if done.returncode and missing and missing.group(1).split(".")[0] in EXTRAS:
        extra = EXTRAS[missing.group(1).split(".")[0]]
        print(f"{block.where}: needs the {extra} extra")
        pytest.skip(f"{block.where}: needs pip install -e '.[{extra}]' ({missing.group(1)} is not installed)")
    assert done.returncode == 0, f"{block.where}:\n{done.stderr[-3000:]}"
    expected = [m.group(1).strip() for m in re.finditer(r"^\s*print\(.*\)\s*#\s*(.+)$", block.code, re.M)]
    if expected:
        printed = done.stdout.splitlines()
        assert len(printed) == len(expected), f"{block.where} shows {len(expected)} printed lines; it printed {printed}"
        for shown, got in zip(expected, printed):
            pattern = ".*".join(re.escape(piece) for piece in shown.split("..."))
            assert re.fullmatch(pattern, got.strip()), f"{block.where} shows {shown!r}; it printed {got!r}"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang in DATA], ids=lambda b: b.id)
def test_data_block_parses_and_matches_its_file(block):
    _skip_if_marked(block)
    value = json.loads(block.code) if block.lang == "json" else yaml.safe_load(block.code)
    named = re.findall(r"`(examples/[\w/.-]+\.(?:ya?ml|json))`", block.before.rsplit("\n\n", 1)[-1])
    if not block.mark:
        assert not (isinstance(value, dict) and "calls" in value), (
            f"{block.where} is a call script: save it under examples/, run it in a sh block, and mark this block "
            "<!-- readme-test: file: PATH -->"
        )
        assert not named, (
            f"{block.where} follows text naming {named[0]}: show the file and mark the block "
            f"<!-- readme-test: file: {named[0]} --> (or part-of: for one entry of it)"
        )
        return
    kind, path = block.mark
    file = ROOT / path
    assert file.is_file(), f"{block.where} claims to be {path}, which does not exist"
    if isinstance(value, dict) and "calls" in value:
        shells = "".join(b.code for b in BLOCKS if b.lang in SHELLS and not b.mark)
        assert path in shells, f"{block.where} shows the script {path}: run it in a sh block (dagtools call SCHEMA {path})"
    if kind == "file":
        assert block.code == file.read_text(), f"{block.where} is not {path} as it is: copy the file into the README"
    else:
        entries = json.loads(file.read_text()) if file.suffix == ".json" else yaml.safe_load(file.read_text())
        assert value in entries, f"{block.where} is not one of the entries of {path}"


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_block_has_a_known_language(block):
    assert block.lang in SHELLS | DATA | {"python", "text", "mermaid"}, (
        f"{block.where}: tag the block sh, python, yaml, json, text or mermaid (it is {block.lang or 'untagged'!r})"
    )
    if block.mark:
        assert block.mark[0] == "skip" or block.lang in DATA, f"{block.where}: file: and part-of: mark yaml or json blocks"


# -- what the pages name must exist ------------------------------------------------------------------


def _text(page: str) -> str:
    return (ROOT / page).read_text()


#: A wheel built from this checkout, as `python -m build` names it in dist/.
WHEEL = re.compile(rf"dist/{PYPROJECT['project']['name'].replace('-', '_')}-{re.escape(PYPROJECT['project']['version'])}-py3-none-any\.whl")


def check_pip_install(command: str) -> None:
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    targets = [a for a in shlex.split(command)[2:] if not a.startswith("-") and a != "install"]
    for target in targets:
        name, _, rest = target.partition("[")
        wanted = set(filter(None, rest.rstrip("]").split(",")))
        distribution = PYPROJECT["project"]["name"]
        assert name in {".", distribution} or WHEEL.fullmatch(name), (
            f"{command!r}: install ., {distribution} or its wheel (dagtools on PyPI is another project)"
        )
        assert wanted <= extras, f"{command!r}: no extra {sorted(wanted - extras)} in pyproject.toml"


def test_every_pip_install_names_this_distribution_and_its_extras():
    found = [c for page in PAGES for c in re.findall(r"`(pip install [^`]+)`", _text(page))]
    found += [c for b in BLOCKS if b.lang in SHELLS for c in split_block(b.code)[2]]
    assert found
    for command in found:
        check_pip_install(command.split(" && ")[0])


def test_every_file_a_page_names_exists():
    path = r"(?<![\w/.-])((?:examples|schemas|bench)/[\w/.-]*\w\.(?:py|ya?ml|json|graphql|sh))"
    named = {n for page in PAGES for n in re.findall(path, _text(page))}
    assert named
    assert sorted(n for n in named if not (ROOT / n).is_file()) == []


def test_the_readme_starts_with_a_virtualenv_and_says_which_python():
    first = next(b for b in BLOCKS if b.page == "README.md" and b.lang in SHELLS)
    commands = shell_commands(first.code)
    assert re.match(ENVIRONMENT[0], commands[0]) and "activate" in commands[0]
    assert commands[1:3] == ["pip install -e . && dagtools demo", 'pip install -e ".[test]" && pytest']
    minimum = PYPROJECT["project"]["requires-python"].removeprefix(">=")
    assert f"Python >= {minimum}" in README.read_text().split("```", 1)[0]
    assert "dagtools-graphql" in README.read_text()


# -- the README is short, and the pages hang together ---------------------------------------------------


def test_the_readme_is_short_and_leads_to_the_pages():
    text = README.read_text()
    assert len(text.splitlines()) <= README_MAX_LINES, f"README.md has {len(text.splitlines())} lines: move reference text to docs/"
    linked = set(re.findall(r"\]\((docs/[\w-]+\.md)(?:#[\w-]*)?\)", text))
    assert linked == {p for p in PAGES if p.startswith("docs/") and p != "docs/index.md"}, "the README links to every page"


def slug(heading: str) -> str:
    """The anchor GitHub and MkDocs both give a heading made of words (this project's headings are)."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower())


def anchors(page: str) -> set[str]:
    text = re.sub(r"^```.*?^```", "", _text(page), flags=re.S | re.M)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


LINKS = [
    (page, target)
    for page in PAGES
    for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"^```.*?^```", "", _text(page), flags=re.S | re.M))
    if not re.match(r"\w+:", target)
]


#: The pages docs/hooks.py writes at every build of the site (the reference of the files users write).
GENERATED = {f"docs/{uri}" for uri in re.findall(r'^    "(reference/[\w-]+\.md)":', (ROOT / "docs" / "hooks.py").read_text(), re.M)}


@pytest.mark.parametrize(("page", "target"), LINKS, ids=[f"{p}->{t}" for p, t in LINKS])
def test_every_relative_link_resolves(page: str, target: str):
    """On GitHub (the README's links into docs/) and on the site (links between pages): the file and the
    heading exist. `mkdocs build --strict` checks the pages again, by its own rules."""
    path, _, anchor = target.partition("#")
    linked = (ROOT / page).parent / path if path else ROOT / page
    if page.startswith("docs/") and os.path.normpath(linked.relative_to(ROOT)) in GENERATED:
        return  # written at build; the strict build in tests/test_docs.py checks the link
    assert linked.is_file(), f"{page} links to {target}: {path} does not exist"
    relative = linked.resolve().relative_to(ROOT.resolve()).as_posix()
    if page.startswith("docs/"):
        assert relative.startswith("docs/"), f"{page} links to {target}, outside the site: name the file in `code` instead"
    if anchor:
        assert anchor in anchors(relative), f"{page} links to {target}: {relative} has no heading with that anchor"


def test_every_page_is_in_the_site_nav():
    nav = set(re.findall(r":\s+([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    assert {f"docs/{name}" for name in nav} == {p for p in PAGES if p.startswith("docs/")}


#: What installs from PyPI: a line that says one of these runs only once the package is published.
DISTRIBUTION = re.escape(PYPROJECT["project"]["name"])
FROM_PYPI = re.compile(rf"pip install [\"']?{DISTRIBUTION}\b|uvx --from[ \"',]+{DISTRIBUTION}\b")


def _paragraphs(text: str) -> list[str]:
    """The page's paragraphs, each code block joined to the paragraph that introduces it (past its mark)."""
    text = re.sub(r"^<!-- readme-test: .* -->\n", "", text, flags=re.M)
    units: list[str] = []
    for chunk in re.split(r"(^```.*?^```\n?)", text, flags=re.S | re.M):
        if chunk.startswith("```") and units:
            units[-1] += chunk
        else:
            units.extend(part for part in re.split(r"\n\s*\n", chunk) if part.strip())
    return units


@pytest.mark.parametrize("page", PAGES)
def test_every_line_that_installs_from_pypi_says_it_needs_the_published_package(page: str):
    for paragraph in _paragraphs(_text(page)):
        if FROM_PYPI.search(paragraph):
            assert "published" in paragraph, f"{page}: say the package must be published on PyPI for this to work:\n{paragraph}"


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("docs/")])
def test_lists_and_tables_on_the_site_start_after_a_blank_line(page: str):
    """GitHub draws a list right under a line of text; MkDocs (Python-Markdown) reads it as more text."""
    text = re.sub(r"^```.*?^```", "", _text(page), flags=re.S | re.M)
    lines = text.splitlines()
    glued = [
        f"line {i + 1}: {line[:50]!r} follows {lines[i - 1][:50]!r}"
        for i, line in enumerate(lines)
        if i and re.match(r"^(- |\| |\d+\. )", line) and lines[i - 1].strip() and not re.match(r"^(- |\s|\| |\d+\. |<!--)", lines[i - 1])
    ]
    assert glued == [], f"{page}: put a blank line before each list and table:\n" + "\n".join(glued)
