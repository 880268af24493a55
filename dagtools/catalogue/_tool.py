"""One field's tool as the model sees it: its description, its return type and its parameters."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from graphql import GraphQLArgument, GraphQLInputField, get_named_type, is_abstract_type, is_composite_type

from .._tools import Tool
from ._json_schema import PARAMETER_BUDGET, object_reference_description

if TYPE_CHECKING:
    from ._catalogue import Catalogue, FieldRef

__all__ = ["FIELDS", "FIELDS_SCHEMA", "compile_tool", "describe_reference", "fields_parameter"]

#: What a tool that returns objects takes to name the fields shown of each (calls/_selections.py checks and reads it).
FIELDS = "fields"
#: How the parameter reads in a tool's JSON Schema.
FIELDS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string"},
    "description": 'Just these fields of each object, such as ["rating", "author.name"].',
}


def fields_parameter(argument_names: Any, object_parameter: str | None) -> str:
    """The name `fields` takes beside a field's own arguments and its object parameter."""
    name = FIELDS
    while name in argument_names or name == object_parameter:
        name += "_"
    return name


def describe_reference(catalogue: Catalogue, argument: GraphQLArgument | GraphQLInputField, target: str) -> str:
    """How an argument that names an object reads: which IDs it takes, with an example of this API."""
    example, raw = catalogue.example_id(target), catalogue.dialect.accepts_raw_id(argument)
    if is_abstract_type(catalogue.schema.get_type(target)):  # "Node ID" reads as a type; say what it takes
        text = f'An object ID such as "{example}" (any {target}).'
        return text + (" A global id the API gave is taken as it is." if raw else "")
    return object_reference_description(target, example, raw=raw)


def compile_tool(catalogue: Catalogue, name: str, ref: FieldRef) -> Tool:
    """The tool of one field, its object parameter first (for a field of a non-root type)."""
    field = catalogue.field(ref)
    object_parameter = catalogue.object_parameter(ref)
    first = None
    if object_parameter is not None:
        first = (
            object_parameter,
            {
                "type": "string",
                # the parameter is named after the type: the description says only what the name does not
                "description": f'Such as "{ref.type_name}#1"; defaults to the most recent.',
            },
            False,
        )
    parameters = catalogue.parameters(ref, first=first, path=name)
    is_mutation = ref.type_name == catalogue.mutation_type
    if catalogue.previews and not is_mutation and is_composite_type(get_named_type(field.type)):
        name_of_fields = fields_parameter(field.args, object_parameter)
        widened = {**parameters, "properties": {**parameters["properties"], name_of_fields: FIELDS_SCHEMA}}
        if len(json.dumps(widened)) <= PARAMETER_BUDGET:  # the field's own arguments come first; fields is taken all the same
            parameters = widened
    # a field without a description gets none: "Starship pilotConnection" would only repeat the tool's name
    lines = [text] if (text := (field.description or "").strip()) else []
    if field.deprecation_reason is not None:
        lines.append(f"Deprecated: {field.deprecation_reason}")
    description = "\n".join([*lines, f"Returns {field.type}"])
    return Tool(
        name=name,
        description=description,
        parameters=parameters,
        kind="field",
        type_name=ref.type_name,
        field_name=ref.field_name,
        object_parameter=object_parameter,
        returns=str(field.type),
        read_only=not is_mutation,
        destructive=is_mutation,
    )
