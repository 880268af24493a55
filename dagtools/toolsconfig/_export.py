"""The catalogue in the tools-config format: one `api` entry per root field, with a GraphQL query that
takes every argument as a variable and reads what minting reads (type, identity, preview scalars).

Exported tools stand on their own, with no `Type#N` handles: an argument that names an object takes
the API's own id, and a non-root tool (given by name) starts from its object's id through the root
field that loads it (`loadPotatoFromID(id:)`, `node(id:)`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graphql import GraphQLNonNull, get_named_type, is_leaf_type

from .._errors import ConfigError
from ..calls._documents import QueryBuilder
from ..catalogue._catalogue import Catalogue
from ..catalogue._json_schema import is_required
from ..catalogue._search import suggest_tools

__all__ = ["export_tools_config"]


def export_tools_config(catalogue: Catalogue, *, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Tools-config entries for every root-field tool, and for the tools `names` lists."""
    chosen = [n for n in catalogue.names() if catalogue.is_root(catalogue.ref(n).type_name)]
    for name in names or ():
        if name not in catalogue:
            close = suggest_tools(catalogue, name)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise ConfigError(f"The catalogue has no tool {name!r}.{hint}")
        if name not in chosen:
            chosen.append(name)
    return [_entry(catalogue, name) for name in chosen]


def _entry(catalogue: Catalogue, name: str) -> dict[str, Any]:
    tool = catalogue.tool(name)
    ref = catalogue.ref(name)
    field = catalogue.field(ref)
    declarations: list[str] = []
    wrap = "{}"  # where the field sits: at the root, or inside the lookup that loads its object
    first = None
    object_parameter = catalogue.object_parameter(ref)
    if object_parameter is not None:
        identity = catalogue.identity(ref.type_name)
        if identity is None:
            raise ConfigError(
                f"{name} needs a {ref.type_name}, which can only be reached through a chain of "
                "calls; export the root fields that lead to it instead."
            )
        load = catalogue.schema.query_type.fields[identity.root_field]  # type: ignore[union-attr]
        id_type = load.args[identity.argument].type
        first = (object_parameter, {"type": "string", "description": f"The {identity.field} of the {ref.type_name} to operate on."}, True)
        declarations.append(f"${object_parameter}: {id_type}")
        condition = ref.type_name if get_named_type(load.type).name != ref.type_name else None
        inner = f"... on {condition} {{ {{}} }}" if condition else "{}"
        wrap = f"{identity.root_field}({identity.argument}: ${object_parameter}) {{ {inner} }}"
    parameters = catalogue.parameters(ref, first=first, object_references=False)
    rendered = []
    for arg_name, arg in catalogue.arguments(ref).items():
        variable_type = arg.type
        if not is_required(arg) and isinstance(variable_type, GraphQLNonNull):
            variable_type = variable_type.of_type  # left out, the argument's default applies
        declarations.append(f"${arg_name}: {variable_type}")
        rendered.append(f"{arg_name}: ${arg_name}")
    named = get_named_type(field.type)
    selection = "" if is_leaf_type(named) else f" {{ {QueryBuilder.of(catalogue).selection(named.name)} }}"
    field_text = ref.field_name + (f"({', '.join(rendered)})" if rendered else "") + selection
    operation = "mutation" if ref.type_name == catalogue.mutation_type else "query"
    header = f"{operation} {_operation_name(name)}" + (f"({', '.join(declarations)})" if declarations else "")
    query = f"{header} {{ {wrap.replace('{}', field_text)} }}"
    return {
        "type": "api",
        "function": {"name": name, "description": tool.description, "parameters": parameters},
        "api": {"name": "default", "query": query},
    }


def _operation_name(name: str) -> str:
    return name.replace("-", "_")
