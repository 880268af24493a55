"""`--trace`, `Trace.of(session)` and `write_trace`: a run's objects as a graph, each linked to the object and call it came from."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from dagtools import SessionState, Trace, write_trace
from dagtools.cli._main import main
from tests.command import dagtools
from tests.conftest import ROOT
from tests.fake_models import openai_server  # noqa: F401
from tests.kitchen import SEED_INPUTS, call, kitchen_session

KITCHEN = "examples/kitchen/api.py:schema"
FRIES = "examples/kitchen/fries.yaml"
SEED_ARGS = [*(f"--input={name}={spec['field']}:{spec['description']}" for name, spec in SEED_INPUTS.items()), "--output=fries:Plate"]
FRIES_OBJECTS = {"Oven#1", "Potato#1", "Sink#1", "Plate#1", "Potato#2", "Potato#3", "Potato#4", "Fries#1", "Plate#2"}

_NODE = re.compile(r'^  (\w+)(\(\(|\[\[|\{\{|\[|\()"([^"]*)"(\)\)|\]\]|\}\}|\]|\))$')
_EDGE = re.compile(r'^  (\w+) (-->|-\.->|==>)\|"([^"]*)"\| (\w+)$')
_CLASS = re.compile(r"^  (classDef \w+ [^ ]+|class [\w,]+ \w+)$")


def parse_mermaid(text: str) -> tuple[dict[str, str], list[tuple[str, str, str, str]]]:
    """Nodes (key -> label) and edges (source, arrow, label, target); every line must be one of the forms written."""
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    nodes: dict[str, str] = {}
    edges = []
    for line in lines[1:]:
        if match := _NODE.match(line):
            nodes[match.group(1)] = match.group(3)
        elif match := _EDGE.match(line):
            edges.append((match.group(1), match.group(2), match.group(3), match.group(4)))
        else:
            assert _CLASS.match(line), f"not a Mermaid line this writer makes: {line!r}"
    for source, _, _, target in edges:
        assert source in nodes and target in nodes, (source, target)
    return nodes, edges


def object_ids(nodes: dict[str, str]) -> set[str]:
    return {m.group(0) for label in nodes.values() if (m := re.match(r"[A-Za-z_]\w*#\d+", label))}


def test_demo_trace_mmd_draws_every_object_and_names_every_call(tmp_path: Path):
    path = tmp_path / "fries.mmd"
    run = dagtools("demo", "--trace", str(path))
    assert run.returncode == 0, run.stderr
    assert f"trace of 9 objects and 8 calls written to {path}" in run.stderr
    nodes, edges = parse_mermaid(path.read_text())
    assert object_ids(nodes) == FRIES_OBJECTS
    tools = {"Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake", "Fries_plate", "save"}
    for source, arrow, label, target in edges:
        assert label.startswith("input: ") or any(f". {tool}" in label for tool in tools) or re.match(r"\d+\. \w+$", label), label
    by_target = {(s, t): label for s, _, label, t in edges}
    assert by_target[("o_Potato_1", "o_Potato_2")] == "2. Potato_rinse(sink: Sink#1)"
    assert by_target[("o_Sink_1", "o_Potato_2")] == "2. sink"  # the object passed as an argument
    assert by_target[("o_Oven_1", "o_Fries_1")] == "5. Oven_bake(item: Potato#4)"
    assert by_target[("root", "o_Oven_1")] == "input: oven"
    assert by_target[("o_Plate_2", "out_fries")] == "8. save(fries)"
    assert nodes["o_Plate_2"] == "Plate#2 (saved: fries)"
    assert "class o_Plate_2 saved" in path.read_text()
    # every object but the inputs came from exactly one call; the graph has no object without an edge into it
    targets = {t for _, _, _, t in edges}
    assert {k for k in nodes if k.startswith("o_")} <= targets


def test_call_trace_html_is_self_contained_and_shows_every_object(tmp_path: Path):
    path = tmp_path / "fries.html"
    run = dagtools("call", KITCHEN, FRIES, "--trace", str(path))
    assert run.returncode == 0, run.stderr
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>")
    for external in ("http:", "https:", "//", "src=", "href=", "<script", "<link", "@import", "<iframe", "<img"):
        assert external not in page.lower(), external
    assert re.findall(r"url\(([^)]*)\)", page) and all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", page))
    svg = ElementTree.fromstring(re.search(r"<svg.*</svg>", page, re.DOTALL).group(0))  # the drawing is well-formed XML
    drawn = {"".join(t.itertext()) for t in svg.iter("text")}
    for object_id in FRIES_OBJECTS:
        assert any(text.startswith(object_id) for text in drawn), object_id
    assert "Plate#2 (saved: fries)" in drawn
    assert len(svg.findall("g[@class='node object']")) == 9
    assert "2. Potato_rinse(sink: Sink#1)" in drawn


def test_every_edge_points_right_in_the_page(tmp_path: Path):
    """The layout puts each object after what it came from: no edge runs backwards or through a box."""
    path = tmp_path / "fries.html"
    assert dagtools("demo", "--trace", str(path)).returncode == 0
    svg = ElementTree.fromstring(re.search(r"<svg.*</svg>", path.read_text(), re.DOTALL).group(0))
    nodes = [g for g in svg.iter("g") if "node" in (g.get("class") or "")]
    boxes = [tuple(float(g.find("rect").get(k)) for k in ("x", "y", "width", "height")) for g in nodes]
    assert boxes
    for edge in svg.findall("path"):  # the edges (arrowheads are paths inside markers)
        commands = [(c, [float(n) for n in re.findall(r"-?[0-9.]+", rest)]) for c, rest in re.findall(r"([MLC])([^MLC]*)", edge.get("d"))]
        start, end = commands[0][1][-2:], commands[-1][1][-2:]
        assert end[0] > start[0], edge.get("d")
        point = start
        for command, numbers in commands[1:]:
            if command == "L":  # straight across a column it skips: between the boxes there, never through one
                for x, y, width, height in boxes:
                    overlaps = min(point[0], numbers[0]) < x + width and max(point[0], numbers[0]) > x
                    assert not (overlaps and y <= numbers[1] <= y + height), (edge.get("d"), (x, y, width, height))
            point = numbers[-2:]


def test_a_failed_run_is_traced_with_its_errors(tmp_path: Path):
    script = tmp_path / "broken.yaml"
    script.write_text(
        "inputs: {potato: {field: potato, description: 'A \"raw\" potato <b>'}}\n"
        "calls:\n"
        "  - {tool: selectTools, arguments: {tools: [Potato_peel, Potato_slice]}}\n"
        "  - {tool: Potato_peel, arguments: {Potato: 'Potato#1'}}\n"
        "  - {tool: Potato_slice, arguments: {Potato: 'Potato#2', shape: '\"]--><script>alert(1)</script>'}}\n"
    )
    mmd, page = tmp_path / "broken.mmd", tmp_path / "broken.html"
    assert dagtools("call", KITCHEN, str(script), "--trace", str(mmd)).returncode == 1
    nodes, edges = parse_mermaid(mmd.read_text())
    assert object_ids(nodes) == {"Potato#1", "Potato#2"}
    errors = [k for k in nodes if k.startswith("e")]
    assert len(errors) == 1 and nodes[errors[0]].startswith("error<br/>")
    assert [(s, label.split("(")[0]) for s, _, label, t in edges if t == errors[0]] == [("o_Potato_2", "3. Potato_slice")]
    assert dagtools("call", KITCHEN, str(script), "--trace", str(page)).returncode == 1
    assert "<script" not in page.read_text() and "&lt;script&gt;" in page.read_text()


def test_run_writes_its_trace_when_the_model_fails(tmp_path: Path):
    """A model server that cannot be reached fails the run after the session opened; the picture of what
    the session held is still written."""
    path = tmp_path / "run.mmd"
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    model = ["--model", "openai:x", "--base-url", f"http://127.0.0.1:{port}/v1"]
    run = dagtools("run", KITCHEN, "Bake fries", *SEED_ARGS, *model, "--trace", str(path), env=env)
    assert run.returncode == 1, run.stderr
    nodes, edges = parse_mermaid(path.read_text())
    assert object_ids(nodes) == {"Oven#1", "Potato#1", "Sink#1", "Plate#1"}
    assert all(label.startswith("input: ") for _, _, label, _ in edges)


def test_run_with_a_script_model_traces_the_fries(tmp_path: Path):
    path = tmp_path / "run.mmd"
    run = dagtools("run", KITCHEN, "Bake fries", *SEED_ARGS, "--model", f"script:{FRIES}", "--trace", str(path))
    assert run.returncode == 0, run.stderr
    nodes, _ = parse_mermaid(path.read_text())
    assert object_ids(nodes) == FRIES_OBJECTS


def test_trace_options_are_checked_before_anything_runs(tmp_path: Path):
    bad = dagtools("demo", "--trace", str(tmp_path / "fries.png"))
    assert bad.returncode == 2 and "FILE.html" in bad.stderr and "Traceback" not in bad.stderr
    # A folder that does not exist is said before the run (which may be a long one, or write to the API),
    # not after it, when the picture is lost.
    nowhere = dagtools("call", KITCHEN, FRIES, "--trace", str(tmp_path / "missing" / "fries.html"))
    assert nowhere.returncode == 2 and "Traceback" not in nowhere.stderr
    assert f"the folder {tmp_path / 'missing'} does not exist" in nowhere.stderr and "Potato_rinse" not in nowhere.stdout
    folder = tmp_path / "traces.html"
    folder.mkdir()
    assert dagtools("demo", "--trace", str(folder)).returncode == 2


async def test_python_trace_of_a_session_and_of_its_stored_state(tmp_path: Path):
    async with await kitchen_session() as session:
        await call(session, "selectTools", tools=["Potato_peel", "Potato_variety"])
        await call(session, "Potato_peel", Potato="Potato#1")
        await call(session, "Potato_variety")  # a value, read from the most recent potato
        await call(session, "Potato_peel", Potato="Potato#9")  # an error: no such object
        trace = Trace.of(session)
        stored = SessionState.from_json(json.loads(json.dumps(session.state().to_json())))
    nodes, edges = parse_mermaid(trace.mermaid())
    assert object_ids(nodes) == {"Oven#1", "Potato#1", "Sink#1", "Plate#1", "Potato#2"}
    values = [k for k in nodes if k.startswith("v")]
    assert [nodes[v] for v in values] == ["#quot;Russet#quot;"]
    assert ("o_Potato_2", "-->", "3. Potato_variety()", values[0]) in edges
    assert any(t.startswith("e") and label.startswith("4. Potato_peel") for _, _, label, t in edges)
    written = write_trace(stored, tmp_path / "stored.md")
    assert written.mermaid() == trace.mermaid()
    assert (tmp_path / "stored.md").read_text().startswith("# dagtools run\n\n```mermaid\nflowchart TD\n")


@pytest.mark.e2e
def test_the_readme_section_runs_and_shows_what_the_demo_writes(tmp_path: Path):
    """Each block of the "Seeing a run" page (docs/traces.md) runs as written (in a directory beside
    examples/), and the Mermaid shown there and in the README is what `dagtools demo --trace fries.mmd` writes."""
    section = (ROOT / "docs" / "traces.md").read_text()
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    [shell] = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-euc", shell], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert {p.name for p in tmp_path.glob("fries.*")} == {"fries.mmd", "fries.html", "fries.md"}
    [shown] = re.findall(r"```mermaid\n(.*?)```", section, re.DOTALL)
    assert shown == (tmp_path / "fries.mmd").read_text()
    [in_readme] = re.findall(r"```mermaid\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    assert in_readme == shown, "the README's picture is not what the demo draws"
    [code] = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    ran = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    nodes, edges = parse_mermaid(ran.stdout.strip() + "\n")
    assert object_ids(nodes) == {"Potato#1", "Potato#2"} and ("o_Potato_1", "-->", "1. Potato_peel()", "o_Potato_2") in edges


def _svg(page: str) -> str:
    return re.search(r"<svg.*</svg>", page, re.DOTALL).group(0)


def test_a_model_run_over_the_openai_wire_is_traced_as_its_replayed_script(
    openai_server,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
):
    """A model sends its arguments as JSON text (the context keeps them so); a script's are objects. The
    trace of the same calls is the same picture either way, in Mermaid and on the page."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = ["--model", "openai:fake", "--base-url", openai_server.url]
    ran, replayed = tmp_path / "ran", tmp_path / "replayed"
    code = main(["run", KITCHEN, "Bake fries", *SEED_ARGS, *model, "--json", "--trace", f"{ran}.mmd"])
    script = capsys.readouterr().out
    assert code == 0 and openai_server.problems == []
    assert main(["call", KITCHEN, str(_write(tmp_path / "run.json", script)), "--trace", f"{replayed}.mmd"]) == 0
    assert isinstance(json.loads(script)["calls"][1]["arguments"], dict)
    drawn = Path(f"{ran}.mmd").read_text()
    assert drawn == Path(f"{replayed}.mmd").read_text()
    nodes, edges = parse_mermaid(drawn)
    assert object_ids(nodes) == FRIES_OBJECTS
    labels = {(s, t): label for s, _, label, t in edges}
    assert labels[("o_Potato_1", "o_Potato_2")] == "2. Potato_rinse(sink: Sink#1)"
    assert labels[("o_Sink_1", "o_Potato_2")] == "2. sink"  # the dotted argument edge
    assert labels[("o_Plate_2", "out_fries")] == "9. save(fries)"  # the save edge has its step
    drawn_in_order = [nodes[k].split("<br/>")[0].split(" ")[0] for k in nodes if k.startswith("o_")]
    assert drawn_in_order == ["Oven#1", "Potato#1", "Sink#1", "Plate#1", "Potato#2", "Potato#3", "Potato#4", "Fries#1", "Plate#2"]
    for suffix in (".html",):
        assert main(["run", KITCHEN, "Bake fries", *SEED_ARGS, *model, "--trace", f"{ran}{suffix}"]) == 0
        assert main(["call", KITCHEN, str(tmp_path / "run.json"), "--trace", f"{replayed}{suffix}"]) == 0
        assert _svg(Path(f"{ran}{suffix}").read_text()) == _svg(Path(f"{replayed}{suffix}").read_text())


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _long_run(calls: int) -> SessionState:
    """A run of `calls` rinses, each of the potato the one before made, all in the same sink: as a model
    sends it (arguments as JSON text), then saved."""
    objects = [
        {"id": "Sink#1", "expression": "sink", "description": "A sink for cleaning food."},
        {"id": "Potato#1", "expression": "potato", "description": "The raw potato."},
    ]
    context: list[dict] = []
    for n in range(2, calls + 2):
        objects.append({"id": f"Potato#{n}", "expression": f"Potato#{n - 1}.rinse(sink: Sink#1)", "preview": {"rinsed": True}})
        arguments = json.dumps({"Potato": f"Potato#{n - 1}", "sink": "Sink#1"})
        rinse = {"id": f"c{n}", "name": "Potato_rinse", "arguments": arguments}
        context.append({"role": "assistant", "content": "", "tool_calls": [rinse]})
        context.append({"role": "tool", "tool_call_id": f"c{n}", "content": json.dumps({"result": f"Potato#{n}"})})
    last = f"Potato#{calls + 1}"
    save = {"id": "s", "name": "save", "arguments": json.dumps({"potato": last})}
    context += [{"role": "assistant", "content": "", "tool_calls": [save]}, {"role": "tool", "tool_call_id": "s", "content": "Saved."}]
    return SessionState(
        objects=tuple(objects),
        active_tools=(),
        values=(),
        outputs=({"name": "potato", "type": "Potato", "description": ""},),
        saved={"potato": last},
        done=True,
        long_values={},
        context=tuple(context),
    )


