"""`dagtools tools SOURCE` as a person reads it: each tool a signature, grouped by type; a GitHub-sized
API named by type with how to narrow it; the sizes a provider pays behind --sizes; and what a lenient
load tolerated said in one line unless -v, the same for every command that takes a source."""

from __future__ import annotations

import json
import re

import pytest

from tests.command import dagtools
from tests.conftest import FORGE, ROOT, shared_schema_path

KITCHEN = f"{ROOT}/examples/kitchen/api.py:schema"
KITCHEN_SDL = f"{ROOT}/schemas/kitchen.graphql"


def test_tools_lists_every_tool_as_a_signature_grouped_by_type():
    run = dagtools("tools", KITCHEN)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert out.startswith("27 tools in the catalogue, on 6 types; a model starts with selectTools and callChain, and selects from these.\n")
    assert "\n  Potato_slice(Potato?: Potato#N, shape: STICKS|SLICES) -> Potato: Retrieves this potato cut into pieces.\n" in out
    assert "\n  Potato_rinse(Potato?: Potato#N, sink: Sink#N) -> Potato: " in out  # an argument that takes an object
    assert '\n  Query_potato(variety?: String = "Russet") -> Potato: ' in out  # a default
    assert "\n  Query_potatoes() -> [Potato]: " in out
    headers = re.findall(r"^(\w+) \((\d+) tools?\)$", out, re.M)
    assert [h for h, _ in headers][0] == "Query" and sorted(h for h, _ in headers[1:]) == [h for h, _ in headers[1:]]
    assert sum(int(n) for _, n in headers) == 27 == len(re.findall(r"^  \w+\(", out, re.M))
    assert "bytes" not in out and "tokens" not in out


def test_type_narrows_the_listing_and_a_wrong_type_is_named_with_the_close_ones():
    run = dagtools("tools", KITCHEN, "--type", "potato", "--type", "Sink")
    assert run.returncode == 0, run.stderr
    listed = re.findall(r"^  (\w+)\(", run.stdout, re.M)
    assert len(listed) == 10 and all(n.startswith(("Potato_", "Sink_")) for n in listed)
    assert run.stdout.startswith("10 tools of 27 tools in the catalogue, on Potato, Sink.")
    as_json = json.loads(dagtools("tools", KITCHEN, "--type", "Sink", "--json").stdout)
    assert [t["function"]["name"] for t in as_json] == ["Sink_rinse"]
    wrong = dagtools("tools", KITCHEN, "--type", "Potatoe")
    assert wrong.returncode == 2 and "--type Potatoe: no type of this API has tools. Did you mean Potato" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def test_sizes_keep_the_table_a_script_reads():
    run = dagtools("tools", KITCHEN_SDL, "--sizes")
    assert run.returncode == 0, run.stderr
    assert re.match(r"^selectTools +\d+ bytes +\d+ tokens$", run.stdout, re.M)
    assert "\n2 tools of 27 in the catalogue, openai format: " in run.stdout
    anthropic = dagtools("tools", KITCHEN_SDL, "--format", "anthropic")  # a format alone asks for its sizes
    assert "2 tools of 27 in the catalogue, anthropic format: " in anthropic.stdout


@pytest.mark.slow
def test_a_github_sized_api_is_listed_by_type_with_how_to_narrow_it():
    forge = str(shared_schema_path(FORGE))
    run = dagtools("tools", forge)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    total = int(lines[0].split()[0])
    assert total > 1000 and len(lines) <= 120, len(lines)
    types = lines.index("Types, with their count of tools, most first:")  # the forge's Query has hundreds: named, not listed
    assert lines[types + 1].startswith("  Query (") and re.fullmatch(r"  .*and \d+ more types\.", lines[-2])
    assert (
        lines[-1]
        == f"{total} tools are too many to list here: narrow with --type NAME (repeatable) or --search WORDS; --all lists every signature."
    )
    assert max(len(line) for line in lines[types:-1]) <= 100
    one = dagtools("tools", forge, "--type", "Repository")
    assert re.findall(r"^  (\w+?)_", one.stdout, re.M) == ["Repository"] * len(re.findall(r"^  \w+\(", one.stdout, re.M))
    every = dagtools("tools", forge, "--all")
    assert len(re.findall(r"^  \w+\(", every.stdout, re.M)) == total


#: An API in this process whose schema breaks three rules a lenient load tolerates.
TOLERANT_API = '''
from graphql import build_schema

schema = build_schema(
    """
    interface Named { name: String }
    interface Sized { size: Int }
    interface Kinded { kind: String }
    type Thing implements Named & Sized & Kinded { other: Int }
    type Query { thing: Thing, count: Int }
    """,
    assume_valid=True,
    assume_valid_sdl=True,
)
schema._validation_errors = None  # checked when loaded, as a published schema is
schema.query_type.fields["count"].resolve = lambda *_: 3
'''


def _tolerant_source(tmp_path):
    api = tmp_path / "tolerant.py"
    api.write_text(TOLERANT_API)
    return f"{api}:schema"


@pytest.mark.parametrize("command", ["tools", "call"])
def test_tolerated_problems_are_one_line_unless_verbose(tmp_path, command):
    source = _tolerant_source(tmp_path)
    script = tmp_path / "none.yaml"
    script.write_text("calls: []\n")
    args = (command, source) + ((str(script),) if command == "call" else ())
    quiet = dagtools(*args)
    assert quiet.returncode == 0, quiet.stderr
    said = [line for line in quiet.stderr.splitlines() if "tolerated" in line]
    assert len(said) == 1, quiet.stderr
    assert said[0].startswith("dagtools: tolerated 3 problems in the schema (-v lists them, --strict refuses them); the first: ")
    for verbose in (("-v",), ("--verbose",)):
        loud = dagtools(*args, *verbose)
        listed = [line for line in loud.stderr.splitlines() if line.startswith("dagtools: tolerated: ")]
        assert len(listed) == 3 and "Kinded.kind" in listed[-1], loud.stderr
    before = dagtools("-v", *args)  # before the command, as it always was
    assert len([line for line in before.stderr.splitlines() if line.startswith("dagtools: tolerated: ")]) == 3


def test_run_says_what_was_tolerated_in_one_line_too(tmp_path):
    source = _tolerant_source(tmp_path)
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"calls": []}))
    run = dagtools("run", source, "Look around.", "--model", f"script:{model}")
    said = [line for line in run.stderr.splitlines() if "tolerated" in line]
    assert len(said) == 1 and said[0].startswith("dagtools: tolerated 3 problems in the schema"), run.stderr
