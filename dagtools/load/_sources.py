"""Turn any schema source into one GraphQLSchema, coping with public schemas that break the spec."""

from __future__ import annotations

import hashlib
import json
import logging
import os
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
    print_schema,
    validate_schema,
)
from graphql.validation.validate import validate_sdl

from .._errors import SchemaLoadError
from ._kinds import _PYTHON_ATTRIBUTE, _URL, _looks_like_path, missing_scheme, other_scheme
from ._loaded import LoadedSchema
from ._python import call_factory, import_file, is_strawberry_schema, kind_of, schema_names
from ._repair import SdlRepair
from ._slips import close_files, with_type_suggestions
from ._wrapping import check_wrapping

__all__ = ["LENIENT_ADVICE", "LoadedSchema", "load_schema", "schema_fingerprint"]

logger = logging.getLogger("dagtools")

#: What a strict load's refusal advises, in Python's words; the command line says it in its own (--strict).
LENIENT_ADVICE = "load it with lenient=True"

#: How many individual errors a SchemaLoadError lists before summarising the rest.
_MAX_LISTED_ERRORS = 10

#: Keywords of load_schema that only URL sources use (the rest of dagtools.introspect.fetch_schema's).
_URL_OPTIONS = {"cache_dir", "refresh", "use_cache", "ttl", "timeout", "progress"}


