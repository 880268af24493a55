"""The command line on a terminal (rich: tables, a progress bar, a live run) and piped (plain lines), compared.

Each command runs twice as a user runs it: once with its output on a pseudo-terminal, once piped.
The figures and calls must be the same; only the terminal gets colour and boxes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.command import dagtools
from tests.conftest import FORGE, ROOT, load_shared
from tests.kitchen import SEED_INPUTS

pytest.importorskip("rich", reason="the terminal views need rich: pip install -e '.[cli]'")
pytestmark = pytest.mark.e2e  # a pseudo-terminal needs a process of its own

KITCHEN = "examples/kitchen/api.py:schema"
FRIES = "examples/kitchen/fries.yaml"
SEED_ARGS = [*(f"--input={name}={spec['field']}:{spec['description']}" for name, spec in SEED_INPUTS.items()), "--output=fries:Plate"]
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_WIDE = {"COLUMNS": "220", "LINES": "50"}


def on_terminal(*args: str, env: dict[str, str] | None = None, python: list[str] | None = None) -> tuple[int, str]:
    """Run `dagtools ARGS` with stdout and stderr on a pseudo-terminal; its exit code and everything it wrote."""
    main, terminal = pty.openpty()
    command = python or [sys.executable, "-m", "dagtools.cli", *args]
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm-256color", **_WIDE, **(env or {})}
    process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, env=environment)
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the other side closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    return process.wait(timeout=120), b"".join(chunks).decode().replace("\r\n", "\n")


def piped(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The same command with its output piped (run in process: a pipe is what it sees there too)."""
    return dagtools(*args, env={**os.environ, **_WIDE, **(env or {})})


def plain_rows(text: str) -> dict[str, tuple[int, int]]:
    return {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(r"^(\w+) +(\d+) bytes +(\d+) tokens$", text, re.M)}


def table_rows(text: str) -> dict[str, tuple[int, int]]:
    rows = {}
    for line in _ANSI.sub("", text).splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 4 and cells[2].isdigit():
            rows[cells[0]] = (int(cells[2]), int(cells[3]))
    return rows


def test_tools_is_a_table_on_a_terminal_and_the_same_figures_piped():
    code, shown = on_terminal("tools", KITCHEN, "--all", "--sizes")
    plain = piped("tools", KITCHEN, "--all", "--sizes")
    assert code == 0 and plain.returncode == 0, shown + plain.stderr
    assert _ANSI.search(shown) and "┃" in shown  # colour and a box
    assert not _ANSI.search(plain.stdout) and "│" not in plain.stdout
    rows = plain_rows(plain.stdout)
    assert len(rows) == 27 and table_rows(shown) == rows
    summary = plain.stdout.strip().splitlines()[-1]
    assert summary in _ANSI.sub("", shown)
    if importlib.util.find_spec("bpe_openai") is None:
        assert "estimated at 4 bytes a token" in summary
    else:
        assert summary.endswith("tokens (o200k_base)")


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=["NO_COLOR", "TERM=dumb"])
def test_a_terminal_that_asks_for_plain_text_gets_the_piped_output(env):
    code, shown = on_terminal("tools", KITCHEN, "--all", "--sizes", env=env)
    assert code == 0
    assert shown == piped("tools", KITCHEN, "--all", "--sizes").stdout


def test_without_rich_a_terminal_gets_plain_lines():
    """rich is an extra: when it cannot be imported the command line prints plain lines, even on a terminal."""
    code = "import sys; sys.modules['rich'] = None; from dagtools.cli import main; sys.exit(main(sys.argv[1:]))"
    status, shown = on_terminal(python=[sys.executable, "-c", code, "tools", KITCHEN, "--all", "--sizes"])
    assert status == 0
    assert shown == piped("tools", KITCHEN, "--all", "--sizes").stdout


def test_run_shows_each_turn_and_call_live_on_a_terminal():
    args = ("run", KITCHEN, "Bake me some french fries.", *SEED_ARGS, "--model", f"script:{FRIES}")
    code, shown = on_terminal(*args)
    plain = piped(*args)
    assert code == 0 and plain.returncode == 0, shown + plain.stderr
    text = "\n".join(line.split("\r")[-1] for line in _ANSI.sub("", shown).split("\n"))  # the spinner's line is redrawn
    live = re.findall(r"^([✓✗]) (\w+\(.*\))$", text, re.M)
    calls = re.findall(r"^(\w+\(.*\))\n  ->", plain.stdout, re.M)
    assert [c for _, c in live] == calls and len(calls) == 8
    assert all(mark == "✓" for mark, _ in live)
    assert "step 1 · " in text and "-- step 1 (" in plain.stdout
    assert '{"fries": "Plate#2"}' in text and '{"fries": "Plate#2"}' in plain.stdout
    assert not _ANSI.search(plain.stdout + plain.stderr)


def test_model_text_is_printed_as_it_is_not_as_markup(tmp_path: Path):
    """A model's `[bold]` or `[/]` is text: rich markup in it neither styles nor breaks the view."""
    script = tmp_path / "chatty.json"
    script.write_text(json.dumps({"calls": [{"tool": "Potato_peal", "arguments": {"Potato": "[bold red]Potato#1[/]"}}]}))
    code, shown = on_terminal("run", KITCHEN, "Peel", *SEED_ARGS[:2], "--model", f"script:{script}")
    text = _ANSI.sub("", shown)
    assert '✗ Potato_peal(Potato: "[bold red]Potato#1[/]")' in text, text
    assert "Traceback" not in text and "MarkupError" not in text


@pytest.fixture(scope="module")
def big_schema_url():
    """A GitHub-sized schema's introspection (megabytes) served on loopback, as a real API answers it."""
    from graphql import introspection_from_schema

    from tests.servers import serve_asgi

    body = json.dumps({"data": introspection_from_schema(load_shared(FORGE).schema)}).encode()

    async def app(scope, receive, send):
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for start in range(0, len(body), 64 * 1024):  # in pieces, as a network delivers it
            await send({"type": "http.response.body", "body": body[start : start + 64 * 1024], "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    with serve_asgi(app) as base:
        yield f"{base}/graphql"


def test_a_long_introspection_shows_a_progress_bar_on_a_terminal_only(big_schema_url: str):
    code, shown = on_terminal("tools", big_schema_url, "--no-cache")
    assert code == 0, shown
    assert "loading the schema" in shown and "MB" in shown
    plain = piped("tools", big_schema_url, "--no-cache")
    assert plain.returncode == 0 and "loading the schema" not in plain.stderr + plain.stdout
    assert plain_rows(plain.stdout) == table_rows(shown)


def test_help_does_not_import_rich():
    code = "import sys; from dagtools.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass\nprint('rich' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().endswith("False"), done.stdout + done.stderr
