"""What kind of source a string names (a URL, a Python attribute, a file, or schema text), decided
without importing graphql-core."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["is_url"]

_URL = re.compile(r"^https?://", re.IGNORECASE)
_PYTHON_ATTRIBUTE = re.compile(r"^(?P<file>.+\.py):(?P<attr>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$", re.DOTALL)
_SCHEMA_SUFFIXES = {".json", ".graphql", ".graphqls", ".gql", ".sdl", ".py"}


def is_url(source: object) -> bool:
    """Whether a source names a live API (http or https) rather than a file or text."""
    return isinstance(source, str) and _URL.match(source) is not None


def _looks_like_path(source: str) -> bool:
    """Whether a string names a file rather than holding SDL or JSON text."""
    if "\n" in source or "{" in source or not source.strip():
        return False
    if os.path.exists(source):
        return True
    if not any(c.isspace() for c in source.strip()):
        return True  # one word: schema text is never a single token
    return Path(source).suffix.lower() in _SCHEMA_SUFFIXES or "/" in source or os.sep in source


#: A URL whose scheme is not one dagtools reads (`htp://`, `ws://`, `file://`).
_OTHER_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")


def other_scheme(source: str) -> str | None:
    """The scheme of a URL that is not http(s), or None for anything else."""
    match = _OTHER_SCHEME.match(source.strip())
    return match["scheme"] if match and not _URL.match(source.strip()) else None


#: An address written without its scheme: `127.0.0.1:8000/graphql`, `localhost:4000`, `api.example.com/graphql`.
_NO_SCHEME = re.compile(
    r"^(?P<host>localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"
    r"(?P<port>:\d{1,5})?(?P<path>/\S*)?$"
)


def missing_scheme(source: str) -> str | None:
    """The URL a string that names no file probably meant, when it reads as an address without its
    scheme (a host with a port or a path), else None. Loopback and bare IPs get http, names https."""
    match = _NO_SCHEME.match(source.strip())
    if match is None or not (match["port"] or match["path"]):
        return None
    host = match["host"]
    local = host == "localhost" or host.startswith("[") or host.replace(".", "").isdigit()
    return f"{'http' if local or match['port'] else 'https'}://{source.strip()}"
