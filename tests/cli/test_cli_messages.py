"""What a newcomer reads at the edges: each mistake a first hour makes gets one line that says what is
wrong and what to do next, never a traceback, with the words and counts right."""

from __future__ import annotations

import http.server
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagtools.cli._main import main
from tests.conftest import ROOT

KITCHEN = f"{ROOT}/examples/kitchen/api.py:schema"
FRIES = f"{ROOT}/examples/kitchen/fries.yaml"


def _serve(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _SitePage(_Quiet):
    """A web site's own "not found" page, as a site answers a POST to a path it does not serve."""

    def do_POST(self) -> None:
        body = b"<!doctype html><html><head><title>Page not found | Example</title></head><body><h1>Oops</h1></body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def file_server() -> Iterator[str]:
    """Python's own static file server: it answers every POST with HTTP 501 and an HTML error page."""
    yield from _serve(_Quiet)


@pytest.fixture
def site_server() -> Iterator[str]:
    yield from _serve(_SitePage)


def test_a_file_server_is_said_not_to_be_graphql(file_server: str, capsys: pytest.CaptureFixture[str]):
    assert main(["tools", f"{file_server}/", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "answered HTTP 501" in err and "with a web page (Error response), not a GraphQL response" in err
    assert "not a GraphQL endpoint" in err and "/graphql" in err
    assert "try again later" not in err and "<html" not in err.lower()


def test_a_web_page_is_said_not_to_be_graphql(site_server: str, capsys: pytest.CaptureFixture[str]):
    assert main(["tools", f"{site_server}/api", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "HTTP 404" in err and "with a web page (Page not found | Example), not a GraphQL response" in err
    assert "often at /graphql" in err and "<h1>" not in err


def test_a_port_in_use_is_said_with_a_hint_before_anything_starts():
    """Run as a user runs it: the process exits 2 with one line, no start-up block, no server traceback."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(
            [sys.executable, "-m", "dagtools.cli", "mcp", KITCHEN, "--transport", "http", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [
        f"dagtools: 127.0.0.1:{port} is already in use: another server (perhaps another dagtools mcp) listens there. "
        "Stop it, or choose a free port with --port (or port: in the config file); --port 0 takes any free one."
    ]


def test_a_config_value_error_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    config = tmp_path / "mcp.yaml"
    config.write_text(f"source: {KITCHEN}\ntools: everything\n")
    assert main(["mcp", "--config", str(config)]) == 2
    assert capsys.readouterr().err == f"dagtools: {config}: tools must be fixed or dynamic, not 'everything'.\n"


@pytest.mark.parametrize(
    ("chain", "said"),
    [
        ("ovne", "Chain 'ovne': Query has no field 'ovne'. Did you mean 'oven'?"),
        ('potato(varety: "Russet")', "Query.potato has no argument 'varety'. Did you mean 'variety'?"),
        ("potato.zzz", "Potato has no field 'zzz'. Its fields: cut, description, dice, id, peel, peeled, rinse, rinsed and 3 more."),
    ],
)
def test_a_mistyped_input_chain_gets_did_you_mean(chain: str, said: str, capsys: pytest.CaptureFixture[str]):
    assert main(["run", KITCHEN, "Bake fries", "--input", f"thing={chain}:A thing", "--model", f"script:{FRIES}"]) == 2
    assert said in capsys.readouterr().err


def test_an_error_names_the_path_as_typed_not_a_symlinks_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "real_schema.py").write_text("raise RuntimeError('no database here')\n")
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "schema.py").symlink_to(tmp_path / "elsewhere" / "real_schema.py")
    (tmp_path / "links" / "gone.graphql").symlink_to(tmp_path / "elsewhere" / "gone.graphql")
    monkeypatch.chdir(tmp_path)
    assert main(["tools", "links/schema.py:schema"]) == 2
    err = capsys.readouterr().err
    assert "importing schema.py raised RuntimeError: no database here" in err and "real_schema" not in err
    assert main(["tools", "links/gone.graphql"]) == 2
    err = capsys.readouterr().err
    assert f"does not exist (looked in {tmp_path / 'links'})" in err and "elsewhere" not in err


def test_counts_agree_with_their_nouns(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["tools", f"{ROOT}/schemas/kitchen.graphql", "--sizes"]) == 0
    assert "\n2 tools of 27 in the catalogue" in capsys.readouterr().out
    assert main(["tools", f"{ROOT}/schemas/kitchen.graphql", "--type", "Sink"]) == 0
    assert "1 tool of 27 tools in the catalogue, on Sink." in capsys.readouterr().out
    script = tmp_path / "one.yaml"
    script.write_text(
        "inputs: {potato: {field: potato, description: A potato.}}\n"
        "outputs: {peeled: {type: Potato}}\n"
        "calls:\n"
        "  - {tool: selectTools, arguments: {tools: [Potato_peel]}}\n"
        "  - {tool: save, arguments: {peeled: 'Potato#1'}}\n"
    )
    page = tmp_path / "one.html"
    assert main(["call", KITCHEN, str(script), "--trace", str(page)]) == 0
    assert f"trace of 1 object and 2 calls written to {page}" in capsys.readouterr().err
    assert "1 object, 2 calls, 0 failed, 1 output saved." in page.read_text()


def test_what_the_readme_commands_write_leaves_the_checkout_clean():
    """A reader runs the commands of the README and the pages in docs/ in their checkout: every file they write there is ignored by
    git, so `git status` stays clean after the tour."""
    readme = "".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    written: set[str] = set()
    for block in re.findall(r"```(?:sh|bash|shell)\n(.*?)```", readme, re.DOTALL):
        written.update(re.findall(r"(?:--trace|[^0-9&]>)\s+([\w.-][\w./-]*)", block))
    assert {"run.json", "fries.mmd", "fries.html", "fries.md"} <= written
    check = subprocess.run(["git", "check-ignore", "--no-index", *sorted(written)], cwd=ROOT, capture_output=True, text=True)
    if check.returncode == 128:
        pytest.skip(f"git cannot read this checkout: {check.stderr.strip()}")
    assert set(check.stdout.split()) == written


@pytest.mark.parametrize(("typed", "meant"), [("tool", "'tools'"), ("mpc", "'mcp'"), ("demp", "'demo'"), ("srve", "'serve'")])
def test_a_mistyped_command_gets_did_you_mean(typed: str, meant: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-v", typed, "schemas/kitchen.graphql"]) == 2
    said = capsys.readouterr().err
    assert f"there is no command {typed!r}; did you mean {meant}?" in said


def test_a_script_written_in_another_call_format_names_its_keys_and_what_they_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "calls.yaml"
    script.write_text("calls:\n  - name: Potato_peel\n    args: {}\n")
    assert main(["call", str(ROOT / "examples/kitchen/api.py") + ":schema", str(script)]) == 2
    said = capsys.readouterr().err
    assert "call 1 has unknown keys ['args', 'name'] (write args -> arguments, name -> tool)" in said
    script.write_text("call:\n  - tool: Potato_peel\n")
    assert main(["call", str(ROOT / "examples/kitchen/api.py") + ":schema", str(script)]) == 2
    assert "unknown keys ['call'] (write call -> calls)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "command", "hint"),
    [
        (["tools", "schemas/kitchen.graphql", "--tools", "dynamic"], "tools", "--tools is an option of dagtools demo, run, mcp, eval"),
        (["tools", "schemas/kitchen.graphql", "--serach", "potato"], "tools", "--serach: did you mean --search?"),
        (["run", "schemas/kitchen.graphql", "Bake", "fries", "--model", "script:x.yaml"], "run", 'goes in quotes: "bake the fries"'),
        (["serve", "--verbose"], "serve", "--verbose goes before the command: dagtools --verbose serve"),
        (["shell", "schemas/kitchen.graphql", "-c", "'Query_potato", "id=1'"], "shell", "goes in one pair of quotes after -c"),
    ],
)
def test_an_argument_the_command_does_not_take_is_said_by_that_command_with_what_was_meant(
    argv: list[str], command: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    said = capsys.readouterr().err
    assert said.startswith(f"usage: dagtools {command} ")  # the command's own usage, not the top-level one
    assert f"dagtools {command}: error: unrecognized arguments: " in said and hint in said


def test_an_unknown_option_with_nothing_like_it_is_said_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["tools", "schemas/kitchen.graphql", "--bogus", "extra"])
    said = capsys.readouterr().err
    assert said.rstrip().endswith("dagtools tools: error: unrecognized arguments: --bogus extra")


def test_an_mcp_server_on_the_port_of_the_api_it_reads_is_told_to_take_another():
    """The quickstart's `dagtools serve` holds 8000, the MCP server's default HTTP port too: the message
    names the API, not "another server" to stop, and the next port to use."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        api = f"http://127.0.0.1:{port}/graphql"
        run = subprocess.run(
            [sys.executable, "-m", "dagtools.cli", "mcp", api, "--transport", "http", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip() == (
        f"dagtools: Port {port} is where the API this server reads listens ({api}): serve MCP on another port, "
        f"such as --port {port + 1} (or port: in the config file)."
    )


def test_a_list_given_as_a_script_says_what_it_is_and_how_to_write_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kitchen = str(ROOT / "examples/kitchen/api.py") + ":schema"
    calls = tmp_path / "calls.json"
    calls.write_text('[{"tool": "Query_potato"}, {"tool": "Potato_peel", "arguments": {}}]')
    assert main(["call", kitchen, str(calls)]) == 2
    assert "this is a list of calls: put it under calls:" in capsys.readouterr().err
    tools = tmp_path / "tools.json"
    assert main(["tools", kitchen, "--all", "--json", "--format", "anthropic"]) == 0
    tools.write_text(capsys.readouterr().out)
    for listed in (tools, ROOT / "examples/kitchen/tools.json"):
        assert main(["call", kitchen, str(listed)]) == 2
        assert "a list of tool definitions (as dagtools tools --json prints, or a tools config), not of calls" in capsys.readouterr().err


def test_a_script_calling_a_mutation_not_allowed_tells_its_host_how_to_allow_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kitchen = str(ROOT / "examples/kitchen/api.py") + ":schema"
    script = tmp_path / "tip.yaml"
    script.write_text("calls:\n  - {tool: Mutation_tip, arguments: {amount: 2}}\n  - {tool: Mutation_tip, arguments: {amount: 3}}\n")
    assert main(["call", kitchen, str(script)]) == 1
    said = capsys.readouterr().err
    assert "the host has not allowed" in said  # what the model reads, as it was
    assert said.count("dagtools: Mutation_tip is a mutation: run with --mutation tip to allow it (repeatable), or --allow-mutations") == 1
    script.write_text(
        "calls:\n  - {tool: selectTools, arguments: {tools: [Mutation_tip]}}\n  - {tool: Mutation_tip, arguments: {amount: 2}}\n"
    )
    assert main(["call", kitchen, str(script), "--mutation", "tip"]) == 0
    assert "is a mutation" not in capsys.readouterr().err


def test_strict_refusal_names_the_option_not_the_python_keyword(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    sdl = tmp_path / "twice.graphql"
    sdl.write_text("type Query { a: Int, a: Int }\n")
    assert main(["tools", str(sdl), "--strict"]) == 2
    err = capsys.readouterr().err
    assert "or run without --strict to drop repeated definitions" in err and "lenient=True" not in err, err
    config = tmp_path / "mcp.yaml"
    config.write_text(f"source: {sdl}\nlenient: false\n")
    assert main(["mcp", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"or set lenient: true in {config} to drop" in err and "lenient=True" not in err, err
