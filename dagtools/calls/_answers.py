"""An API answer checked against the schema before it mints anything.

The API is untrusted (DESIGN.md, trust boundaries): whatever it answers, a call ends in a result or
an error result, never an exception, and a bad answer mints nothing. So before an answer is read into
`Type#N` IDs it is walked once against the type of the field that was asked for: an object must be a
JSON object whose `__typename` (a string) names an object type of the schema that fits the field,
whose keys are fields of that type; a list must be a list; a scalar must be the JSON kind its type
says; and every value must pass `value_problem` (bounded nesting, printable numbers, valid Unicode).
The walk follows the schema, so it costs one step per value the document selected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    is_abstract_type,
)

from .._values import MAX_DEPTH, value_problem

__all__ = ["answer_problem", "locate", "read_back"]

_BUILT_IN_KINDS: dict[str, tuple[type, ...]] = {
    "String": (str,),
    "ID": (str, int),
    "Int": (int,),
    "Float": (int, float),
    "Boolean": (bool,),
}


def locate(data: Any, path: tuple[str | int, ...]) -> tuple[Any, int, str | None]:
    """Follow `path` into `data`: the value, how many steps were walked before a null, and what was
    wrong with the answer's shape on the way (None when nothing was)."""
    if data is not None and not isinstance(data, dict):
        return None, 0, f"`data` is {_kind(data)}, not an object"
    value = data
    for depth, key in enumerate(path):
        if value is None:
            return None, depth, None
        if isinstance(key, int):
            if not isinstance(value, list):
                return None, depth, f"{_where(path[:depth])} is {_kind(value)} where a list was expected"
            value = value[key] if key < len(value) else None
        else:
            if not isinstance(value, dict):
                return None, depth, f"{_where(path[:depth])} is {_kind(value)} where an object was expected"
            value = value.get(key)
    renames = getattr(path, "renames", None)  # aliases the document wrote, read back under field names
    return (read_back(value, renames) if renames else value), len(path), None


def answer_problem(schema: GraphQLSchema, type_: Any, value: Any, where: str = "the answer") -> str | None:
    """What in `value` the schema does not allow for `type_`, as a phrase naming where; None when it fits."""
    return _check(schema, type_, value, (where,), 0)


# Where a problem is, as the parts of its path: the phrase is only written for a problem found.
Place = tuple[str | int, ...]


def _at(place: Place) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (p if i == 0 else f".{p}") for i, p in enumerate(place))


def _check(schema: GraphQLSchema, type_: Any, value: Any, place: Place, depth: int) -> str | None:
    if value is None:
        return None  # a null where the schema says non-null is reported by the caller as "no such object"
    if depth > MAX_DEPTH:
        return f"{_at(place)} nests deeper than {MAX_DEPTH} levels"
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    if isinstance(type_, GraphQLList):
        if not isinstance(value, list):
            return f"{_at(place)} is {_kind(value)} where a list was expected"
        for index, item in enumerate(value):
            problem = _check(schema, type_.of_type, item, (*place, index), depth + 1)
            if problem:
                return problem
        return None
    if isinstance(type_, (GraphQLScalarType, GraphQLEnumType)):
        return _check_leaf(type_, value, place)
    return _check_object(schema, type_, value, place, depth)


def _check_leaf(type_: GraphQLScalarType | GraphQLEnumType, value: Any, place: Place) -> str | None:
    kinds = (str,) if isinstance(type_, GraphQLEnumType) else _BUILT_IN_KINDS.get(type_.name)
    if kinds is not None:
        fits = isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))
        if not fits:
            return f"{_at(place)} is {_kind(value)} where {type_.name} was expected"
    if type(value) is str and value.isascii():  # the usual leaf, which value_problem would pass
        return None
    problem = value_problem(value)
    return f"{_at(place)} {problem}" if problem else None


def _check_object(schema: GraphQLSchema, expected: Any, value: Any, place: Place, depth: int) -> str | None:
    if not isinstance(value, dict):
        return f"{_at(place)} is {_kind(value)} where {_article(expected.name)} {expected.name} object was expected"
    typename = value.get("__typename")
    if typename is None:
        if not isinstance(expected, GraphQLObjectType):
            return f"{_at(place)} does not say which {expected.name} it is (no __typename)"
        concrete = expected
    else:
        if not isinstance(typename, str):
            return f"{_at(place)} has a __typename that is {_kind(typename)}, not a type name"
        found = schema.get_type(typename)
        if not isinstance(found, GraphQLObjectType):
            return f"{_at(place)} has __typename {_quote(typename)}, which is not an object type of the schema"
        if found is not expected and not (is_abstract_type(expected) and schema.is_sub_type(expected, found)):
            return f"{_at(place)} has __typename {_quote(typename)}, which is not {_article(expected.name)} {expected.name}"
        concrete = found
    fields = concrete.fields
    for key, inner in value.items():
        if key == "__typename":
            continue
        field = fields.get(key)
        if field is None:
            return f"{_at(place)} has {_quote(key)}, which is not a field of {concrete.name}"
        problem = _check(schema, field.type, inner, (*place, key), depth + 1)
        if problem:
            return problem
    return None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else f"a {type(value).__name__}"


def _article(name: str) -> str:
    return "an" if name[:1].lower() in "aeiou" else "a"


def _quote(text: str, limit: int = 60) -> str:
    """A name the API sent, shown short and escaped (it may be long, or not valid Unicode)."""
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return ascii(shown) if not shown.isascii() or not shown.isprintable() else repr(shown)


def _where(path: tuple[str | int, ...]) -> str:
    return "`data." + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") + "`" if path else "`data`"


def read_back(value: Any, renames: Mapping[str, str], depth: int = 0) -> Any:
    """The answer with each alias a selection wrote replaced by the field name it reads. Past any
    depth a document can select, the rest is left as it is: checking the answer refuses it then."""
    if depth > _READ_BACK_DEPTH:
        return value
    if isinstance(value, list):
        return [read_back(item, renames, depth + 1) for item in value]
    if isinstance(value, dict):
        return {renames.get(key, key): read_back(item, renames, depth + 1) for key, item in value.items()}
    return value


#: Deeper than any selection dagtools writes (object, connection, edge, node, list items).
_READ_BACK_DEPTH = 64
