"""Where each node of a trace goes on the page, and the way each edge takes: a layered layout, left to right.

Columns are the nodes' depths (the root, then each object one column after the furthest of what it
came from), so every edge of a run points right. An edge that skips columns takes a thin waypoint
in each column it crosses, stacked like a node, so it runs between the boxes rather than through
them (the classic Sugiyama trick). In a column, each box or waypoint sits level with what it came
from where there is room, so a chain of calls reads as a straight line. The gap before a column is
sized for the labels of the edges that end in it: that is where those labels are drawn.
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


@dataclass(eq=False)
class Box:
    """A node's box, or (without a node) the waypoint of an edge crossing a column."""

    node: TraceNode | None
    lines: list[str]
    width: float
    height: float
    column: int = 0
    x: float = 0.0
    y: float = 0.0
    before: list[Box] = field(default_factory=list)  # what it came from, one column back (or further)

    @property
    def middle(self) -> float:
        return self.y + self.height / 2


@dataclass
class Route:
    """The points an edge passes, as (x, y) pairs: leave the source, cross columns, reach the target."""

    edge: TraceEdge
    points: list[tuple[float, float]]
    forward: bool


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
        if source is None or target is None:
            continue
        chain = [source]
        for crossed in range(source.column + 1, target.column):
            waypoint = Box(None, [], 0.0, _WAYPOINT, column=crossed, before=[chain[-1]])
            columns[crossed].append(waypoint)
            chain.append(waypoint)
        if target.column > source.column:
            target.before.append(chain[-1])
        chains.append((edge, [*chain, target]))
    gaps = [_gap(column, trace.edges, boxes) for column in columns]
    x = MARGIN
    for position, column in enumerate(columns):
        x += gaps[position] if position else 0.0
        width = max((b.width for b in column), default=0.0)
        for box in column:
            box.x = x
            if box.node is None:
                box.width = width
        x += width
        _stack(column)
    routes = [_route(edge, chain) for edge, chain in chains]
    height = max((b.y + b.height for b in boxes.values()), default=0.0) + MARGIN
    return Layout(boxes=list(boxes.values()), routes=routes, width=x + MARGIN, height=height)


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


def _route(edge: TraceEdge, chain: list[Box]) -> Route:
    source, target = chain[0], chain[-1]
    points = [(source.x + source.width, source.middle)]
    for waypoint in chain[1:-1]:
        points += [(waypoint.x, waypoint.middle), (waypoint.x + waypoint.width, waypoint.middle)]
    points.append((target.x, target.middle))
    return Route(edge=edge, points=points, forward=target.column > source.column)
