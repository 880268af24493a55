"""Where each node of a trace goes on the page, and the way each edge takes: a layered layout, left to right.

Columns are the nodes' depths (the root, then each object one column after the furthest of what it
came from), so every edge of a run points right. An edge that skips columns takes a thin waypoint
in each column it crosses, stacked like a node, so it runs between the boxes rather than through
them (the classic Sugiyama trick). In a column, each box or waypoint sits level with what it came
from where there is room, so a chain of calls reads as a straight line. The gap before a column is
sized for the labels of the edges that end in it: that is where those labels are drawn.

A long run does not grow the page sideways: when the next column would pass `PAGE_WIDTH` (a laptop
screen), the columns go on in a new band below, as lines of text wrap. An edge that crosses into a
later band leaves its band at the right margin and comes back in at the left margin of the next,
still pointing right; each of its pieces is drawn, the label by the piece that reaches the target.
An object passed as an argument is drawn as a dotted edge from the column just before; one from
further back (a sink used by every call) would cross the whole run, so only the call's label names
it (the Mermaid text keeps every edge).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._trace import Trace, TraceEdge, TraceNode

__all__ = ["Box", "Layout", "Route", "lay_out"]

CHAR = 7.2  # width of one character at the 12px monospace font of the nodes
LABEL_CHAR = 6.6  # and at the 11px of edge labels
LABEL_MAX = 56  # characters of an edge label drawn (the whole label shows on hover)
LINE = 16
_DETAIL_WIDTH = 34  # characters a node's detail line wraps at
_GAP_Y = 22
_WAYPOINT = 8.0
MARGIN = 20.0
PAGE_WIDTH = 1340.0  # the widest drawing: a 1,400 px screen less the page's margins
_BAND_GAP = 40.0


@dataclass(eq=False)
class Box:
    """A node's box, or (without a node) the waypoint of an edge crossing a column."""

    node: TraceNode | None
    lines: list[str]
    width: float
    height: float
    column: int = 0
    band: int = 0
    x: float = 0.0
    y: float = 0.0
    before: list[Box] = field(default_factory=list)  # what it came from, one column back (or further)

    @property
    def middle(self) -> float:
        return self.y + self.height / 2


@dataclass
class Route:
    """The points an edge passes, as (x, y) pairs: leave the source, cross columns, reach the target. An
    edge that runs on into a later band has one piece per band it passes (`pieces[-1]` reaches the target)."""

    edge: TraceEdge
    pieces: list[list[tuple[float, float]]]
    forward: bool

    @property
    def points(self) -> list[tuple[float, float]]:
        return self.pieces[-1]


@dataclass
class Layout:
    boxes: list[Box]
    routes: list[Route]
    width: float
    height: float


def lay_out(trace: Trace) -> Layout:
    boxes = {node.key: _box(node) for node in trace.nodes}
    depths = sorted({n.depth for n in trace.nodes})
    index = {depth: i for i, depth in enumerate(depths)}
    columns: list[list[Box]] = [[] for _ in depths]
    for node in trace.nodes:
        box = boxes[node.key]
        box.column = index[node.depth]
        columns[box.column].append(box)
    chains: list[tuple[TraceEdge, list[Box]]] = []
    for edge in trace.edges:
        source, target = boxes.get(edge.source), boxes.get(edge.target)
        if source is None or target is None or (edge.kind == "uses" and target.column - source.column > 1):
            continue  # an argument from further back is named in its call's label, not drawn across every column
        chain = [source]
        for crossed in range(source.column + 1, target.column):
            waypoint = Box(None, [], 0.0, _WAYPOINT, column=crossed, before=[chain[-1]])
            columns[crossed].append(waypoint)
            chain.append(waypoint)
        if target.column > source.column:
            target.before.append(chain[-1])
        chains.append((edge, [*chain, target]))
    gaps = [_gap(column, trace.edges, boxes) for column in columns]
    for column in columns:
        _stack(column)  # heights within a band; the bands are stacked below
    x, band, rights = MARGIN, 0, [0.0]
    for position, column in enumerate(columns):
        width = max((b.width for b in column), default=0.0)
        gap = gaps[position] if position else 0.0
        if position and x + gap + width + MARGIN > PAGE_WIDTH:
            x, band = MARGIN, band + 1
            rights.append(0.0)
        x += gap
        for box in column:
            box.x, box.band = x, band
            if box.node is None:
                box.width = width
        x += width
        rights[band] = x
    top = 0.0
    for number in range(band + 1):
        in_band = [b for column in columns for b in column if b.band == number]
        for box in in_band:
            box.y += top
        top = max((b.y + b.height for b in in_band), default=top) + _BAND_GAP - MARGIN
    routes = [_route(edge, chain, rights) for edge, chain in chains]
    height = max((b.y + b.height for column in columns for b in column), default=0.0) + MARGIN
    width = max(rights) + MARGIN
    return Layout(boxes=list(boxes.values()), routes=routes, width=width, height=height)


def _box(node: TraceNode) -> Box:
    head = node.label + (f" (saved: {', '.join(node.saved_as)})" if node.saved_as else "")
    lines = [head, *_wrap(node.detail, _DETAIL_WIDTH)[:3]]
    return Box(node, lines, max(len(line) for line in lines) * CHAR + 20, len(lines) * LINE + 14)


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.extend(word[i : i + width] for i in range(0, len(word), width))
    return lines


def _gap(column: list[Box], edges: tuple[TraceEdge, ...], boxes: dict[str, Box]) -> float:
    ending = {b.node.key for b in column if b.node is not None}
    longest = max((min(len(e.label), LABEL_MAX) for e in edges if e.target in ending and e.kind != "uses"), default=0)
    return min(max(longest * LABEL_CHAR + 40, 70.0), LABEL_MAX * LABEL_CHAR + 40)


def _stack(column: list[Box]) -> None:
    """Each box level with the mean of what it came from, in that order, never overlapping the one above."""

    def wanted(box: Box) -> float:
        middles = [b.middle for b in box.before]
        return sum(middles) / len(middles) if middles else 0.0

    column.sort(key=wanted)
    free = MARGIN
    for box in column:
        box.y = max(free, wanted(box) - box.height / 2)
        free = box.y + box.height + (_GAP_Y if box.node is not None else _GAP_Y / 2)


def _route(edge: TraceEdge, chain: list[Box], rights: list[float]) -> Route:
    source, target = chain[0], chain[-1]
    piece = [(source.x + source.width, source.middle)]
    pieces = [piece]
    previous, forward = source, target.column > source.column
    for box in chain[1:]:
        if forward and box.band != previous.band:  # out at this band's right margin, back in at the next band's left
            piece.append((rights[previous.band] + MARGIN / 2, previous.middle))
            piece = [(MARGIN / 2, box.middle)]
            pieces.append(piece)
        piece.append((box.x, box.middle))
        if box is not target:
            piece.append((box.x + box.width, box.middle))
        previous = box
    return Route(edge=edge, pieces=pieces, forward=forward)
