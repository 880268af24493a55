"""Schema sources that nest or number past what Python reads raise SchemaLoadError, never a crash."""

from __future__ import annotations

import json

import pytest

from dagtools import SchemaLoadError, load_schema


def _introspection(field_type: dict) -> dict:
    scalar = {"kind": "SCALAR", "name": "Int", "description": None, "fields": None, "inputFields": None}
    scalar |= {"interfaces": None, "enumValues": None, "possibleTypes": None}
    field = {"name": "a", "description": None, "args": [], "type": field_type, "isDeprecated": False, "deprecationReason": None}
    query = {"kind": "OBJECT", "name": "Query", "description": None, "fields": [field], "inputFields": None}
    query |= {"interfaces": [], "enumValues": None, "possibleTypes": None}
    schema = {"queryType": {"name": "Query"}, "mutationType": None, "subscriptionType": None, "directives": [], "types": [query, scalar]}
    return {"__schema": schema}


def _lists(levels: int) -> dict:
    wrapped: dict = {"kind": "SCALAR", "name": "Int", "ofType": None}
    for _ in range(levels):
        wrapped = {"kind": "LIST", "name": None, "ofType": wrapped}
    return wrapped


SOURCES = {
    "JSON nested 100000 deep": ('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}", "too deeply"),
    "JSON object nested 100000 deep": ('{"data": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001, "too deeply"),
    "integer of 5000 digits": ('{"data": {"__schema": ' + "1" * 5000 + "}}", "Python can read"),
    "a type wrapped in 480 lists": (json.dumps(_introspection(_lists(480))), "480 lists"),
    "SDL type wrapped in 40 lists": ("type Query { a: " + "[" * 40 + "Int" + "]" * 40 + " }", "40 lists"),
}


@pytest.mark.parametrize("case", list(SOURCES), ids=list(SOURCES))
@pytest.mark.parametrize("form", ["text", "file"])
def test_hostile_schema_sources_raise_schema_load_error(case, form, tmp_path):
    text, expected = SOURCES[case]
    source: object = text
    if form == "file":
        source = tmp_path / ("schema.json" if text.startswith("{") else "schema.graphql")
        source.write_text(text, encoding="utf-8")
    with pytest.raises(SchemaLoadError, match=expected):
        load_schema(source)


def test_a_deeply_wrapped_introspection_dict_raises_schema_load_error():
    with pytest.raises(SchemaLoadError, match="480 lists"):
        load_schema(_introspection(_lists(480)))


def test_types_wrapped_a_few_times_still_load():
    loaded = load_schema("type Query { a: [[[[Int!]!]!]!] }")
    assert "a" in loaded.schema.query_type.fields
