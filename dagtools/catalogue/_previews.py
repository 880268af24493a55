"""Which fields an object's preview shows: cheap scalars, the ones that name the object first."""

from __future__ import annotations

from graphql import GraphQLEnumType, GraphQLObjectType, GraphQLScalarType, GraphQLSchema, get_named_type, is_list_type, is_non_null_type

from ..load._dialect import Dialect

__all__ = ["choose_preview_fields"]

PREVIEW_LIMIT = 8
PREVIEW_FIRST = ("name", "title", "login", "displayName", "fullName", "slug", "number", "state", "status", "description", "url")


def choose_preview_fields(schema: GraphQLSchema, dialect: Dialect, type_name: str) -> tuple[str, ...]:
    """Scalar and enum fields without arguments, not ids and not deprecated, naming fields first."""
    type_ = schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType):
        return ()
    chosen: list[str] = []
    for name, field in type_.fields.items():
        named = get_named_type(field.type)
        inner = field.type.of_type if is_non_null_type(field.type) else field.type
        if field.args or field.deprecation_reason is not None or is_list_type(inner):
            continue
        if not isinstance(named, (GraphQLScalarType, GraphQLEnumType)):
            continue
        if named.name == "ID" or dialect.object_argument(field, name) is not None:
            continue
        chosen.append(name)
    chosen.sort(key=lambda n: PREVIEW_FIRST.index(n) if n in PREVIEW_FIRST else len(PREVIEW_FIRST))
    return tuple(chosen[:PREVIEW_LIMIT])
