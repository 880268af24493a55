"""A trace as one HTML page: the graph laid out here and drawn as inline SVG, readable offline.

No script and no link: the page fetches nothing, so it opens from a CI artifact, an e-mail or an
air-gapped machine, and nothing the model or the API wrote can run in it (every text is escaped).

The layout is layered, left to right: the root, then each object one column after the furthest of the
objects it came from (the one the call ran on and those passed as arguments), so every edge of a run
points right. In a column, a node sits level with what it came from where there is room, so a chain
of calls reads as a straight line. An edge's label sits in the gap before its target's column, which
is sized to hold the labels that end there. A run longer than a laptop screen is wide goes on in
bands below one another, as text wraps into lines, so the page never scrolls sideways.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from .._words import counted
from ._layout import LABEL_CHAR, LABEL_MAX, LINE, Box, Route, lay_out

if TYPE_CHECKING:
    from ._trace import Trace

__all__ = ["to_html"]

_FILL = {"root": "#ddf4ff", "object": "#ffffff", "value": "#f6f8fa", "error": "#ffebe9", "output": "#dafbe1"}
_STROKE = {"root": "#0969da", "object": "#57606a", "value": "#8c959f", "error": "#cf222e", "output": "#1a7f37"}
_EDGE = {"call": "#57606a", "input": "#0969da", "uses": "#8c959f", "saved": "#1a7f37"}


def to_html(trace: Trace) -> str:
    svg = _svg(trace)
    title = html.escape(trace.title)
    objects = trace.objects()
    saved = [n for n in trace.nodes if n.kind == "output"]
    failed = [n for n in trace.nodes if n.kind == "error"]
    summary = (
        f"{counted(len(objects), 'object')}, {counted(trace.calls, 'call')}, {len(failed)} failed, {counted(len(saved), 'output')} saved"
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{title}</title>",
            f"<style>{_CSS}</style></head><body>",
            f"<h1>{title}</h1>",
            f"<p>{html.escape(summary)}. Solid arrows: the call that made an object, from the object it ran on; "
            "dotted: an object passed as an argument; thick: a saved output. Hover a label to read it whole.</p>",
            f'<div class="graph">{svg}</div>',
            _table(trace),
            "<details><summary>The same graph as Mermaid text</summary>",
            f"<pre>{html.escape(trace.mermaid())}</pre></details>",
            "</body></html>",
            "",
        ]
    )


def _table(trace: Trace) -> str:
    made_by: dict[str, str] = {}
    for edge in trace.edges:
        if edge.kind in ("call", "input"):
            made_by.setdefault(edge.target, edge.label)
    rows = []
    for node in trace.nodes:
        if node.kind in ("object", "error"):
            saved = f" (saved as {', '.join(node.saved_as)})" if node.saved_as else ""
            cells = [node.label + saved, made_by.get(node.key, ""), node.detail]
            rows.append(f'<tr class="{node.kind}">' + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    head = "<tr><th>object</th><th>made by</th><th>description</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _svg(trace: Trace) -> str:
    layout = lay_out(trace)
    width, height = f"{layout.width:.0f}", f"{layout.height:.0f}"
    markers = "".join(
        f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">'
        f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{color}"/></marker>'
        for kind, color in _EDGE.items()
    )
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">', f"<defs>{markers}</defs>"]
    parallel: dict[tuple[str, str], int] = {}  # labels of edges between the same two nodes stack, not overlap
    drawn = []
    connectors: list[str] = []
    for route in layout.routes:
        pair = (route.edge.source, route.edge.target)
        drawn.append(_edge(route, parallel.get(pair, 0)))
        parallel[pair] = parallel.get(pair, 0) + 1
        connectors.extend(_connectors(route, first=len(connectors) // 2 + 1))
    parts.extend(path for path, _ in drawn)
    parts.extend(label for _, label in drawn)  # over every line
    parts.extend(connectors)
    parts.extend(_node(box) for box in layout.boxes if box.node is not None)
    parts.append("</svg>")
    return "".join(parts)


def _edge(route: Route, stacked: int = 0) -> tuple[str, str]:
    """A smooth path through the route's points (straight across a column, curved between columns), and
    its label in the gap before the target. An object passed as an argument shows its name on hover only:
    the call's own label already says it. An edge that runs on into the next band is one path a band, the
    arrowhead on the last."""
    edge, points = route.edge, route.points
    color = _EDGE[edge.kind]
    dash = ' stroke-dasharray="5 4"' if edge.kind == "uses" else ""
    stroke = 2.5 if edge.kind == "saved" else 1.3
    title = f"<title>{html.escape(edge.label)}</title>"
    paths = []
    for number, piece in enumerate(route.pieces, start=1):
        arrow = f' marker-end="url(#arrow-{edge.kind})"' if number == len(route.pieces) else ""
        paths.append(f'<path d="{_path(piece)}" fill="none" stroke="{color}" stroke-width="{stroke}"{dash}{arrow}>{title}</path>')
    path = "".join(paths)
    if edge.kind == "uses":
        return path, ""
    shown = edge.label if len(edge.label) <= LABEL_MAX else edge.label[: LABEL_MAX - 1] + "…"
    text_width = len(shown) * LABEL_CHAR
    (x1, y1), (x2, y2) = points[-2], points[-1]
    if route.forward:
        lx = max(x1 + 4, x2 - text_width - 14)
        bend = max((x2 - x1) / 2, 40.0)
        ly = _curve_y((x1, y1, x1 + bend, y1, x2 - bend, y2, x2, y2), lx + text_width / 2)
    else:
        lx, ly = (x1 + x2 - text_width) / 2, (y1 + y2) / 2
    ly -= 16 * stacked
    label = (
        f'<g class="label">{title}<rect x="{lx - 3:.1f}" y="{ly - 8:.1f}" width="{text_width + 6:.1f}" height="15" rx="3"/>'
        f'<text x="{lx:.1f}" y="{ly + 3.5:.1f}" style="fill: {color}">{html.escape(shown)}</text></g>'
    )
    return path, label


def _connectors(route: Route, *, first: int) -> list[str]:
    """Where an edge wraps into the next band, a numbered mark at the right margin it leaves by and the
    same number at the left margin it comes back in at, as off-page connectors pair in a flowchart: the
    eye finds where the line goes on. Numbers run from `first`, one a wrap."""
    color = _EDGE[route.edge.kind]
    marks = []
    for number, (leaving, entering) in enumerate(zip(route.pieces, route.pieces[1:]), start=first):
        title = html.escape(route.edge.label)
        for (x, y), where in ((leaving[-1], "goes on in the next band"), (entering[0], "comes from the band above")):
            marks.append(
                f'<g class="wrap"><title>{title}: {where}</title><circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="#ffffff" '
                f'stroke="{color}" stroke-width="1.3"/><text x="{x:.1f}" y="{y + 3.5:.1f}" text-anchor="middle" '
                f'style="fill: {color}; font-size: 10px">{number}</text></g>'
            )
    return marks


def _path(points: list[tuple[float, float]]) -> str:
    commands = [f"M {points[0][0]:.1f} {points[0][1]:.1f}"]
    last = points[0]
    for index, (x, y) in enumerate(points[1:], start=1):
        if index % 2 == 0:  # across a column
            commands.append(f"L {x:.1f} {y:.1f}")
        else:
            bend = max((x - last[0]) / 2, 40.0)
            commands.append(f"C {last[0] + bend:.1f} {last[1]:.1f}, {x - bend:.1f} {y:.1f}, {x:.1f} {y:.1f}")
        last = (x, y)
    return " ".join(commands)


def _curve_y(curve: tuple[float, ...], x: float) -> float:
    """The curve's height where it crosses `x` (found by bisection: x grows along a forward edge)."""
    low, high = 0.0, 1.0
    for _ in range(30):
        t = (low + high) / 2
        if _bezier(curve[0::2], t) < x:
            low = t
        else:
            high = t
    return _bezier(curve[1::2], (low + high) / 2)


