"""Types wrapped in lists and non-nulls too deeply to walk are refused when a schema loads."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLSchema

from .._errors import SchemaLoadError

__all__ = ["MAX_TYPE_WRAPPING", "check_wrapping"]

#: How deep a field's type may wrap lists and non-nulls: `[[Int!]!]` is 4. Real schemas stay under 8;
#: every layer that walks a type (JSON Schema, documents, answers) recurses once per wrapper.
MAX_TYPE_WRAPPING = 32


def check_wrapping(schema: GraphQLSchema, origin: str) -> None:
    """Refuse a schema whose types wrap too deeply to walk, once here rather than as a crash later."""
    for type_ in schema.type_map.values():
        for name, field in {**getattr(type_, "fields", {}), **_arguments_of(type_)}.items():
            wrapped, depth = field.type, 0
            while hasattr(wrapped, "of_type"):
                wrapped, depth = wrapped.of_type, depth + 1
            if depth > MAX_TYPE_WRAPPING:
                raise SchemaLoadError(
                    f"{origin} wraps the type of {type_.name}.{name} in {depth} lists and non-nulls; dagtools reads "
                    f"at most {MAX_TYPE_WRAPPING}. Fix that field's type in the schema."
                )


def _arguments_of(type_: Any) -> dict[str, Any]:
    """A type's field arguments, keyed `field(argument)` for messages."""
    fields = getattr(type_, "fields", None)
    if not isinstance(fields, dict):
        return {}
    return {f"{name}({arg})": a for name, field in fields.items() for arg, a in getattr(field, "args", {}).items()}
