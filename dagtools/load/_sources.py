"""Turn any schema source into one GraphQLSchema: tell a URL from a file, a Python attribute or text,
read it, and hand what it holds to `_build` (or, for a URL, to the introspection fetch)."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Any

from graphql import GraphQLSchema, print_schema

from .._errors import SchemaLoadError
from ._build import from_object, from_text, is_schema_object
from ._kinds import _PYTHON_ATTRIBUTE, _URL, _looks_like_path, missing_scheme, other_scheme
from ._loaded import LoadedSchema
from ._python import call_factory, import_file, kind_of, schema_names
from ._slips import close_files

__all__ = ["LoadedSchema", "load_schema", "schema_fingerprint"]

logger = logging.getLogger("dagtools")

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
    if is_schema_object(source):
        return from_object(source, origin=None, lenient=lenient)
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
    return from_text(source, origin=_text_origin(source), lenient=lenient)


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
    return from_text(text, origin=origin, lenient=lenient, as_json=as_json)


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
    if callable(value) and not isinstance(value, type) and not is_schema_object(value):
        value = call_factory(value, origin=origin)
    if is_schema_object(value):
        return from_object(value, origin=origin, lenient=lenient)
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
        return from_text(text, origin=origin, lenient=lenient)
    raise SchemaLoadError(
        f"Cannot load {origin}: {attribute!r} is {kind_of(value)}, not a schema. It must be a "
        "strawberry.Schema, a graphql GraphQLSchema, an introspection result dict, SDL text, or a "
        "zero-argument function returning one of these."
    )
