"""Load a schema through its compiled form on disk, so a start does not pay for building it.

A source whose content this code has compiled before (a schema file, a live API's introspection
answer as cached by `_introspect`) loads as a deferred `LoadedSchema`: its warnings and compiled
catalogues come from the cache, and graphql-core builds the schema only when a call needs it. Any
other source loads as `load_schema` loads it, and carries the digest its compiled form is written
under once a catalogue is compiled. Python sources are imported as always (that builds their
schema) and keyed by the SDL they print, so their catalogue is still not compiled again.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._cache import DEFAULT_TTL, CompiledEntry, cache_key, content_digest, default_cache_dir
from ._kinds import _PYTHON_ATTRIBUTE, _looks_like_path, is_url
from ._loaded import LoadedSchema

__all__ = ["load_cached"]

logger = logging.getLogger("dagtools")


def load_cached(
    source: object, *, lenient: bool = True, headers: Mapping[str, str] | None = None, refresh: bool = False, **url_options: Any
) -> LoadedSchema:
    """`load_schema(source, ...)` through the compiled cache; `refresh` compiles again and overwrites
    it (and, for a URL, fetches the schema again). To bypass the cache, call `load_schema` itself."""
    if is_url(source):
        return _from_url(str(source), lenient=lenient, headers=headers, refresh=refresh, **url_options)
    if isinstance(source, str) and _PYTHON_ATTRIBUTE.match(source.strip()):
        return _from_python(source, lenient=lenient, refresh=refresh)
    path = _file_of(source)
    if path is not None:
        loaded = _from_file(path, origin=str(source) if isinstance(source, str) else os.fspath(path), lenient=lenient, refresh=refresh)
        if loaded is not None:
            return loaded
    from ._sources import load_schema

    return load_schema(source, lenient=lenient, headers=dict(headers) if headers else None, **url_options)


def _file_of(source: object) -> Path | None:
    if isinstance(source, os.PathLike):
        path = Path(os.fspath(source))
    elif isinstance(source, str) and _looks_like_path(source):
        path = Path(source).expanduser()
    else:
        return None
    return path if path.suffix.lower() != ".py" and path.is_file() else None


def _from_file(path: Path, *, origin: str, lenient: bool, refresh: bool) -> LoadedSchema | None:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None  # load_schema says what is wrong with it
    as_json = path.suffix.lower() == ".json" or text.lstrip().startswith("{")

    def build() -> LoadedSchema:
        from ._build import from_text

        return from_text(text, origin=origin, lenient=lenient, as_json=as_json)

    return _through_cache(content_digest("text", str(lenient), text), origin, build, refresh=refresh)


def _from_url(source: str, *, lenient: bool, headers: Mapping[str, str] | None, refresh: bool, **options: Any) -> LoadedSchema:
    """A fresh introspection answer in the cache is the content; a fetch refreshes both caches."""
    from .._redact import redact, secrets_of
    from ..executors._headers import env_headers, merge_headers  # not the HTTP client: a warm start sends nothing

    merged = merge_headers(env_headers(), headers)
    directory = Path(options["cache_dir"]).expanduser() if options.get("cache_dir") is not None else default_cache_dir()
    answer = directory / f"{cache_key(source, merged)}.json"
    use_cache = options.get("use_cache", True)
    if not use_cache:
        from ._introspect import fetch_schema_sync

        return fetch_schema_sync(source, headers=merged, lenient=lenient, **options)

    def build(again: bool) -> LoadedSchema:
        from ._introspect import fetch_schema_sync

        return fetch_schema_sync(source, headers=merged, lenient=lenient, **{**options, "refresh": again})

    origin = redact(source, secrets_of(merged, source))
    digest = _answer_digest(answer, lenient, ttl=options.get("ttl", DEFAULT_TTL)) if not refresh else None
    if digest is not None:
        entry = CompiledEntry.read(digest)
        if entry is not None:
            logger.info("schema of %s loaded from its compiled form", origin)
            return LoadedSchema(origin=origin, warnings=entry.warnings, build=lambda: build(False).schema, digest=digest, compiled=entry)
    loaded = build(refresh)
    # An answer still fresh is the one just fetched (or a fresh copy): compiled whatever its schema
    # tolerated (GitHub's has a dozen warnings, which the compiled form keeps and every start shows).
    # A stale one was used in a pinch, the API not answering: it is not worth compiling for.
    digest = _answer_digest(answer, lenient, ttl=options.get("ttl", DEFAULT_TTL))
    if digest is None:
        return loaded
    return loaded.replace(digest=digest, compiled=CompiledEntry(digest, data=_new_data(loaded)))


def _answer_digest(path: Path, lenient: bool, *, ttl: float) -> str | None:
    """The digest of a cached introspection answer younger than `ttl`, or None."""
    try:
        if time.time() - path.stat().st_mtime >= ttl:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    return content_digest("introspection", str(lenient), raw.decode("utf-8", "replace"))


def _from_python(source: str, *, lenient: bool, refresh: bool) -> LoadedSchema:
    from graphql import print_schema

    from ._sources import load_schema

    loaded = load_schema(source, lenient=lenient)
    digest = content_digest("python", str(lenient), print_schema(loaded.schema))
    entry = None if refresh else CompiledEntry.read(digest)
    return loaded.replace(digest=digest, compiled=entry or CompiledEntry(digest, data=_new_data(loaded)))


def _through_cache(digest: str, origin: str, build: Any, *, refresh: bool) -> LoadedSchema:
    entry = None if refresh else CompiledEntry.read(digest)
    if entry is not None:
        logger.info("schema %s loaded from its compiled form", origin)
        return LoadedSchema(origin=origin, warnings=entry.warnings, build=lambda: build().schema, digest=digest, compiled=entry)
    loaded: LoadedSchema = build()
    return loaded.replace(digest=digest, compiled=CompiledEntry(digest, data=_new_data(loaded)))


def _new_data(loaded: LoadedSchema) -> dict[str, Any]:
    return {"warnings": list(loaded.warnings), "catalogues": {}, "listings": {}}