@pytest.mark.parametrize("calls", [8, 60])
def test_a_long_run_fits_a_laptop_screen(calls: int):
    """However long the run, the page is at most 1,400 px wide: the columns wrap into bands below one
    another. Every object is drawn, every edge still points right and none runs through a box."""
    page = Trace.of(_long_run(calls)).html()
    svg = ElementTree.fromstring(_svg(page))
    assert float(svg.get("width")) <= 1400
    nodes = [g for g in svg.iter("g") if "node" in (g.get("class") or "")]
    boxes = {g.get("id"): tuple(float(g.find("rect").get(k)) for k in ("x", "y", "width", "height")) for g in nodes}
    assert {f"o_Potato_{n}" for n in range(1, calls + 2)} <= set(boxes)
    assert all(x + width <= 1400 for x, _, width, _ in boxes.values())
    for edge in svg.findall("path"):
        points = [[float(n) for n in re.findall(r"-?[0-9.]+", rest)] for _, rest in re.findall(r"([MLC])([^MLC]*)", edge.get("d"))]
        assert points[-1][-2] > points[0][0], edge.get("d")
    labels = {"".join(t.itertext()) for t in svg.iter("text")}
    assert f"{calls}. Potato_rinse(sink: Sink#1)" in labels and f"{calls + 1}. save(potato)" in labels
    _, edges = parse_mermaid(Trace.of(_long_run(calls)).mermaid())
    assert sum(1 for s, arrow, _, _ in edges if s == "o_Sink_1" and arrow == "-.->") == calls  # Mermaid keeps every argument edge