def _bezier(points: tuple[float, ...], t: float) -> float:
    a, b, c, d = points
    u = 1 - t
    return u * u * u * a + 3 * u * u * t * b + 3 * u * t * t * c + t * t * t * d


def _node(box: Box) -> str:
    node = box.node
    assert node is not None
    kind = node.kind
    stroke_width = 3 if node.saved_as else 1.3
    stroke = _STROKE["output"] if node.saved_as else _STROKE[kind]
    radius = box.height / 2 if kind in ("root", "value") else 4
    texts = "".join(
        f'<text x="{box.x + 10:.1f}" y="{box.y + 20 + i * LINE:.1f}"{_HEAD if i == 0 else ""}>{html.escape(line)}</text>'
        for i, line in enumerate(box.lines)
    )
    return (
        f'<g class="node {kind}" id="{html.escape(node.key)}"><title>{html.escape(f"{node.label} {node.detail}".strip())}</title>'
        f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" rx="{radius:.1f}" '
        f'fill="{_FILL[kind]}" stroke="{stroke}" stroke-width="{stroke_width}"/>{texts}</g>'
    )


_HEAD = ' class="head"'
_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1f2328; }
h1 { font-size: 20px; margin: 0 0 8px; }
.graph { overflow: auto; border: 1px solid #d0d7de; border-radius: 6px; margin: 12px 0 20px; }
svg text { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; fill: #1f2328; }
svg text.head { font-weight: 600; }
svg .label text { font-size: 11px; }
svg .label rect { fill: #ffffff; opacity: 0.9; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
td:first-child, td:nth-child(2) { font-family: ui-monospace, monospace; }
tr.error td { background: #ffebe9; }
pre { background: #f6f8fa; padding: 8px; overflow: auto; }
"""
