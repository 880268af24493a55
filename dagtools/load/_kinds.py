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
