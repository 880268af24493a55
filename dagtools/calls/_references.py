"""Object references in arguments: a `Type#N` (or its N, where the parameter implies the type)
becomes the API's own id of an object the session holds, and anything else is refused before a call
is sent, with what the session holds and how to get one. Where the API takes its own ids too (Relay
`ID`s), a raw id passes as it is.
"""

from __future__ import annotations

import json
from typing import Any

from graphql import get_named_type, is_composite_type

from .._errors import ToolCallError
from ..catalogue._catalogue import Catalogue
from ..registry._handles import parse_object_id
from ..registry._registry import ObjectEntry, Registry

__all__ = ["Ref", "article", "held_or_raw", "known_types", "reference_value", "resolve_reference"]


class Ref(str):
    """An object ID inside shown arguments, printed bare in expressions."""


def resolve_reference(catalogue: Catalogue, registry: Registry, value: Any, target: str, *, where: str) -> ObjectEntry:
    """The object a reference names, checked against the type the parameter takes."""
    exact = registry.get(value) if isinstance(value, str) else None
    if exact is not None and exact.type_name == target:  # the usual case: an ID as the session wrote it
        return exact
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if not text:
        raise ToolCallError(f'{where} takes an object ID such as "{catalogue.example_id(target)}", not {json.dumps(value)}.')
    parsed = parse_object_id(text)
    number = _bare_number(text) if parsed is None else None
    if number is not None:
        if target == "*" or catalogue.schema.get_type(target) is None or _is_abstract(catalogue, target):
            options = _options(catalogue, registry, target)
            raise ToolCallError(
                f'{where} needs the full object ID, with its type: "{text}" could be {options or "any type"}. Give the full Type#N.'
            )
        parsed = (target, number)
    if parsed is None:
        raise ToolCallError(f'{where} takes an object ID such as "{catalogue.example_id(target)}"; {json.dumps(value)} is not one.')
    type_name, number = parsed
    if catalogue.schema.get_type(type_name) is None:
        fixed = next((t for t in registry.types() if t.lower() == type_name.lower()), None)
        if fixed is not None:
            type_name = fixed
    entry = registry.find(type_name, number)
    if entry is None:
        raise ToolCallError(_not_held(catalogue, registry, type_name, number))
    if not catalogue.is_of_type(entry.type_name, target):
        options = _options(catalogue, registry, target)
        raise ToolCallError(
            f"{entry.id} is {article(entry.type_name)}, but {where} takes {article(target)}. "
            + (f"Use one of: {options}." if options else f"Get {article(target)} first.")
        )
    return entry


def _not_held(catalogue: Catalogue, registry: Registry, type_name: str, number: int) -> str:
    """Why `Type#N` names nothing here: what the session holds of that type (or that it holds none),
    and the tools that hand one out. Nothing is sent for it: the API would take the text for an id."""
    count = registry.count(type_name)
    makers = catalogue.makers(type_name)[:4] if catalogue.schema.get_type(type_name) is not None else []
    get = f"with {', '.join(makers)}" if makers else "from a tool that returns one"
    if count:
        return (
            f"There is no object {type_name}#{number}: this session holds "
            f"{f'{type_name}#1 to {type_name}#{count}' if count > 1 else f'only {type_name}#1'}, so nothing was sent. "
            f"Use {'one of those' if count > 1 else 'it'}, or get another {type_name} {get}."
        )
    return (
        f"There is no object {type_name}#{number}: this session holds no {type_name} yet, so nothing was sent. "
        f"Get {article(type_name)} first {get}, then pass the ID that call returns."
    )


def _bare_number(text: str) -> int | None:
    """`"3"` or `"#3"` -> 3: the N of an ID whose type the parameter implies. ASCII digits only, at most
    15 of them, as in `parse_object_id` (`"²"` is a digit to `str.isdigit` but not to `int`)."""
    digits = text.lstrip("#")
    if digits.isascii() and digits.isdigit() and len(digits) <= 15:
        return int(digits)
    return None


