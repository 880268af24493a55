"""The documentation site builds as `.ci/run` builds it: `mkdocs build --strict`, so a link or an anchor
between pages that does not resolve, or a page left out of the nav, fails here. The site is written into
a folder of the test's own, never into the checkout. And the Deployment page states every limit of the
MCP server with the default it really has."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT


def _mkdocs(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", *map(str, args)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def mkdocs_installed() -> None:
    for module in ("mkdocs", "material"):
        if importlib.util.find_spec(module) is None:
            print(f"the docs extra is not installed ({module}): pip install -e '.[docs]'")
            pytest.skip(f"the docs extra is not installed ({module} is missing): pip install -e '.[docs]'")


def test_the_site_builds_strict(mkdocs_installed, tmp_path: Path):
    done = _mkdocs("build", "--strict", "--site-dir", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    pages = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    expected = {"index.html"} | {f"{p.stem}/index.html" for p in (ROOT / "docs").glob("*.md") if p.stem != "index"}
    assert expected <= pages
    clients = (tmp_path / "site" / "clients" / "index.html").read_text()
    assert "/path/to/.venv/bin/dagtools" in clients and 'class="mermaid"' in (tmp_path / "site" / "traces" / "index.html").read_text()
    # the pages generated at build: every key each reader accepts, and every public name of the package
    for page, keys in _accepted_keys(tmp_path).items():
        built = (tmp_path / "site" / "reference" / page / "index.html").read_text()
        missing = [key for key in keys if f"<code>{key}</code></td>" not in built]
        assert keys and missing == [], f"reference/{page} does not list {missing}"
    import dagtools

    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert [name for name in dagtools.__all__ if f'id="dagtools.{name}"' not in api] == []


def test_a_broken_anchor_fails_the_strict_build(mkdocs_installed, tmp_path: Path):
    """The strict build is what catches a link to a heading that is not there (mkdocs.yml's validation)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the part](other.md#no-such-heading).\n")
    (docs / "other.md").write_text("# Other\n\n## A heading\n")
    config = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[0] + "\nnav:\n  - index.md\n  - other.md\n"
    config = config.replace("docs_dir: docs", f"docs_dir: {docs}").replace("hooks:\n  - docs/hooks.py\n", "")
    rest = (ROOT / "mkdocs.yml").read_text().split("\nvalidation:\n", 1)[1]
    (tmp_path / "mkdocs.yml").write_text(config + "validation:\n" + rest)
    done = _mkdocs("build", "--strict", "--config-file", tmp_path / "mkdocs.yml", "--site-dir", tmp_path / "site")
    assert done.returncode != 0
    assert "does not contain an anchor '#no-such-heading'" in done.stderr


def _refused_keys(error: str) -> list[str]:
    """The keys a reader's message for an unknown key offers ("...; use a, b and c." or "takes a, b or c.")."""
    offered = re.split(r"; use | takes ", error)[-1].rstrip(".")
    return [key.strip() for key in re.split(r",| and | or ", offered) if key.strip()]


def _accepted_keys(tmp_path: Path) -> dict[str, list[str]]:
    """Every key the readers accept, as each says when given one it does not: from the messages, not from
    the tables the pages are generated from, so a key accepted but not in a table is caught too."""
    from dagtools import ConfigError
    from dagtools.evals import load_tasks
    from dagtools.mcpserver import load_mcp_config
    from dagtools.scripts import load_script

    def refusal(read, *args) -> list[str]:
        with pytest.raises(ConfigError) as caught:
            read(*args)
        return _refused_keys(str(caught.value))

    def task_file(data: dict) -> Path:
        path = tmp_path / "task.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    task = {"name": "t", "source": "api.graphql", "prompt": "p", "outputs": {"o": {"type": "string"}}}
    return {
        "mcp-config": refusal(load_mcp_config, None, {"no_such_key": 1}),
        "call-scripts": refusal(load_script, {"no_such_key": 1}) + refusal(load_script, {"calls": [{"tool": "t", "no_such_key": 1}]}),
        "eval-tasks": [
            *refusal(load_tasks, task_file({"tasks": [task], "no_such_key": 1})),
            *refusal(load_tasks, task_file({**task, "no_such_key": 1})),
            *refusal(load_tasks, task_file({**task, "checks": {"state": [{"query": "{ a }", "expect": {}, "no_such_key": 1}]}})),
            *refusal(load_tasks, task_file({**task, "checks": {"outputs": {"o": {"no_such_key": 1}}}})),
        ],
    }


def test_an_unknown_key_is_refused_naming_what_the_reference_lists(tmp_path: Path):
    """The readers' messages offer the keys the generated pages list, and every key has its meaning."""
    import importlib.util as util

    spec = util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec and spec.loader
    hooks = util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    for page, keys in _accepted_keys(tmp_path).items():
        text = hooks.PAGES[f"reference/{page}.md"]()
        rows = re.findall(r"^\| `(\w+)` \| (.+?) \| (.+?) \| (.+?) \|$", text, re.M)
        assert {key for key, *_ in rows} >= set(keys), page
        assert all(meaning.strip() for *_, meaning in rows)


#: The MCP server's capacity and limits: the Deployment page states each, its default, and what happens at it.
LIMITS = (
    "max_sessions",
    "max_sessions_per_caller",
    "session_ttl",
    "handshake_timeout",
    "header_timeout",
    "body_timeout",
    "max_connections_per_address",
    "max_argument_bytes",
    "max_session_bytes",
)


def _shown(name: str, value: float) -> str:
    """A default as the page writes it: 2,000; 3,600 s; 256 KiB; 32 MiB."""
    if name.endswith("_bytes"):
        return f"{value // 1024**2:,} MiB" if value % 1024**2 == 0 else f"{value // 1024:,} KiB"
    if name.endswith(("_ttl", "_timeout")):
        return f"{value:,.0f} s"
    return f"{value:,}"


def test_the_deployment_page_states_every_limit_with_its_default():
    from dagtools.mcpserver import McpConfig

    page = (ROOT / "docs" / "deployment.md").read_text()
    defaults = {f.name: f.default for f in dataclasses.fields(McpConfig)}
    wrong = [
        f"{name} ({_shown(name, defaults[name])})"
        for name in LIMITS
        if not re.search(rf"`{name}` \({re.escape(_shown(name, defaults[name]))}\)", page)
    ]
    assert wrong == [], f"docs/deployment.md does not state these limits with their defaults: {wrong}"


def test_the_development_page_says_where_every_public_schema_comes_from():
    """Every public schema a test or a bench reads by name has a row on the Development page (its source),
    and the message a run without them prints points there."""
    from tests.conftest import HOW_TO_GET_SCHEMAS

    named = set()
    for path in [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]:
        named |= set(re.findall(r"[\"']([\w.-]+\.(?:graphqls?|json))[\"']", path.read_text()))
    public = {name for name in named if re.match(r"(github|linear|saleor|shopify|swapi)\b.*\.schema\.|dagger\b.*\.graphqls$", name)}
    page = (ROOT / "docs" / "development.md").read_text()
    section = page.split("### The public schemas", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `([\w.-]+)` \|", section, re.M))
    assert public and public <= rows, f"not on docs/development.md: {sorted(public - rows)}"
    assert "docs/development.md" in HOW_TO_GET_SCHEMAS and "The public schemas" in HOW_TO_GET_SCHEMAS


def test_every_message_on_the_troubleshooting_page_is_one_dagtools_gives():
    """Each entry quotes words of a message as the code writes them, so a reworded message fails here
    until the page follows it."""
    page = (ROOT / "docs" / "troubleshooting.md").read_text()
    quoted = re.findall(r"^\*\*Message:\*\* `([^`]+)`", page, re.M)
    code = "\n".join(path.read_text() for path in (ROOT / "dagtools").rglob("*.py"))
    assert len(quoted) >= 15 and len(quoted) == page.count("**Message:**")
    assert [words for words in quoted if words not in code] == []


def test_the_tutorial_shows_the_api_its_commands_load():
    """The tutorial's API is shown whole, as the file its commands load (its shell, YAML and Python blocks
    run in tests/test_readme.py, the API with them)."""
    page = (ROOT / "docs" / "tutorial.md").read_text()
    [shown] = re.findall(r"^```python\n(.*?)^```", page.split("## 1. The API", 1)[1].split("\n## ", 1)[0], re.M | re.S)
    assert shown == (ROOT / "examples" / "library" / "api.py").read_text()
