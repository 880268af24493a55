"""An example chain of the served API for callChain's description: tools the model can see exist, in
the shape of the chains it will write (a root tool that hands out many objects, then a tool of theirs).
"""

from __future__ import annotations

from typing import Any

from ._catalogue import Catalogue, is_list
from ._reach import example_call
from ._tool import FIELDS, FIELDS_SCHEMA

__all__ = ["example_chain"]


def example_chain(catalogue: Catalogue) -> list[dict[str, Any]]:
    """A chain of this API for descriptions: a root tool that hands out a type, then a tool of that type."""
    return catalogue.derived("example chain", lambda: _example_chain(catalogue))


def _example_chain(catalogue: Catalogue) -> list[dict[str, Any]]:
    """Best: a root tool needing no argument that hands out many objects, then a tool of theirs that
    hands out objects too (`Query_allFilms` then `Film_characterConnection`); else a root tool that
    makes the type of the usual example call, then that call."""
    best: tuple[tuple[bool, bool], str, str] | None = None
    for root in catalogue.tools_for_type(catalogue.query_type) if catalogue.query_type else ():
        target = _handed_out(catalogue, root)
        if catalogue.tool(root).parameters.get("required") or target is None:
            continue
        free = [n for n in catalogue.tools_for_type(target) if not catalogue.tool(n).parameters.get("required")]
        following = next((n for n in free if _handed_out(catalogue, n) is not None), free[0] if free else None)
        if following is None:
            continue
        many = catalogue.connection(catalogue.target(root)) is not None or is_list(catalogue.field(catalogue.ref(root)).type)
        score = (_handed_out(catalogue, following) is not None, many)
        if best is None or score > best[0]:
            best = (score, root, following)
        if score == (True, True):
            break
    if best is not None:
        return [{"tool": best[1]}, _naming(catalogue, best[2])]
    name, arguments = example_call(catalogue)
    ref = catalogue.ref(name)
    if catalogue.is_root(ref.type_name):
        return [{"tool": name, "arguments": arguments}]
    makers = [m for m in catalogue.makers(ref.type_name) if catalogue.is_root(catalogue.ref(m).type_name)]
    makers.sort(key=lambda m: (bool(catalogue.tool(m).parameters.get("required")), len(m)))
    if not makers:
        return [{"tool": name, "arguments": arguments}]
    maker = catalogue.tool(makers[0])
    given = {k: _placeholder(maker.parameters["properties"][k]) for k in maker.parameters.get("required", ())}
    first: dict[str, Any] = {"tool": maker.name, "arguments": given} if given else {"tool": maker.name}
    return [first, {"tool": name}]


def _naming(catalogue: Catalogue, name: str) -> dict[str, Any]:
    """The chain's last step, naming the field it shows of each object it hands out (its naming
    column), so the example also teaches that a step takes `fields`."""
    target = _handed_out(catalogue, name)
    lead = next(iter(catalogue.preview_fields(target)), None) if target is not None else None
    parameters = catalogue.tool(name).parameters.get("properties", {})
    if lead is None or parameters.get(FIELDS) != FIELDS_SCHEMA:  # an API's own `fields` argument is not ours
        return {"tool": name}
    return {"tool": name, "arguments": {FIELDS: [lead]}}


def _handed_out(catalogue: Catalogue, name: str) -> str | None:
    """The object type a tool hands out (a connection's nodes), when it has tools and is no root."""
    target = catalogue.target(name)
    shape = catalogue.connection(target)
    target = shape.node_type if shape is not None else target
    return target if not catalogue.is_root(target) and catalogue.tools_for_type(target) else None


def _placeholder(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    return 1 if kind == "integer" else True if kind == "boolean" else "1"
