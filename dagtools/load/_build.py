"""Build one GraphQLSchema from schema text, an introspection result or a schema object, coping
with public schemas that break the spec (repeated definitions dropped, validation errors kept as
warnings when lenient), with messages that say where a source is wrong."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graphql import (
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    GraphQLSyntaxError,
    build_ast_schema,
    build_client_schema,
    parse,
    validate_schema,
)
from graphql.validation.validate import validate_sdl

from .._errors import SchemaLoadError
from ._loaded import LoadedSchema
from ._python import is_strawberry_schema
from ._repair import SdlRepair
from ._slips import with_type_suggestions
from ._wrapping import check_wrapping

#: What a strict load's refusal advises, in Python's words; the command line says it in its own (--strict).
LENIENT_ADVICE = "load it with lenient=True"

__all__ = ["LENIENT_ADVICE", "from_introspection", "from_object", "from_text", "is_schema_object"]

#: How many individual errors a SchemaLoadError lists before summarising the rest.
_MAX_LISTED_ERRORS = 10


def from_text(text: str, *, origin: str, lenient: bool, as_json: bool | None = None) -> LoadedSchema:
    if Path(origin).suffix.lower() in (".yaml", ".yml"):  # read from a file (here or through the compiled cache)
        raise SchemaLoadError(
            f"{origin} is a YAML file, not a schema: pass an SDL or introspection JSON file, a URL or "
            f"path/to/file.py:attribute. A dagtools mcp config file goes after --config (dagtools mcp --config {origin}); "
            f"a call script goes after the schema (dagtools call SCHEMA {origin})."
        )
    if not text.strip():
        raise SchemaLoadError(f"{origin} is empty. Expected SDL (type definitions) or an introspection result.")
    if as_json is None:
        as_json = text.lstrip().startswith("{")
    if as_json:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaLoadError(
                f"{origin} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
                "Expected an introspection result such as the body a GraphQL server returns for the "
                "introspection query."
            ) from None
        except RecursionError:
            raise SchemaLoadError(
                f"{origin} nests its JSON too deeply to read: no introspection result does. "
                "Fetch the schema again (graphql.get_introspection_query()) and save the server's answer."
            ) from None
        except ValueError as exc:  # an integer literal longer than Python reads
            raise SchemaLoadError(f"{origin} is not an introspection result Python can read ({exc}).") from None
        return from_introspection(data, origin=origin, lenient=lenient)
    return _from_sdl(text, origin=origin, lenient=lenient)


# --- introspection results --------------------------------------------------------------------


def from_introspection(data: object, *, origin: str, lenient: bool) -> LoadedSchema:
    warnings: list[str] = []
    introspection = _unwrap_introspection(data, origin=origin, warnings=warnings)
    try:
        schema = build_client_schema(introspection, assume_valid=lenient)  # type: ignore[arg-type]
    except (TypeError, ValueError, KeyError, AttributeError, GraphQLError, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            problem = "its types wrap each other (ofType) too deeply to build"
        else:
            problem = f"it lacks the key {exc}" if isinstance(exc, KeyError) else str(exc).rstrip(".")
        raise SchemaLoadError(
            f"{origin} is not a usable introspection result: {problem}. Re-run the full introspection "
            "query (graphql.get_introspection_query()) against the server and save its answer."
        ) from None
    schema._validation_errors = None  # validate now, even though the build assumed validity
    return _validated(schema, origin=origin, lenient=lenient, warnings=warnings)


def _unwrap_introspection(data: object, *, origin: str, warnings: list[str]) -> dict[str, Any]:
    expected = 'Expected {"data": {"__schema": ...}} or {"__schema": ...}, the answer to the introspection query'
    if not isinstance(data, dict):
        raise SchemaLoadError(f"{origin} holds a JSON {type(data).__name__}, not an introspection result. {expected}.")
    if "__schema" in data:
        return data
    errors = data.get("errors") or []
    messages = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors)
    inner = data.get("data")
    if isinstance(inner, dict) and "__schema" in inner:
        if messages:
            warnings.append(f"the introspection response also carried errors: {messages}")
        return inner
    if messages:
        raise SchemaLoadError(
            f"{origin} is an introspection response that failed: {messages}. Fix the request "
            "(authentication, introspection enabled on the server) and fetch it again."
        )
    keys = ", ".join(repr(k) for k in list(data)[:8]) or "none"
    raise SchemaLoadError(f"{origin} is JSON but not an introspection result (top-level keys: {keys}). {expected}.")


# --- SDL --------------------------------------------------------------------------------------


def _from_sdl(text: str, *, origin: str, lenient: bool) -> LoadedSchema:
    try:
        document = parse(text)
    except GraphQLSyntaxError as exc:
        raise SchemaLoadError(
            f"{origin} is not valid SDL{_at(exc)}: {exc.message.rstrip('.')}. Fix the syntax there, or pass "
            "an introspection JSON file instead."
        ) from None
    return _from_document(document, origin=origin, lenient=lenient)


def _from_document(document: DocumentNode, *, origin: str, lenient: bool) -> LoadedSchema:
    # The strict attempt: exactly what build_ast_schema(document) checks, keeping the errors.
    errors = with_type_suggestions(validate_sdl(document), document)
    warnings: list[str] = []
    if errors:
        if not lenient:
            raise SchemaLoadError(
                f"{origin} is not a valid schema:\n{_listing(origin, errors)}\n"
                f"Fix the SDL, or {LENIENT_ADVICE} to drop repeated definitions and keep going."
            )
        repair = SdlRepair()
        document = repair.document(document)
        warnings.extend(repair.warnings())
        remaining = repair.remaining(errors)
        # no source positions to tell which errors the repair fixed: check again
        errors = with_type_suggestions(validate_sdl(document), document) if remaining is None else remaining
        warnings.extend(_describe(error) for error in errors)
    try:
        schema = build_ast_schema(document, assume_valid_sdl=True)
    except (TypeError, ValueError, KeyError, GraphQLError) as exc:
        detail = _listing(origin, errors) if errors else f"  {exc}"
        raise SchemaLoadError(f"{origin} cannot be built into a schema:\n{detail}\nFix the SDL at these places.") from None
    return _validated(schema, origin=origin, lenient=lenient, warnings=warnings)


# --- schema objects ---------------------------------------------------------------------------


def is_schema_object(value: object) -> bool:
    return isinstance(value, (LoadedSchema, GraphQLSchema, dict)) or is_strawberry_schema(value)


def from_object(source: object, *, origin: str | None, lenient: bool) -> LoadedSchema:
    """Load one of the in-memory kinds; `origin` None names it after its kind."""
    if isinstance(source, LoadedSchema):
        return source
    if isinstance(source, GraphQLSchema):
        return _validated(source, origin=origin or "GraphQLSchema", lenient=lenient, warnings=[])
    if isinstance(source, dict):
        return from_introspection(source, origin=origin or "introspection result", lenient=lenient)
    graphql_schema = source._schema  # type: ignore[attr-defined]  # a strawberry Schema
    loaded = _validated(graphql_schema, origin=origin or "strawberry Schema", lenient=lenient, warnings=[])
    return loaded.replace(strawberry_schema=source)


def _validated(schema: GraphQLSchema, *, origin: str, lenient: bool, warnings: list[str]) -> LoadedSchema:
    """Run graphql-core's schema validation: errors raise when strict, become warnings when lenient."""
    errors = validate_schema(schema)
    if errors:
        if not lenient:
            raise SchemaLoadError(
                f"{origin} is not a valid schema:\n{_listing(origin, errors)}\nFix the schema, or {LENIENT_ADVICE} to use it as is."
            )
        warnings.extend(_describe(error) for error in errors)
        schema._validation_errors = []  # let graphql-core execute it despite the recorded problems
    check_wrapping(schema, origin)
    return LoadedSchema(schema=schema, origin=origin, warnings=tuple(warnings))


# --- messages ---------------------------------------------------------------------------------


def _at(error: GraphQLError) -> str:
    if error.locations:
        location = error.locations[0]
        return f" at line {location.line}, column {location.column}"
    return ""


def _where(origin: str, error: GraphQLError) -> str:
    if error.locations:
        location = error.locations[0]
        return f"{origin}:{location.line}:{location.column}: "
    return ""


def _describe(error: GraphQLError) -> str:
    if error.locations:
        location = error.locations[0]
        return f"{error.message} (line {location.line}, column {location.column})"
    return error.message


def _listing(origin: str, errors: Iterable[GraphQLError]) -> str:
    errors = list(errors)
    lines = [f"  {_where(origin, error)}{error.message}" for error in errors[:_MAX_LISTED_ERRORS]]
    if len(errors) > _MAX_LISTED_ERRORS:
        lines.append(f"  ... and {len(errors) - _MAX_LISTED_ERRORS} more")
    return "\n".join(lines)
