"""The catalogue: naming, parameters and descriptions, on the kitchen and on every public schema."""

from __future__ import annotations

import json
import re

import pytest
from graphql import build_schema
from jsonschema import Draft202012Validator

from dagtools import compile_catalogue
from tests.conftest import shared_catalogue, shared_schema_names

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.fixture(scope="module")
def kitchen():
    from examples.kitchen.api import schema

    return compile_catalogue(schema._schema)


def test_one_tool_per_field_with_dagger_plumbing_left_out(kitchen):
    assert kitchen.dialect.name == "dagger"
    assert "Potato_rinse" in kitchen and "Query_potato" in kitchen and "Fries_plate" in kitchen
    assert "Potato_id" not in kitchen  # the session keeps ids; the model uses Type#N
    assert "Query_loadPotatoFromID" not in kitchen
    assert "Mutation_tip" not in kitchen  # mutations are off unless allowed


def test_object_parameter_and_object_arguments(kitchen):
    tool = kitchen.tool("Potato_rinse")
    props = tool.parameters["properties"]
    assert list(props) == ["Potato", "sink"]
    assert props["Potato"]["description"] == 'Such as "Potato#1"; defaults to the most recent.'
    assert tool.parameters["required"] == ["sink"]
    assert props["sink"] == {"type": "string", "description": 'Sink ID, such as "Sink#1". The sink to use to rinse the potato.'}
    assert "Potato" not in kitchen.tool("Query_potato").parameters["properties"]  # root fields take no object


def test_enum_values_with_descriptions(kitchen):
    shape = kitchen.tool("Potato_slice").parameters["properties"]["shape"]
    assert shape["enum"] == ["STICKS", "SLICES"]
    assert "STICKS: Long thin sticks, for french fries." in shape["description"]
    assert shape["description"].startswith("The shape to cut the potato into.")


def test_input_objects_with_required_fields_and_defaults(kitchen):
    settings = kitchen.tool("Oven_bake").parameters["properties"]["settings"]
    assert settings["type"] == "object"
    assert settings["properties"]["minutes"]["default"] == 30
    assert settings["properties"]["fan"]["default"] is False
    assert "required" not in settings  # minutes has a default, so it may be left out
    assert settings["additionalProperties"] is False
    assert kitchen.tool("Query_potato").parameters["properties"]["variety"]["default"] == "Russet"


def test_descriptions_are_never_empty_and_name_the_return_type(kitchen):
    for tool in kitchen.tools():
        assert tool.description.strip()
        assert tool.description.splitlines()[-1].startswith("Returns ")
    assert kitchen.tool("Potato_rinse").description.endswith("Returns Potato!")
    assert kitchen.tool("Query_potatoes").description.endswith("Returns [Potato!]!")


def test_deprecated_fields_hidden_unless_asked(kitchen):
    from examples.kitchen.api import schema

    assert "Potato_wash" not in kitchen
    full = compile_catalogue(schema._schema, include_deprecated=True)
    assert "Deprecated: Use rinse." in full.tool("Potato_wash").description


def test_mutations_all_or_a_list():
    from examples.kitchen.api import schema

    allowed = compile_catalogue(schema._schema, mutations=True)
    tool = allowed.tool("Mutation_tip")
    assert tool.destructive and not tool.read_only
    assert "Mutation_tip" in compile_catalogue(schema._schema, mutations=["tip"])
    assert "Mutation_tip" not in compile_catalogue(schema._schema, mutations=["other"])


def test_long_and_colliding_names_are_shortened_deterministically():
    long_field = "f" * 70
    sdl = f"""
    type Query {{ a_b: A_b, a: A, {long_field}: Int }}
    type A_b {{ c: Int }}
    type A {{ b_c: Int }}
    type Subscription {{ ticks: Int }}
    """
    first = compile_catalogue(build_schema(sdl))
    second = compile_catalogue(build_schema(sdl))
    assert first.names() == second.names()
    assert all(NAME.match(n) for n in first.names())
    assert len(set(first.names())) == len(first.names())
    assert "A_b_c" in first  # A.b_c sorts first and keeps the plain name
    other = first.name_of("A_b", "c")
    assert other != "A_b_c" and other.startswith("A_b_c_")
    long_name = first.name_of("Query", long_field)
    assert len(long_name) == 64
    assert not any(n.startswith("Subscription_") for n in first.names())


def test_recursive_input_objects_use_defs():
    schema = build_schema("""
    input Filter { and: [Filter!], name: String }
    type Query { items(where: Filter): [String] }
    """)
    params = compile_catalogue(schema).tool("Query_items").parameters
    assert params["properties"]["where"] == {"$ref": "#/$defs/Filter"}
    assert params["$defs"]["Filter"]["properties"]["and"]["items"] == {"$ref": "#/$defs/Filter"}
    Draft202012Validator.check_schema(params)
    Draft202012Validator(params).validate({"where": {"and": [{"name": "x"}]}})


@pytest.mark.parametrize("name", shared_schema_names())
def test_every_public_schema_compiles_and_every_tool_schema_is_valid(name):
    catalogue = shared_catalogue(name)
    assert len(catalogue) > 0
    names = catalogue.names()
    assert len(set(names)) == len(names)
    validator = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    checked: set[str] = set()  # many tools share a parameter schema; check each shape once
    for tool in catalogue.tools():
        assert NAME.match(tool.name)
        assert tool.description.strip()
        assert tool.parameters["type"] == "object"
        shape = json.dumps(tool.parameters, sort_keys=True)
        if shape in checked:
            continue
        checked.add(shape)
        errors = list(validator.iter_errors(tool.parameters))
        assert not errors, (tool.name, errors[0].message)


@pytest.mark.public_schemas
def test_github_has_every_field_an_agent_can_reach():
    catalogue = shared_catalogue("github.schema.graphql", include_deprecated=True, mutations=True)
    assert len(catalogue) > 5000
    assert "Repository_issues" in catalogue and "Query_repository" in catalogue
    # Connection plumbing is read for the agent, so it gives no tools of its own.
    assert catalogue.tools_for_type("IssueConnection") == [] and catalogue.tools_for_type("PageInfo") == []


def test_root_tools_are_named_query_and_mutation_whatever_the_roots_are_called():
    schema = build_schema("""
    schema { query: Root, mutation: Change }
    type Root { film(id: ID!): Film }
    type Change { rename(id: ID!, title: String!): Film }
    type Film { id: ID!, title: String }
    """)
    catalogue = compile_catalogue(schema, mutations=True)
    assert {"Query_film", "Mutation_rename", "Film_title"} <= set(catalogue.names())
    assert catalogue.tools_for_type("Query") == catalogue.tools_for_type("Root") == ["Query_film"]
    assert catalogue.ref("Query_film").type_name == "Root"
    assert "Mutation_rename" in compile_catalogue(schema, mutations=["Mutation_rename"])


def test_defaults_survive_introspection():
    from graphql import build_client_schema, get_introspection_query

    from examples.kitchen.api import schema

    introspected = build_client_schema(schema.execute_sync(get_introspection_query()).data)
    catalogue = compile_catalogue(introspected)
    potato = catalogue.tool("Query_potato").parameters
    assert potato["properties"]["variety"]["default"] == "Russet"
    assert "required" not in potato  # non-null with a default may be left out
    settings = catalogue.tool("Oven_bake").parameters["properties"]["settings"]
    assert settings["properties"]["minutes"]["default"] == 30