def test_the_demo_page_is_titled_by_what_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    page = tmp_path / "fries.html"
    assert main(["demo", "--trace", str(page)]) == 0
    title = re.search(r"<title>(.*)</title>", page.read_text()).group(1)
    assert title == "dagtools demo: the french-fries script replayed on the kitchen API"
    assert "1 output saved" in page.read_text() and "9 objects, 8 calls" in page.read_text()


def test_an_edge_that_wraps_into_the_next_band_is_marked_where_it_leaves_and_where_it_comes_back():
    """Each wrap of an edge draws the same number twice: at the right margin it leaves by and at the
    left margin of the band below, where it comes back in."""
    page = Trace.of(_long_run(60)).html()
    svg = ElementTree.fromstring(_svg(page))
    width = float(svg.get("width"))
    marks = [g for g in svg.iter("g") if g.get("class") == "wrap"]
    assert marks, "a run of 60 calls wraps into several bands"
    numbers = ["".join(g.find("text").itertext()) for g in marks]
    assert numbers[0::2] == numbers[1::2]  # leave and come back in pairs
    assert sorted(set(numbers), key=int) == [str(n) for n in range(1, len(marks) // 2 + 1)]
    for leave, enter in zip(marks[0::2], marks[1::2]):
        (lx, ly), (ex, ey) = [[float(g.find("circle").get(k)) for k in ("cx", "cy")] for g in (leave, enter)]
        assert lx > width / 2 > ex and ey > ly  # out on the right, in on the left of a band further down
        assert "goes on in the next band" in "".join(leave.find("title").itertext())
