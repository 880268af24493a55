"""Which object a value is: its key, what the end of a chain must still show for the chain to reach it.

A handle may reach its object through a chain (`slots[1]`, `Station#1.bikes[2]`). The list behind
the chain can reorder, grow or shrink between calls, so position alone does not say which object is
there now. The key does: the type's identity field where it has one (`loadXFromID`, `node`, a root
lookup); else an id-like field (`id`, or its only `ID` field) even with no root field to fetch the
object by; else, for a value object such as a time slot, all the scalars it was read with. A read
through a chain checks the key of what sits at the end of the chain before it answers.

Only the first two are an identity (`identifies`): objects of one type with one identity are one
`Type#N` however they were reached. Equal values are never identity: two stock levels of 0, or page 1
and page 2 of a page type without id, are two objects, each the one found at its place (its chain and
position, with the values read there), and their values only check that the place still holds it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from graphql import GraphQLList, GraphQLNonNull, GraphQLObjectType, get_named_type, is_leaf_type

from ..catalogue._catalogue import Catalogue
from ..registry._handles import freeze, thaw
from ..registry._registry import Key, ObjectEntry, Registry

__all__ = ["Key", "describe_key", "held_entry", "held_values", "identifies", "key_field", "key_of", "key_value"]


def key_field(catalogue: Catalogue, type_name: str) -> str | None:
    """The one field that names an object of this type: its identity field, else `id`, else its only
    `ID` field (argument-free, not a list); None when the type has none."""
    table: dict[str, str | None] = catalogue.derived("key fields", dict)
    if type_name not in table:
        table[type_name] = _key_field(catalogue, type_name)
    return table[type_name]


def _key_field(catalogue: Catalogue, type_name: str) -> str | None:
    identity = catalogue.identity(type_name)
    if identity is not None:
        return identity.field
    type_ = catalogue.schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType):
        return None
    singles = {name: field for name, field in type_.fields.items() if not field.args and _single_leaf(field.type)}
    if "id" in singles:
        return "id"
    ids = [name for name, field in singles.items() if get_named_type(field.type).name == "ID"]
    return ids[0] if len(ids) == 1 else None


def _single_leaf(type_: Any) -> bool:
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return not isinstance(type_, GraphQLList) and is_leaf_type(type_)


def key_of(catalogue: Catalogue, type_name: str, value: dict[str, Any]) -> Key:
    """The key of an object read from an answer: its key field's value, else every scalar read of it.
    Object-valued fields (a mutation snapshot's linked objects) are not part of it."""
    field = key_field(catalogue, type_name)
    if field is not None and value.get(field) is not None:
        return ((field, key_value(value[field])),)
    type_ = catalogue.schema.get_type(type_name)
    fields = getattr(type_, "fields", {})
    return tuple(
        sorted((name, key_value(v)) for name, v in value.items() if name in fields and is_leaf_type(get_named_type(fields[name].type)))
    )


def held_entry(catalogue: Catalogue, registry: Registry, type_name: str, value: dict[str, Any]) -> ObjectEntry | None:
    """The entry the session holds for this object by its key field (an identity, an `id`), however
    the object was reached; None where it holds none or the type has no key field to tell it by."""
    named = key_field(catalogue, type_name)
    if named is None or value.get(named) is None:
        return None
    known = registry.keyed(type_name, ((named, freeze(value[named])),))
    return registry.get(known) if known is not None else None


def identifies(catalogue: Catalogue, type_name: str, key: Key) -> bool:
    """Whether `key` (from `key_of`) is an identity, the value of the type's key field, which may
    name one object found at two places; False for the values of an object without one."""
    if len(key) != 1:
        return False
    field = key_field(catalogue, type_name)
    return field is not None and key[0][0] == field and key[0][1] is not None


def key_value(value: Any) -> Any:
    """A value as a key holds it: frozen, and a long text by its digest, so a key stays small in the
    registry and in a store however long the texts it was read with."""
    if isinstance(value, str) and len(value) > _LONG_KEY:
        return _DIGEST + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return freeze(value)


def held_values(value: dict[str, Any]) -> Any:
    """What a chain's snapshot keeps of an object just read: its values, but a text too long to keep
    in every stored session is left to be read again (through the chain, key checked)."""
    return freeze({name: v for name, v in value.items() if not (isinstance(v, str) and len(v) > _LONG_HELD)})


_LONG_KEY = 128
_LONG_HELD = 2_000
_DIGEST = "sha256:"


def describe_key(key: Key, limit: int = 80) -> str:
    """A key as the model reads it: `startsAt: "10:00", free: true`, each value shown by its start."""
    parts = []
    for name, value in key:
        if isinstance(value, str) and value.startswith(_DIGEST) and len(value) == len(_DIGEST) + 32:
            parts.append(f"{name}: (a long text)")
            continue
        text = json.dumps(thaw(value), ensure_ascii=False)
        parts.append(f"{name}: {text if len(text) <= limit else text[: limit - 1] + '…'}")
    return ", ".join(parts)
