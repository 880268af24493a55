"""Load a schema from a live API: run the introspection query over HTTP and cache the answer on disk.

The cache holds one JSON file per (URL, headers): its name is the SHA-256 of the URL and every header
name and value, so a different token never reads another token's schema (which may differ, and whose
existence is itself information), and neither the name nor the file holds a header value or a
credential from the URL (its user, password and token parameters are redacted). Each entry records
when it was fetched; an entry older than `ttl` (one hour by default) is fetched again, so a changed
schema shows up within the hour. When that fetch fails the stale entry is still used, with a
warning. `refresh` fetches and overwrites whatever the age; `use_cache=False` neither reads nor writes.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import anyio
from graphql import get_introspection_query, specified_directives

from .._errors import ExecutorError, SchemaLoadError
from .._redact import redact, secrets_of
from ..executors._http import HttpExecutor, Progress
from ._build import from_introspection
from ._cache import DEFAULT_TTL, cache_key, default_cache_dir
from ._loaded import LoadedSchema

__all__ = ["PROGRESS_FROM", "fetch_schema", "fetch_schema_sync", "stderr_progress"]

#: The biggest introspection answer read: big APIs' schemas run to tens of MB, far past a query's limit.
SCHEMA_MAX_BYTES = 256 * 1024 * 1024
#: Answers smaller than this load without a progress line.
PROGRESS_FROM = 256 * 1024
_FORMAT = 1


async def fetch_schema(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cache_dir: str | Path | None = None,
    refresh: bool = False,
    use_cache: bool = True,
    progress: Progress | None = None,
    ttl: float = DEFAULT_TTL,
    timeout: float = 30.0,
    lenient: bool = True,
    executor: HttpExecutor | None = None,
) -> LoadedSchema:
    """The schema of the API at `url`, from the cache when fresh, else by the introspection query."""
    path = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    path = path / f"{cache_key(url, headers)}.json"
    secrets = secrets_of(headers, url)
    shown = redact(url, secrets)  # the URL as messages, the schema's origin and the cache show it
    cached = _read_entry(path) if use_cache else None
    warnings: list[str] = []
    if cached is not None and not refresh and time.time() - cached["fetched_at"] < ttl:
        return _loaded(cached["introspection"], shown, lenient, warnings)
    try:
        introspection = await _introspect(url, headers, progress, timeout, executor)
    except SchemaLoadError as error:
        raise SchemaLoadError(redact(str(error), secrets)) from error.__cause__
    except ExecutorError as error:
        if cached is None or refresh:
            raise SchemaLoadError(redact(f"Cannot load the schema of {shown}: {error}", secrets)) from error
        age = (time.time() - cached["fetched_at"]) / 60
        warnings.append(redact(f"the API could not be asked for its schema ({error}); used the copy cached {age:.0f} minutes ago", secrets))
        return _loaded(cached["introspection"], shown, lenient, warnings)
    loaded = _loaded(introspection, shown, lenient, warnings)  # only a usable answer is cached
    if use_cache:
        _write_entry(path, shown, introspection)
    return loaded


def fetch_schema_sync(url: str, **options: Any) -> LoadedSchema:
    """`fetch_schema` for synchronous code, also when called from inside a running event loop."""
    try:
        anyio.get_current_task()
    except Exception:  # no event loop here: run one
        return anyio.run(lambda: fetch_schema(url, **options))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop runs here: give the fetch its own
        return pool.submit(anyio.run, lambda: fetch_schema(url, **options)).result()


def stderr_progress(stream: TextIO | None = None, *, threshold: int = PROGRESS_FROM) -> Progress | None:
    """A progress line of bytes received for big answers, or None when the stream is not a terminal."""
    out = stream if stream is not None else sys.stderr
    if not getattr(out, "isatty", lambda: False)():
        return None
    shown = [False]

    def finish() -> None:
        if shown[0]:
            out.write("\n")
            out.flush()
            shown[0] = False

    def report(received: int, total: int | None) -> None:
        if received < threshold:
            return
        of = f" of {total / 1e6:.1f} MB" if total else ""
        out.write(f"\rdagtools: loading the schema: {received / 1e6:.1f} MB{of}")
        out.flush()
        shown[0] = True

    report.finish = finish  # type: ignore[attr-defined]  # ends the line once the answer is in
    return report


# -- internals ---------------------------------------------------------------------------------------------


async def _introspect(
    url: str, headers: Mapping[str, str] | None, progress: Progress | None, timeout: float, executor: HttpExecutor | None
) -> dict[str, Any]:
    """The introspection answer, asking as a current server understands first, then ever older forms
    while the server says it does not know a field or argument of the introspection types."""
    runner = executor or HttpExecutor(url, headers=headers, timeout=timeout, max_response_bytes=SCHEMA_MAX_BYTES)
    try:
        for position, (era, query) in enumerate(_INTROSPECTION_QUERIES):
            response = await runner.execute(query, {}, operation_name="IntrospectionQuery", progress=progress)
            if response.data is not None and "__schema" in response.data:
                break
            messages = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in response.errors)
            if not _OLDER_FORM_MAY_HELP.search(messages) or position == len(_INTROSPECTION_QUERIES) - 1:
                raise SchemaLoadError(_refusal(url, messages, tried=position + 1, era=era))
    finally:
        if executor is None:
            await runner.aclose()
        getattr(progress, "finish", lambda: None)()
    answer: dict[str, Any] = {"data": response.data}
    if position:  # kept with the answer (and its cache entry), so every start can say so
        answer["extensions"] = {"dagtools": {"introspectionForm": era}}
    if era == _OLDEST:
        schema = answer["data"]["__schema"]
        schema["directives"] = _with_locations(schema.get("directives") or [])
    if response.errors:
        answer["errors"] = response.errors
    return answer


_OLDEST = "graphql-js 0.4"
#: The introspection query as each generation of servers understands it, newest first: graphql-js 16
#: (and graphql-core 3.2) asks for deprecated arguments, `specifiedByURL`, `isRepeatable` and the schema's
#: description; 15 knows the last two; 14 none of them; before 0.5 directives had no `locations`.
_INTROSPECTION_QUERIES: tuple[tuple[str, str], ...] = (
    (
        "graphql-js 16",
        get_introspection_query(
            descriptions=True, specified_by_url=True, directive_is_repeatable=True, schema_description=True, input_value_deprecation=True
        ),
    ),
    ("graphql-js 15", get_introspection_query(descriptions=True, directive_is_repeatable=True, schema_description=True)),
    ("graphql-js 14", get_introspection_query(descriptions=True)),
    (_OLDEST, re.sub(r"\n\s*locations\n", "\n", get_introspection_query(descriptions=True))),
)
#: A refusal that names a field or argument of the introspection types (or one only newer servers
#: have), so an older form of the query may be understood. Any other refusal is final.
_OLDER_FORM_MAY_HELP = re.compile(
    r"__(Schema|Type|Field|InputValue|Directive|EnumValue)\b|isRepeatable|specifiedBy(URL|Url)|includeDeprecated|\blocations\b"
)


def _refusal(url: str, messages: str, *, tried: int, era: str) -> str:
    """Why the schema could not be read, in the server's words, with the next step that fits them."""
    said = messages or "an answer without __schema"
    from_file = "load the schema from a file instead (its SDL, or an introspection answer as JSON)"
    if "introspection" in said.lower():
        advice = f"The server does not allow introspection: {from_file}."
    elif tried == len(_INTROSPECTION_QUERIES):
        advice = f"dagtools also tried {tried - 1} older forms of the query, down to what {era} servers understand; {from_file}."
    else:
        advice = f"Check that the URL is the API's GraphQL endpoint, or {from_file}."
    return f"{url} refused the introspection query: {said.rstrip('.')}. {advice}"