def load_schema(source: object, *, lenient: bool = True, headers: dict[str, str] | None = None, **url_options: Any) -> LoadedSchema:
    """Load a GraphQL schema from any supported source.

    `source` may be a `GraphQLSchema`, a `strawberry.Schema`, a `LoadedSchema` (returned as is), an
    introspection result `dict` (`{"data": {"__schema": ...}}` or `{"__schema": ...}`), a path to an
    SDL or introspection JSON file, `"path/to/file.py:attribute"`, or SDL / JSON text.

    With `lenient` (the default), a schema that is invalid as published still loads: repeated
    definitions are dropped (the first one is kept) and validation errors become `warnings`.
    With `lenient=False` any such problem raises `SchemaLoadError`.

    An `http(s)://` URL is asked for its schema with the introspection query, sent with `headers` (and
    those of `DAGTOOLS_HEADERS` / `DAGTOOLS_AUTHORIZATION`); the answer is cached on disk. The other
    keywords (`cache_dir`, `refresh`, `use_cache`, `ttl`, `timeout`, `progress`) are those of
    `dagtools.introspect.fetch_schema`; other sources ignore them and `headers`.
    """
    unknown = set(url_options) - _URL_OPTIONS
    if unknown:
        raise TypeError(f"load_schema() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    loaded = _load(source, lenient=lenient, headers=headers, **url_options)
    logger.info(
        "schema loaded from %s: %d types%s",
        loaded.origin,
        len(loaded.schema.type_map),
        f", {len(loaded.warnings)} tolerated" if loaded.warnings else "",
    )
    return loaded


def _load(source: object, *, lenient: bool, headers: dict[str, str] | None, **url_options: Any) -> LoadedSchema:
    if isinstance(source, str) and _URL.match(source):
        return _from_url(source, lenient=lenient, headers=headers, **url_options)
    if _is_schema_object(source):
        return _from_object(source, origin=None, lenient=lenient)
    if isinstance(source, os.PathLike):
        return _from_file(Path(os.fspath(source)), origin=os.fspath(source), lenient=lenient)
    if isinstance(source, str):
        return _from_string(source, lenient=lenient)
    raise SchemaLoadError(
        f"Cannot load a schema from {kind_of(source)}. Pass a GraphQLSchema, a strawberry.Schema, "
        "an introspection result dict, a path to an SDL or introspection JSON file, "
        "'path/to/file.py:attribute', or SDL text."
    )


def schema_fingerprint(schema: GraphQLSchema) -> str:
    """SHA-256 hex digest of the printed schema: equal for schemas that print the same."""
    return hashlib.sha256(print_schema(schema).encode("utf-8")).hexdigest()


# --- strings: URL, python attribute, path, or text -------------------------------------------


def _from_string(source: str, *, lenient: bool) -> LoadedSchema:
    if _URL.match(source):
        return _from_url(source, lenient=lenient)
    if (scheme := other_scheme(source)) is not None:
        rest = source.strip()[len(scheme) + 3 :]
        guess = (
            rest
            if scheme.lower() == "file"
            else f"{'https' if scheme.lower().endswith('s') and scheme.lower() != 'ws' else 'http'}://{rest}"
        )
        raise SchemaLoadError(
            f"{source!r} is not an address dagtools can read: it reads http:// and https:// URLs, files and "
            f"path/to/file.py:attribute. Did you mean {guess}?"
        )
    if (match := _PYTHON_ATTRIBUTE.match(source.strip())) is not None:
        return _from_python_attribute(match["file"], match["attr"], origin=source.strip(), lenient=lenient)
    if _looks_like_path(source):
        path = Path(source).expanduser()
        if path.exists():
            return _from_file(path, origin=source, lenient=lenient)
        if (meant := missing_scheme(source)) is not None:
            raise SchemaLoadError(
                f"{source!r} is neither a file nor a URL dagtools can read: a URL starts with http:// or https://. Did you mean {meant}?"
            )
        raise SchemaLoadError(
            f"Schema file {source!r} does not exist (looked in {path.absolute().parent}).{close_files(source)} "
            "Check the path, or pass SDL text or an introspection result instead."
        )
    return _from_text(source, origin=_text_origin(source), lenient=lenient)


def _from_url(source: str, *, lenient: bool, headers: dict[str, str] | None = None, **options: Any) -> LoadedSchema:
    from ..executors._http import env_headers, merge_headers
    from ._introspect import fetch_schema_sync

    return fetch_schema_sync(source, headers=merge_headers(env_headers(), headers), lenient=lenient, **options)


def _text_origin(text: str) -> str:
    return "introspection JSON string" if text.lstrip().startswith("{") else "SDL string"


# --- files ------------------------------------------------------------------------------------


def _from_file(path: Path, *, origin: str, lenient: bool) -> LoadedSchema:
    if path.suffix.lower() == ".py":
        raise SchemaLoadError(
            f"{origin} is a Python file: name the schema inside it as '{origin}:attribute', for example '{origin}:schema'."
        )
    if path.is_dir():
        raise SchemaLoadError(f"{origin} is a directory. Pass the path of an SDL or introspection JSON file.")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SchemaLoadError(f"Schema file {origin!r} does not exist. Check the path.") from None
    except UnicodeDecodeError as exc:
        raise SchemaLoadError(
            f"{origin} is not UTF-8 text ({exc.reason} at byte {exc.start}). Pass an SDL file or an introspection JSON file."
        ) from None
    except OSError as exc:
        raise SchemaLoadError(f"Cannot read schema file {origin}: {exc.strerror or exc}.") from None
    as_json = path.suffix.lower() == ".json" or text.lstrip().startswith("{")
    return _from_text(text, origin=origin, lenient=lenient, as_json=as_json)


def _from_text(text: str, *, origin: str, lenient: bool, as_json: bool | None = None) -> LoadedSchema:
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
        return _from_introspection(data, origin=origin, lenient=lenient)
    return _from_sdl(text, origin=origin, lenient=lenient)


# --- introspection results --------------------------------------------------------------------


def _from_introspection(data: object, *, origin: str, lenient: bool) -> LoadedSchema:
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


def _is_schema_object(value: object) -> bool:
    return isinstance(value, (LoadedSchema, GraphQLSchema, dict)) or is_strawberry_schema(value)


def _from_object(source: object, *, origin: str | None, lenient: bool) -> LoadedSchema:
    """Load one of the in-memory kinds; `origin` None names it after its kind."""
    if isinstance(source, LoadedSchema):
        return source
    if isinstance(source, GraphQLSchema):
        return _validated(source, origin=origin or "GraphQLSchema", lenient=lenient, warnings=[])
    if isinstance(source, dict):
        return _from_introspection(source, origin=origin or "introspection result", lenient=lenient)
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


# --- python files: path/to/file.py:attribute ----------------------------------------------


def _from_python_attribute(file: str, attribute: str, *, origin: str, lenient: bool) -> LoadedSchema:
    path = Path(file).expanduser()
    if not path.is_file():
        raise SchemaLoadError(
            f"Cannot load {origin}: Python file {file!r} does not exist (looked in {path.absolute().parent}).{close_files(file)} "
            "Check the path."
        )
    module = import_file(path, origin=origin)
    value: Any = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            candidates = schema_names(module)
            hint = f" Schemas it defines: {', '.join(candidates)}." if candidates else ""
            raise SchemaLoadError(
                f"Cannot load {origin}: {file} has no attribute {attribute!r} ({part!r} is missing).{hint} "
                f"Name a module-level schema, e.g. '{file}:schema'."
            ) from None
    if callable(value) and not isinstance(value, type) and not _is_schema_object(value):
        value = call_factory(value, origin=origin)
    if _is_schema_object(value):
        return _from_object(value, origin=origin, lenient=lenient)
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if isinstance(value, os.PathLike) or _looks_like_path(text):
            target = path.parent / text  # relative to the Python file, like its other resources
            if not target.is_file() or target.suffix.lower() == ".py":
                raise SchemaLoadError(
                    f"Cannot load {origin}: it names the file {text!r}, which is not an SDL or introspection "
                    f"JSON file next to {file}. Fix the path it holds."
                )
            return _from_file(target, origin=str(target), lenient=lenient).replace(origin=origin)
        return _from_text(text, origin=origin, lenient=lenient)
    raise SchemaLoadError(
        f"Cannot load {origin}: {attribute!r} is {kind_of(value)}, not a schema. It must be a "
        "strawberry.Schema, a graphql GraphQLSchema, an introspection result dict, SDL text, or a "
        "zero-argument function returning one of these."
    )


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
