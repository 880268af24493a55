"""What a custom scalar takes, read from its name and description.

A schema only says `scalar JSON`; what the API parses is in the name and the description. Guessing
"a string" for everything makes a model that follows the schema send `"{\"a\": 1}"` where the API
wanted the object, so each scalar gets one kind:

- `json`: any JSON value, embedded as it is (`JSON`, `JSONObject`, `Json`, `ObjMap`, `Any`,
  `GenericScalar`, a "map of key-value pairs");
- `json-text`: JSON carried as a string (`JSONString`, "stringified" or "JSON-encoded" ones, such as
  Dagger's `JSON`);
- `date-time`, `date`, `time`, `duration`: a string in the ISO 8601 form the kind names; the JSON
  Schema `format` is only claimed where the description admits no other form;
- `integer`, `number`: a number (`PositiveInt`, `Decimal`), unless the description says it travels
  as a string (GitHub's `BigInt`);
- `string`: anything else (a hash, a URI, an opaque token), sent as given.

In the JSON Schema, a `json` scalar is the empty schema (any value) with its description: each
provider rendering that cannot say "any value" turns it into JSON text (see `_render`), which binding
parses back before anything is sent.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # renderings import this module, and the command line's help must not load graphql
    from graphql import GraphQLScalarType

__all__ = ["ANY_VALUE_NOTE", "JSON_TEXT_NOTE", "ScalarKind", "is_any_value", "scalar_kind", "scalar_schema"]

ScalarKind = Literal["json", "json-text", "date-time", "date", "time", "duration", "integer", "number", "uuid", "string"]

_JSON_NAMES = {
    "json", "jsonobject", "jsonvalue", "jsonscalar", "jsondict", "jsonmap", "jsondata", "jsonb", "jsontype",
    "objmap", "any", "anyvalue", "anyscalar", "genericscalar", "object", "map", "dict", "arbitraryobject",
}  # fmt: skip
_JSON_TEXT_NAMES = {"jsonstring", "stringifiedjson", "jsontext", "jsonstr", "rawjson"}
_AS_TEXT = re.compile(r"stringified|json[- ]encoded|encoded as (a |an )?(json )?string|serialized|as a string|json string", re.I)
_JSON_TEXT = re.compile(r"\bjson\b|key-value|list or object", re.I)
_ANY_VALUE = re.compile(r"arbitrary|any (json )?value|embedded|key-value|generic", re.I)
_NOT_SINGLE = re.compile(r"\baccepts\b|\bor\b|shortcut|\bunix\b|\bepoch\b|since 1970", re.I)
_EPOCH = re.compile(r"\bunix\b|\bepoch\b|since 1970|milliseconds since|seconds since", re.I)
_STRING_WORDS = re.compile(r"\bstring\b", re.I)
_SCHEMA_KEYS = {"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "properties", "items", "not"}

_EXAMPLES = {
    "date-time": "an ISO 8601 date and time, such as 2024-05-01T12:30:00Z",
    "date": "an ISO 8601 date, such as 2024-05-01",
    "time": "an ISO 8601 time of day, such as 12:30:00",
    "duration": "an ISO 8601 duration, such as P1DT2H",
    "uuid": "a UUID, such as 123e4567-e89b-12d3-a456-426614174000",
}
#: What a `json` scalar's text says where the rendering takes any value.
ANY_VALUE_NOTE = "Any JSON value: an object, a list, text, a number or a boolean."
#: What renderings that cannot say "any JSON value" say instead to a `json` scalar's text (see `_render`).
JSON_TEXT_NOTE = 'Send an object or a list as its JSON text, such as "{\\"key\\": \\"value\\"}": it reaches the API as that JSON value.'


def _plain(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def scalar_kind(scalar: GraphQLScalarType) -> ScalarKind:
    """The kind of value a custom scalar takes, from its name first and its description second."""
    name, text = _plain(scalar.name), (scalar.description or "").strip()
    if name in _JSON_TEXT_NAMES or (name in _JSON_NAMES and _AS_TEXT.search(text)):
        return "json-text"
    if name in _JSON_NAMES:
        return "json"
    if name.startswith("json") or (_JSON_TEXT.search(text) and _ANY_VALUE.search(text) and not name.endswith("id")):
        return "json-text" if _AS_TEXT.search(text) or name.endswith("string") else "json"
    if not _EPOCH.search(text):
        says_date = "date" in text.lower() or not text
        if "datetime" in name or name.endswith(("timestamp", "timestamptz", "instant")):
            return "date-time"
        if name.endswith("date") and (name in ("date", "localdate", "timelessdate", "naivedate") or says_date):
            return "date"
        if name.endswith("duration"):
            return "duration"
        if name in ("time", "localtime", "timeofday", "offsettime"):
            return "time"
    if name in ("uuid", "guid"):
        return "uuid"
    says_string = _STRING_WORDS.search(text) is not None
    if not says_string and (name.endswith(("int", "integer", "long", "short", "uint")) or re.search(r"integer value", text, re.I)):
        return "integer"
    if not says_string and name.endswith(("float", "double", "decimal", "number")):
        return "number"
    return "string"


def scalar_schema(scalar: GraphQLScalarType) -> dict[str, Any]:
    """The JSON Schema of one custom scalar: its kind's shape, and its name and description as text."""
    kind = scalar_kind(scalar)
    text = (scalar.description or "").strip()
    head = f"{scalar.name}: {text}" if text else f"A {scalar.name} value."
    if kind == "json":
        return {"description": f"{head}\n{ANY_VALUE_NOTE}"}
    if kind == "json-text":
        return {"type": "string", "description": f'{head}\nJSON text, such as "{{\\"key\\": \\"value\\"}}".'}
    if kind in _EXAMPLES:
        out: dict[str, Any] = {"type": "string", "description": f"{head}\nSend {_EXAMPLES[kind]}."}
        if not _NOT_SINGLE.search(text):
            out["format"] = kind
        return out
    if kind in ("integer", "number"):
        return {"type": kind, "description": head}
    return {"type": "string", "description": head}


def is_any_value(schema: Any) -> bool:
    """Whether a rendered schema node accepts any JSON value (a `json` scalar): it constrains nothing."""
    return isinstance(schema, dict) and not _SCHEMA_KEYS.intersection(schema)