def _with_locations(directives: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Directives from a server too old to say where they apply: the spec's own directives get their
    spec locations; others are left out, since a schema cannot hold a directive without locations."""
    known = {d.name: [location.name for location in d.locations] for d in specified_directives}
    return [{**d, "locations": known[d["name"]]} for d in directives if d.get("name") in known]


def _loaded(introspection: dict[str, Any], url: str, lenient: bool, warnings: list[str]) -> LoadedSchema:
    loaded = from_introspection(introspection, origin=url, lenient=lenient)
    form = ((introspection.get("extensions") or {}).get("dagtools") or {}).get("introspectionForm")
    if isinstance(form, str):
        warnings = [*warnings, f"the server understood only an older form of the introspection query (as {form} servers do)"]
    if warnings:
        loaded = loaded.replace(warnings=tuple(warnings) + loaded.warnings)
    return loaded


#: An age no entry reaches honestly: a clock set back, or an entry dated ahead, reads as stale.
_NEVER = 10 * 365 * 24 * 3600


def _read_entry(path: Path) -> dict[str, Any] | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None  # absent, damaged or nested past reading: fetch again
    if (
        not isinstance(entry, dict)
        or entry.get("format") != _FORMAT
        or not isinstance(entry.get("fetched_at"), (int, float))
        or not isinstance(entry.get("introspection"), dict)
        or not 0 <= time.time() - entry["fetched_at"] < _NEVER  # dated in the future (or NaN): never fresh
    ):
        return None
    return entry


def _write_entry(path: Path, url: str, introspection: dict[str, Any]) -> None:
    """Write atomically (another process may be reading); a cache that cannot be written is skipped."""
    entry = {"format": _FORMAT, "url": url, "fetched_at": time.time(), "introspection": introspection}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False) as handle:
            json.dump(entry, handle, ensure_ascii=False)
        os.replace(handle.name, path)
    except OSError:
        try:
            os.unlink(handle.name)
        except (OSError, NameError):
            pass
