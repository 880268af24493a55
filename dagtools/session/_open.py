"""From a source to a ready session: load the schema, compile (or reuse) its catalogue, pick an executor."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

import anyio
from graphql import GraphQLObjectType, GraphQLSchema

from .._errors import ConfigError
from .._telemetry import session_opened
from ..catalogue._catalogue import Catalogue, compile_catalogue
from ..catalogue._compiled import catalogue_of
from ..catalogue._options import CatalogueOptions
from ..executors._base import Executor, SchemaOnlyExecutor
from ..executors._http import HttpExecutor, Progress, env_headers, merge_headers
from ..executors._local import LocalExecutor
from ..load._dagger import dagger_endpoint, is_dagger_source
from ..load._introspect import fetch_schema
from ..load._kinds import is_url
from ..load._loaded import LoadedSchema
from ..load._sources import load_schema
from ..load._warm_start import load_cached
from ..stores._open import open_store
from ..stores._store import SessionStore, new_session_key
from ._options import SessionOptions
from ._outputs import OutputSpec
from ._persistence import SessionKeeper
from ._session import Session

__all__ = ["catalogue_for", "executor_for", "is_executable", "open_session"]

_catalogues: weakref.WeakKeyDictionary[GraphQLSchema, dict[CatalogueOptions, Catalogue]] = weakref.WeakKeyDictionary()
_restored: weakref.WeakKeyDictionary[LoadedSchema, dict[CatalogueOptions, Catalogue]] = weakref.WeakKeyDictionary()
#: Held while a catalogue is looked up and compiled: a warm-up thread and a request asking at once get
#: the same one, compiled once (re-entered for a LoadedSchema's built schema).
_compiling = threading.RLock()
logger = logging.getLogger("dagtools")


def catalogue_for(schema: GraphQLSchema | LoadedSchema, options: CatalogueOptions | None = None, **flat: Any) -> Catalogue:
    """The catalogue for a schema and options, compiled once and shared by every session on it. A
    `LoadedSchema` with a compiled form on disk (`load_cached`) gives a catalogue restored from it,
    whose schema is built only when a call needs it."""
    options = replace(options or CatalogueOptions(), **flat) if flat else options or CatalogueOptions()
    with _compiling:
        return _catalogue_for(schema, options)


def _catalogue_for(schema: GraphQLSchema | LoadedSchema, options: CatalogueOptions) -> Catalogue:
    if isinstance(schema, LoadedSchema):
        if schema.compiled is None:
            return _catalogue_for(schema.schema, options)
        restored = _restored.setdefault(schema, {})
        if options not in restored:
            restored[options] = catalogue_of(schema, options)
        return restored[options]
    per_schema = _catalogues.setdefault(schema, {})
    if options not in per_schema:
        per_schema[options] = compile_catalogue(schema, **options.as_keywords())
        logger.debug("catalogue compiled: %d tools, %s", len(per_schema[options]), options)
    return per_schema[options]


def is_executable(schema: GraphQLSchema) -> bool:
    """Whether the schema carries resolvers (a server in this process) rather than only type definitions."""
    query = schema.query_type
    return isinstance(query, GraphQLObjectType) and any(f.resolve is not None for f in query.fields.values())


def executor_for(source: Any, loaded: LoadedSchema, *, headers: Mapping[str, str] | None = None, timeout: float = 30.0) -> Executor:
    """Where a session's queries go, the one place that decides it: the API's URL over HTTP (with
    `headers` over `DAGTOOLS_AUTHORIZATION` over `DAGTOOLS_HEADERS`), the schema's own resolvers in
    this process, or nowhere (a schema file: every call says so)."""
    if isinstance(source, str) and is_url(source):
        return HttpExecutor(source, headers=merge_headers(env_headers(), headers), timeout=timeout)
    if loaded.executable:
        return LocalExecutor(loaded.strawberry_schema or loaded.schema)
    return SchemaOnlyExecutor(loaded.origin)


async def open_session(
    source: Any,
    *,
    inputs: Mapping[str, Mapping[str, Any]] | None = None,
    outputs: Mapping[str, OutputSpec] | None = None,
    options: SessionOptions | None = None,
    executor: Executor | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    cache: bool | Literal["refresh"] = True,
    lenient: bool = True,
    progress: Progress | None = None,
    store: SessionStore | str | None = None,
    key: str | None = None,
    **flat_options: Any,
) -> Session:
    """A session on `source` (anything `load_schema` reads), with the host's inputs already given.
    Use it as `async with await open_session(...) as session:`; it closes the executor it made.

    `inputs` maps a name to `{"field": "potato", "description": ...}` for an object reached by a
    root-field chain, or `{"value": 3, "description": ...}` for a plain value. `options` (or its
    fields as keywords: `mutations=True`, `dialect="relay"`, `max_active_tools=32`) shape the
    catalogue and the session.

    The source `"dagger"` is the Dagger session this process runs in (`DAGGER_SESSION_PORT` and
    `DAGGER_SESSION_TOKEN`, as `dagger run` sets them), with the Dagger dialect.

    A URL source is both the schema (by introspection, cached on disk unless `cache` is False;
    `"refresh"` fetches it again) and where queries go, through an `HttpExecutor` with `timeout` and
    the same `headers`: those given here over `DAGTOOLS_AUTHORIZATION` over `DAGTOOLS_HEADERS`.
    A given `executor` is used as it is and left open.

    With a `store` (a `SessionStore`, or a URL: `memory:`, `sqlite:///PATH`, `redis://HOST:PORT/DB`)
    the session lives there under `key`: an existing session is resumed as it was saved (its IDs,
    objects, toolset, outputs and context; `inputs` only apply to a new one), and every call is
    saved before its result is returned. Without a `key`, a new unguessable one is made
    (`session.key`). A store given as a URL is closed with the session; a given store is left open.
    """
    options = SessionOptions.of(options, **flat_options)
    if is_dagger_source(source):  # the engine session this process runs in, as Dagger's SDKs find it
        source, session_auth = dagger_endpoint()
        headers = {**session_auth, **dict(headers or {})}
        if options.catalogue.dialect is None:
            options = replace(options, catalogue=replace(options.catalogue, dialect="dagger"))
        cache = False
    if isinstance(source, LoadedSchema):
        loaded = source
    elif isinstance(source, str) and is_url(source):
        if cache is False:
            merged = merge_headers(env_headers(), headers)
            loaded = await fetch_schema(source, headers=merged, use_cache=False, timeout=timeout, lenient=lenient, progress=progress)
        else:  # the introspection cache, then the compiled one; a fetch blocks, so it runs off the event loop
            refresh = cache == "refresh"
            url: str = source
            loaded = await anyio.to_thread.run_sync(
                lambda: load_cached(url, headers=headers, refresh=refresh, timeout=timeout, lenient=lenient, progress=progress)
            )
    elif cache is False:
        loaded = load_schema(source, lenient=lenient)
    else:
        loaded = load_cached(source, lenient=lenient, refresh=cache == "refresh")
    catalogue = catalogue_for(loaded, options.catalogue)
    owned = executor is None
    if executor is None:
        executor = executor_for(source, loaded, headers=headers, timeout=timeout)
        if isinstance(executor, SchemaOnlyExecutor):
            raise ConfigError(
                f"{loaded.origin} only describes the API; it cannot run queries. Point dagtools at the API's URL, or pass an executor."
            )
    session = Session(catalogue, executor, outputs=outputs, options=options)
    if owned:
        session.close_with(executor.aclose)
    session.warnings = loaded.warnings
    given = [(name, _input_options(name, spec)) for name, spec in (inputs or {}).items()]

    async def add_inputs() -> None:
        for name, spec in given:
            await session._add_input(name, **spec)

    try:
        if store is None:
            await add_inputs()
        else:
            if isinstance(store, str):
                store = open_store(store)
                session.close_with(store.aclose)
            session.keeper = SessionKeeper(store, key or new_session_key())
            if await session.keeper.open(session, add_inputs):
                logger.info("session %s resumed: %d objects", session.key, len(session.registry))
    except BaseException:
        await session.aclose()  # the session never reached the caller, who could not close it
        raise
    logger.info("session opened on %s: %d tools, %d inputs", loaded.origin, len(catalogue), len(inputs or {}))
    counted = session_opened()  # for telemetry's count of open sessions, when it is on
    if counted is not None:
        session.close_with(counted)
    return session


def _input_options(name: str, spec: Any) -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        raise ConfigError(f"Input {name!r} must be a mapping with `field` or `value`, and a `description`.")
    unknown = set(spec) - {"field", "value", "description"}
    if unknown:
        raise ConfigError(f"Input {name!r} has unknown keys {sorted(unknown)}; use field or value, and description.")
    options: dict[str, Any] = {"description": str(spec.get("description", ""))}
    if "field" in spec:
        options["field"] = str(spec["field"])
    if "value" in spec:
        options["value"] = spec["value"]
    return options
