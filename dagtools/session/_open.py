"""From a source to a ready session: load the schema, compile (or reuse) its catalogue, pick an executor."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from graphql import GraphQLObjectType, GraphQLSchema

from .._errors import ConfigError
from ..catalogue._catalogue import Catalogue, compile_catalogue
from ..executors._base import Executor
from ..executors._http import HttpExecutor, Progress, env_headers, merge_headers
from ..executors._local import LocalExecutor
from ..load._dagger import dagger_endpoint, is_dagger_source
from ..load._dialect import DialectName
from ..load._introspect import fetch_schema
from ..load._sources import LoadedSchema, is_url, load_schema
from ._outputs import OutputSpec
from ._session import Session

__all__ = ["catalogue_for", "is_executable", "open_session"]

_catalogues: weakref.WeakKeyDictionary[GraphQLSchema, dict[tuple, Catalogue]] = weakref.WeakKeyDictionary()


def catalogue_for(
    schema: GraphQLSchema,
    *,
    dialect: DialectName | None = None,
    mutations: bool | Iterable[str] = False,
    include_deprecated: bool = False,
    relay_ids: bool = False,
    previews: bool | None = None,
) -> Catalogue:
    """The catalogue for a schema and options, compiled once and shared by every session on it."""
    policy = mutations if isinstance(mutations, bool) else tuple(sorted(mutations))
    key = (dialect, policy, include_deprecated, relay_ids, previews)
    per_schema = _catalogues.setdefault(schema, {})
    if key not in per_schema:
        per_schema[key] = compile_catalogue(
            schema, dialect=dialect, mutations=mutations, include_deprecated=include_deprecated, relay_ids=relay_ids, previews=previews
        )
    return per_schema[key]


def is_executable(schema: GraphQLSchema) -> bool:
    """Whether the schema carries resolvers (a server in this process) rather than only type definitions."""
    query = schema.query_type
    return isinstance(query, GraphQLObjectType) and any(f.resolve is not None for f in query.fields.values())


async def open_session(
    source: Any,
    *,
    executor: Executor | None = None,
    inputs: Mapping[str, Mapping[str, Any]] | None = None,
    outputs: Mapping[str, OutputSpec] | None = None,
    dialect: DialectName | None = None,
    mutations: bool | Iterable[str] = False,
    include_deprecated: bool = False,
    relay_ids: bool = False,
    previews: bool | None = None,
    lenient: bool = True,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    cache: bool | Literal["refresh"] = True,
    progress: Progress | None = None,
    **session_options: Any,
) -> Session:
    """A session on `source` (anything `load_schema` reads), with the host's inputs already given.

    `inputs` maps a name to `{"field": "potato", "description": ...}` for an object reached by a
    root-field chain, or `{"value": 3, "description": ...}` for a plain value.

    The source `"dagger"` is the Dagger session this process runs in (`DAGGER_SESSION_PORT` and
    `DAGGER_SESSION_TOKEN`, as `dagger run` sets them), with the Dagger dialect.

    A URL source is both the schema (by introspection, cached on disk unless `cache` is False;
    `"refresh"` fetches it again) and where queries go, through an `HttpExecutor` with `timeout` and
    the same `headers`: those given here over `DAGTOOLS_AUTHORIZATION` over `DAGTOOLS_HEADERS`.
    """
    owned: HttpExecutor | None = None
    if is_dagger_source(source):  # the engine session this process runs in, as Dagger's SDKs find it
        source, session_auth = dagger_endpoint()
        headers = {**session_auth, **dict(headers or {})}
        dialect = dialect or "dagger"
        cache = False
    if isinstance(source, str) and is_url(source):
        merged = merge_headers(env_headers(), headers)
        loaded = await fetch_schema(
            source,
            headers=merged,
            use_cache=cache is not False,
            refresh=cache == "refresh",
            timeout=timeout,
            lenient=lenient,
            progress=progress,
        )
        if executor is None:
            executor = owned = HttpExecutor(source, headers=merged, timeout=timeout)
    else:
        loaded = source if isinstance(source, LoadedSchema) else load_schema(source, lenient=lenient)
    catalogue = catalogue_for(
        loaded.schema, dialect=dialect, mutations=mutations, include_deprecated=include_deprecated, relay_ids=relay_ids, previews=previews
    )
    if executor is None:
        if not is_executable(loaded.schema):
            raise ConfigError(
                f"{loaded.origin} only describes the API; it cannot run queries. Point dagtools at the API's URL, or pass an executor."
            )
        executor = LocalExecutor(loaded.strawberry_schema or loaded.schema)
    try:
        session = Session(catalogue, executor, outputs=outputs, **session_options)
        session.warnings = loaded.warnings
        for name, spec in (inputs or {}).items():
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
            await session.add_input(name, **options)
    except BaseException:
        if owned is not None:  # the session never reached the caller, who could not close its client
            await owned.aclose()
        raise
    return session