def article(type_name: str) -> str:
    """`a Potato`, `an Oven`: error messages read as sentences."""
    return f"{'an' if type_name[:1].lower() in 'aeiou' else 'a'} {type_name}"


def _is_abstract(catalogue: Catalogue, target: str) -> bool:
    from graphql import is_abstract_type

    return is_abstract_type(catalogue.schema.get_type(target))


def _options(catalogue: Catalogue, registry: Registry, target: str, limit: int = 6) -> str:
    ids = [e.id for e in registry.recent() if catalogue.is_of_type(e.type_name, target)][:limit]
    return ", ".join(ids)


def reference_value(catalogue: Catalogue, registry: Registry, value: Any, target: str, where: str, *, raw: bool = False) -> tuple[Any, Any]:
    if raw and isinstance(value, (str, int)) and not isinstance(value, bool):
        text = str(value).strip()
        if text.lstrip("#").isdigit():
            raise ToolCallError(
                f'{where} takes an object ID or a global id the API gave; "{text}" could be either. '
                f'Give the full Type#N, such as "{catalogue.example_id(target)}", or the global id itself.'
            )
        if isinstance(value, str) and _is_raw_id(catalogue, registry, value):
            return value, value  # the API's own global id, sent as it is
    entry = resolve_reference(catalogue, registry, value, target, where=where)
    if entry.identity is None:
        raise ToolCallError(f"{entry.id} has no id the API can take back, so it cannot be passed to {where}.")
    return entry.identity, Ref(entry.id)


def held_or_raw(catalogue: Catalogue, registry: Registry, value: Any, where: str) -> tuple[Any, Any]:
    """An `ID` argument that names no type: a `Type#N` of this API is a handle (refused when the
    session holds no such object), anything else the API's own id, sent as given."""
    parsed = parse_object_id(value.strip()) if isinstance(value, str) else None
    if parsed is None or _is_raw_id(catalogue, registry, value):
        return value, value
    named = catalogue.schema.get_type(parsed[0])
    if named is not None and not is_composite_type(named):  # `String#1` names no object
        return value, value
    entry = resolve_reference(catalogue, registry, value, "*", where=where)
    if entry.identity is None:
        raise ToolCallError(f"{entry.id} has no id the API can take back, so it cannot be passed to {where}.")
    return entry.identity, Ref(entry.id)


def _is_raw_id(catalogue: Catalogue, registry: Registry, value: str) -> bool:
    """A global id the API gave, rather than one of our `Type#N` (or a bare number, which is ambiguous)."""
    text = value.strip()
    if not text or text.lstrip("#").isdigit():
        return False
    parsed = parse_object_id(text)
    if parsed is None:
        return True
    type_name = parsed[0].lower()
    return catalogue.schema.get_type(parsed[0]) is None and all(t.lower() != type_name for t in registry.types())


def known_types(catalogue: Catalogue, field_name: str, field_type: Any, shown: dict[str, Any]) -> tuple[str, ...]:
    """The concrete types a root Relay lookup answers with when it is given held objects: `node(id:
    Issue#3)` is an Issue and `nodes(ids: [Issue#3, User#1])` Issues and Users, so its document
    selects those types' fragments, not one for every type that implements `Node`. () when an
    object is given by the API's own global id, whose type is not known before the answer."""
    lookup = catalogue.dialect.node_lookup
    if lookup is None or field_name not in ("node", "nodes") or len(shown) != 1:
        return ()
    given = shown.get(lookup[0] if field_name == "node" else lookup[0] + "s")
    refs = given if isinstance(given, list) else [given]
    if not refs or not all(isinstance(r, Ref) for r in refs):
        return ()
    types = sorted({str(r).split("#", 1)[0] for r in refs})
    returned = get_named_type(field_type).name
    return tuple(types) if all(catalogue.is_of_type(t, returned) for t in types) else ()
