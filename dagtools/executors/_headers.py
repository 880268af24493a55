"""Headers for the API from the environment, and headers merged as HTTP compares their names.

Kept apart from the HTTP executor so that a start which only needs a URL's cache key (a warm start
from the compiled cache) does not import the HTTP client.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from .._errors import ExecutorError

__all__ = ["env_headers", "merge_headers"]


def env_headers(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Headers from `DAGTOOLS_HEADERS` (a JSON object) and `DAGTOOLS_AUTHORIZATION` (the Authorization value)."""
    environ = os.environ if environ is None else environ
    headers: dict[str, str] = {}
    raw = environ.get("DAGTOOLS_HEADERS", "").strip()
    if raw:
        try:
            value = json.loads(raw)
        except ValueError as error:
            raise ExecutorError(
                f'DAGTOOLS_HEADERS is not valid JSON ({error}); set it to an object such as {{"X-Api-Key": "..."}}.'
            ) from None
        if not isinstance(value, dict):
            raise ExecutorError('DAGTOOLS_HEADERS must be a JSON object such as {"X-Api-Key": "..."}.')
        headers = merge_headers(headers, {str(k): str(v) for k, v in value.items()})
    authorization = environ.get("DAGTOOLS_AUTHORIZATION", "").strip()
    if authorization:
        headers = merge_headers(headers, {"Authorization": authorization})
    return headers


def merge_headers(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """Later layers win; names compare case-insensitively, as HTTP says, keeping the later spelling."""
    merged: dict[str, tuple[str, str]] = {}
    for layer in layers:
        for name, value in (layer or {}).items():
            merged[name.lower()] = (name, value)
    return dict(merged.values())
