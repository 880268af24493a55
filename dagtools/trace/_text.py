"""A trace as a Mermaid flowchart: text that GitHub, GitLab and most Markdown viewers draw.

Every label is quoted and escaped, whatever the model or the API put in it: a quote, an angle
bracket or a backtick in an argument cannot end the label or turn into markup.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._trace import Trace, TraceEdge, TraceNode

__all__ = ["mermaid_label", "to_mermaid"]

#: Node shapes by kind: the root a circle, objects boxes, values rounded, failures hexagons, outputs subroutines.
_SHAPES = {"root": ("((", "))"), "object": ("[", "]"), "value": ("(", ")"), "error": ("{{", "}}"), "output": ("[[", "]]")}
#: Edge strokes by kind: a call or input solid, an object passed as an argument dotted, a save thick.
_ARROWS = {"call": "-->", "input": "-->", "uses": "-.->", "saved": "==>"}
_STYLES = {
    "saved": "stroke:#1a7f37,stroke-width:3px",
    "error": "fill:#ffebe9,stroke:#cf222e",
    "value": "fill:#f6f8fa,stroke:#8c959f",
    "output": "fill:#dafbe1,stroke:#1a7f37",
}


def to_mermaid(trace: Trace) -> str:
    lines = ["flowchart TD"]
    for node in trace.nodes:
        lines.append(f"  {node.key}{_shape(node)}")
    for edge in trace.edges:
        lines.append(f"  {_edge(edge)}")
    classes = {
        "saved": [n.key for n in trace.nodes if n.saved_as],
        "error": [n.key for n in trace.nodes if n.kind == "error"],
        "value": [n.key for n in trace.nodes if n.kind == "value"],
        "output": [n.key for n in trace.nodes if n.kind == "output"],
    }
    for name, keys in classes.items():
        if keys:
            lines.append(f"  classDef {name} {_STYLES[name]}")
            lines.append(f"  class {','.join(keys)} {name}")
    return "\n".join(lines) + "\n"


def _shape(node: TraceNode) -> str:
    opening, closing = _SHAPES[node.kind]
    text = mermaid_label(node.label + (f" (saved: {', '.join(node.saved_as)})" if node.saved_as else ""))
    if node.detail:
        text += "<br/>" + mermaid_label(node.detail)
    return f'{opening}"{text}"{closing}'


def _edge(edge: TraceEdge) -> str:
    return f'{edge.source} {_ARROWS[edge.kind]}|"{mermaid_label(edge.label)}"| {edge.target}'


_ENTITY = re.compile(r"#(?=[A-Za-z0-9]+;)")


def mermaid_label(text: str) -> str:
    """`text` safe inside a quoted Mermaid label: entity codes for what would end it or read as markup."""
    text = _ENTITY.sub("#35;", " ".join(text.split()))
    for char, code in (('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("`", "#96;"), ("|", "#124;")):
        text = text.replace(char, code)
    return text
