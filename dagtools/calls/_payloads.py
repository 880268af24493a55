"""What the model reads of a mutation's payload: what the write did, and why it did nothing.

A mutation often answers with a payload object (`CreateIssuePayload { issue, clientMutationId }`,
`CreateSightingPayload { sighting, errors: [UserError!]! }`) rather than the object it changed.
The payload has no identity, so it is kept as a snapshot of what its document read (see
calls/_documents.py), and its result shows all of that at once, so the model needs no further call
to learn what happened:

    {"result": "CloseIssuePayload#1",
     "preview": {"issue": "Issue#3", "clientMutationId": null},
     "objects": {"Issue#3": {"title": "Bins overflow", "number": 3, "state": "CLOSED"}}}

- `preview` holds the payload's fields as read: scalars as they are, each linked object with
  identity as its `Type#N` (minted now; its own preview under `objects`), and objects without
  identity (user errors, edges) inline with their scalars. An object the session already holds is
  its `Type#N` whatever its lookup returns (an interface, a union, none at all: its `id` tells it),
  and what the session holds of it becomes what the write read back (see registry/_identity.py), so
  no later read answers with values from before the write.
- User errors (a list named `errors`, `userErrors` and the like, or objects of a type named
  `...Error`) and a `success: false` are what a write that did nothing says: a note quotes them, so
  a null `sighting` never reads as success.
- Everything is bounded: lists show their first items, texts their start, an inline object a
  quarter of the result budget and the whole preview half of it; the note says what was cut and
  which tool reads the rest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from graphql import GraphQLObjectType, get_named_type, is_abstract_type, is_composite_type, is_leaf_type

from .._errors import ToolCallError
from ..registry._handles import Step, thaw
from ..registry._identity import Met, held_entry
from ..registry._registry import ObjectEntry

if TYPE_CHECKING:  # _field imports this module
    from ._field import FieldCalls

__all__ = ["present_linked", "present_payload", "read_snapshot", "refusal_note"]

#: Items of one list a payload result shows; the field's own tool gives them all.
SHOWN_ITEMS = 10
#: Characters of a text a payload result shows; the field's own tool gives it all.
TEXT_CUT = 160
#: User errors a note quotes.
QUOTED = 5

_ERRORS_NAME = re.compile(r"((^|_)(errors?|problems?)|[a-z0-9](Errors?|Problems?))$")
_ERROR_TYPE = re.compile(r"(Error|Problem)$")
_FAILURE_FLAGS = ("success", "ok", "succeeded")


def present_payload(calls: FieldCalls, entry: ObjectEntry, value: dict[str, Any], *, earlier: bool = False) -> dict[str, Any]:
    """The result for a mutation's payload `entry`, from the `value` its document read (`earlier`: a
    copy kept since that write, which never overwrites what the session has read of an object since)."""
    walk = _Walk(calls, entry, earlier=earlier)
    read = walk.fields(entry.type_name, value, entry.id)
    ordered = {k: v for k, v in read.items() if isinstance(v, (dict, list)) or k in walk.linked_fields}  # what it links to first
    ordered.update(read)
    shown: dict[str, Any] = {}
    room = calls.long_values.budget // 2  # the rest of the budget is the linked objects' previews and the notes
    for key, item in ordered.items():
        if shown and len(json.dumps({**shown, key: item}, ensure_ascii=False)) > room:
            walk.was_cut(f"{entry.id}.{key} (left out for room)", f"{entry.type_name}_{key}")
            continue
        shown[key] = item
    out: dict[str, Any] = {"result": entry.id}
    if shown:
        out["preview"] = shown
    notes = [refusal_note(calls, entry.type_name, value, entry.id)]

    if walk.previews:  # the linked objects read like a page, every field the write read back shown while it fits
        if len(walk.previews) > 1:
            out["objects"], fitted = calls.table(walk.previews, out, keep=_read_back)
        else:
            objects, fitted = calls.shape(walk.previews, out, keep=_read_back)
            out["objects"] = {i: objects.get(i, {}) for i in walk.previews}
        notes.append(fitted)
    if walk.cut:
        more = " and more" if len(walk.cut) > QUOTED else ""
        how = f"; their own tools read them in full: {', '.join(walk.cut_tools[:QUOTED])}." if walk.cut_tools else "."
        notes.append(f"Shortened: {', '.join(walk.cut[:QUOTED])}{more}{how}")
    note = " ".join(n for n in notes if n)
    if note:
        out["note"] = note
    return out


def _read_back(_type: str, _field: str) -> bool:
    """What a write answered is what the model must see of it: every field stays a column."""
    return True


def present_linked(calls: FieldCalls, entry: ObjectEntry) -> dict[str, Any]:
    """The result for an object with identity a payload links to (`CloseIssuePayload_issue`): its
    ID and the preview read with the mutation, as for any object a call returns alone."""
    return calls.present(entry)


def read_snapshot(calls: FieldCalls, parent: ObjectEntry, field_name: str, values: dict[str, Any], field_type: Any) -> dict[str, Any]:
    """A field of an object kept only as a snapshot (a mutation's result without identity): what was
    read with the write, never sent again. Its objects are found at their place in the snapshot."""
    data = thaw(parent.handle.snapshot) or {}
    if not values and field_name not in data and get_named_type(field_type) is calls.catalogue.schema.query_type:
        raise ToolCallError(f"{parent.id}.{field_name} is the API's query root: call the Query tools themselves, they need no object.")
    if values or field_name not in data:
        readable = ", ".join(k for k in data if k != "__typename") or "none"
        raise ToolCallError(
            f"{parent.id} came from a mutation and has no id to reach it again, so only the fields read then are available: {readable}."
            + (" A list that shows it again (as the same ID) lets its other fields be read through it." if parent.identified else "")
        )
    value = data[field_name]
    expression = f"{parent.id}.{field_name}"
    if is_leaf_type(get_named_type(field_type)):
        return calls.long_values.present(value, expression)
    if value is None:
        return {"result": None}
    place = (Step.of(parent.id), Step.of(field_name))  # never sent: where in the snapshot it was read
    typed = _typed(get_named_type(field_type))
    if isinstance(value, list):  # objects a mutation linked to: re-rooted on identity, or snapshots
        items = [typed(item) for item in value]
        return calls.mint_items(items, lambda i: (place[0], replace(place[1], index=i)), Met.KEPT, expression)
    entry = calls.mint(typed(value), place, Met.KEPT, expression, "")
    if not entry.handle.is_snapshot:
        return present_linked(calls, entry)
    return present_payload(calls, entry, entry.handle.held() or value, earlier=True)  # what the latest write said of it


def _typed(named: Any) -> Callable[[Any], Any]:
    """An object of a snapshot with its concrete type said (a snapshot's place is not a chain to read it from)."""

    def typed(item: Any) -> Any:
        if isinstance(item, dict) and "__typename" not in item and not is_abstract_type(named):
            return {"__typename": named.name, **item}
        return item

    return typed


def refusal_note(calls: FieldCalls, type_name: str, value: dict[str, Any], where: str) -> str | None:
    """What a payload says about a write that did not happen: its user errors, quoted, or a false
    `success`; None when it says nothing of the kind."""
    found: list[str] = []
    lists: list[str] = []
    if _ERROR_TYPE.search(type_name):  # the answer is itself an error (a union of result | error)
        found.append(_quote_error(value))
        lists.append(type_name)
    fields = _fields_of(calls, type_name)
    for name, item in value.items():
        named = get_named_type(fields[name].type).name if name in fields else ""
        items = item if isinstance(item, list) else [item]
        said = [i for i in items if isinstance(i, dict) or (isinstance(i, str) and i)]  # objects, or plain messages
        if said and (_ERRORS_NAME.search(name) or _ERROR_TYPE.search(named)):
            found += [_quote_error(i) if isinstance(i, dict) else _cut(i, TEXT_CUT) for i in said]
            lists.append(f"{where}.{name}")
    flags = [f for f in _FAILURE_FLAGS if value.get(f) is False]
    if not found and not flags:
        return None
    if not found:
        return f"{where}.{flags[0]} is false: the API says the write did not succeed."
    quoted = "; ".join(found[:QUOTED]) + (f"; and {len(found) - QUOTED} more" if len(found) > QUOTED else "")
    count = f"{len(found)} error" + ("s" if len(found) > 1 else "")
    return (
        f"The API refused with {count} ({', '.join(lists)}): {quoted}. What they name was not done; "
        "fix it and call again, or tell the user."
    )


def _quote_error(error: dict[str, Any]) -> str:
    """`input.count: Count must be at least 1 (INVALID)` from a user error's usual fields."""
    message = error.get("message")
    text = message if isinstance(message, str) else json.dumps({k: v for k, v in error.items() if k != "__typename"})
    text = _cut(text, TEXT_CUT)
    field = error.get("field") if error.get("field") is not None else error.get("path")
    if isinstance(field, list):
        field = ".".join(str(f) for f in field)
    if isinstance(field, (str, int)) and str(field):
        text = f"{_cut(str(field), 60)}: {text}"
    code = error.get("code")
    if isinstance(code, str) and code and code not in text:
        text += f" ({_cut(code, 40)})"
    return text


class _Walk:
    """One walk over a payload's value: mints what it links to, collects previews and cuts."""

    def __init__(self, calls: FieldCalls, payload: ObjectEntry, *, earlier: bool = False) -> None:
        self.calls = calls
        self.payload = payload
        self.earlier = earlier
        self.previews: dict[str, tuple[str, dict[str, Any]]] = {}  # ID -> (type, preview read)
        self.cut: list[str] = []
        self.cut_tools: list[str] = []
        self.linked_fields: set[str] = set()  # the payload's fields that link to objects

    def fields(self, type_name: str, value: dict[str, Any], where: str) -> dict[str, Any]:
        """An object without identity, inline: its fields with linked objects as IDs."""
        own = _fields_of(self.calls, type_name)
        out: dict[str, Any] = {}
        for name, item in value.items():
            if name == "__typename":
                continue
            field = own.get(name)
            named = get_named_type(field.type) if field is not None else None
            declared = named.name if named is not None else ""
            if is_composite_type(named) and where == self.payload.id:
                self.linked_fields.add(name)
            out[name] = self.value(item, declared, f"{where}.{name}", f"{type_name}_{name}")
        return out

    def value(self, item: Any, declared: str, where: str, tool: str) -> Any:
        if isinstance(item, list):
            shown = [self.value(v, declared, f"{where}[{i}]", tool) for i, v in enumerate(item[:SHOWN_ITEMS])]
            if len(item) > SHOWN_ITEMS:
                self.was_cut(f"{where} (first {SHOWN_ITEMS} of {len(item)})", tool)
            return shown
        if isinstance(item, dict):
            return self.linked(item, declared, where, tool)
        if isinstance(item, str) and len(item) > TEXT_CUT:
            self.was_cut(where, tool)
            return _cut(item, TEXT_CUT)
        return item

    def linked(self, item: dict[str, Any], declared: str, where: str, tool: str) -> Any:
        type_name = item.get("__typename") or declared
        identity = self.calls.catalogue.identity(type_name)
        held = held_entry(self.calls.catalogue, self.calls.registry, type_name, item)
        if (identity is not None and item.get(identity.field) is not None) or held is not None:
            entry = self.calls.mint(item, (), Met.KEPT if self.earlier else Met.WRITE_LINKED, where, "")
            if entry.preview:
                self.previews[entry.id] = (entry.type_name, entry.preview)
            return entry.id
        inline = self.fields(type_name, item, where)
        if type_name != declared:
            inline = {"__typename": type_name, **inline}
        if len(json.dumps(inline, ensure_ascii=False)) > self.calls.long_values.budget // 4:
            kept: dict[str, Any] = {}
            for key, inner in inline.items():
                if len(json.dumps({**kept, key: inner}, ensure_ascii=False)) > self.calls.long_values.budget // 4:
                    break
                kept[key] = inner
            self.was_cut(where, tool)
            return kept
        return inline

    def was_cut(self, where: str, tool: str) -> None:
        self.cut.append(where)
        if tool in self.calls.catalogue and tool not in self.cut_tools:
            self.cut_tools.append(tool)


def _fields_of(calls: FieldCalls, type_name: str) -> dict[str, Any]:
    type_ = calls.catalogue.schema.get_type(type_name)
    return dict(type_.fields) if isinstance(type_, GraphQLObjectType) else {}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
