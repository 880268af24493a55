"""Where dagtools keeps what it learnt about a schema between runs, and how an entry is read and written.

Two caches share one directory: the introspection answers of live APIs (`_introspect`) and the
compiled form of a schema (`CompiledEntry`): what loading it tolerated, its compiled catalogues per
option set, and the first tool list a client was shown. A compiled entry is named by the schema's
content hash, the dagtools version and a fingerprint of dagtools' own code, never by a header or a
credential, and holds nothing but what the schema's text already says. Entries are written
atomically with mode 0600; a damaged, foreign or oversized entry reads as absent and is rebuilt.

This module imports no graphql-core: a start served from the cache must not pay for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "COMPILED_FORMAT",
    "DEFAULT_TTL",
    "CompiledEntry",
    "cache_key",
    "code_fingerprint",
    "content_digest",
    "default_cache_dir",
    "write_json_atomically",
]

#: Seconds an introspection answer is trusted before it is fetched again.
DEFAULT_TTL = 3600.0
#: Bumped whenever the layout of a compiled entry changes: older entries are then ignored.
COMPILED_FORMAT = 1
#: The largest compiled entry read or written (GitHub's, with its catalogue, is a few MB).
COMPILED_MAX_BYTES = 64 * 1024 * 1024
#: How many compiled entries the directory keeps; the least recently written go first.
COMPILED_MAX_ENTRIES = 64
#: How many option sets (catalogues) and first tool lists one entry keeps.
SECTION_MAX_ITEMS = 8


def default_cache_dir() -> Path:
    """`DAGTOOLS_CACHE_DIR`, else `$XDG_CACHE_HOME/dagtools/schemas`, else `~/.cache/dagtools/schemas`."""
    configured = os.environ.get("DAGTOOLS_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dagtools" / "schemas"


def cache_key(url: str, headers: Mapping[str, str] | None = None) -> str:
    """The entry name for a URL and the headers sent with it (names compared case-insensitively)."""
    parts = [url] + [f"{name.lower()}: {value}" for name, value in sorted((headers or {}).items(), key=lambda item: item[0].lower())]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def content_digest(*parts: str) -> str:
    """SHA-256 of a schema's text and what changes how it loads (strict or lenient)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


_code: list[str] = []


def code_fingerprint() -> str:
    """The dagtools version and the size and time of every one of its modules: an edited install (or
    another checkout) never reads what a different code compiled."""
    if not _code:
        from .. import __version__

        root = Path(__file__).resolve().parents[1]
        stats = []
        for path in sorted(root.rglob("*.py")):
            try:
                info = path.stat()
            except OSError:
                continue
            stats.append(f"{path.relative_to(root)}:{info.st_size}:{info.st_mtime_ns}")
        _code.append(content_digest(__version__, *stats)[:24])
    return _code[0]


def write_json_atomically(path: Path, data: Any, *, max_bytes: int | None = None) -> bool:
    """Write `data` as JSON to `path` (mode 0600) through a temporary file and a rename, so a reader
    never sees half an entry. A cache that cannot be written is skipped: False, nothing raised."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if max_bytes is not None and len(text) > max_bytes:
        return False
    name = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False) as handle:
            name = handle.name
            os.chmod(name, 0o600)
            handle.write(text)
        os.replace(name, path)
        return True
    except OSError:
        if name is not None:
            with contextlib.suppress(OSError):
                os.unlink(name)
        return False


class CompiledEntry:
    """The compiled form of one schema text: `warnings` its loading tolerated, `catalogues` by option
    key, `listings` (first tool lists) by server-configuration key. Plain JSON data throughout."""

    def __init__(self, digest: str, *, directory: Path | None = None, data: dict[str, Any] | None = None) -> None:
        self.digest = digest
        self.path = (directory or default_cache_dir()) / "compiled" / f"{content_digest(digest, code_fingerprint())}.json"
        self.data: dict[str, Any] = data if data is not None else {"warnings": [], "catalogues": {}, "listings": {}}
        self._lock = threading.Lock()

    @classmethod
    def read(cls, digest: str, *, directory: Path | None = None) -> CompiledEntry | None:
        """The entry for `digest`, or None when there is none this code can trust."""
        entry = cls(digest, directory=directory)
        try:
            with open(entry.path, "rb") as handle:
                raw = handle.read(COMPILED_MAX_BYTES + 1)
            if len(raw) > COMPILED_MAX_BYTES:
                return None
            data = json.loads(raw)
        except (OSError, ValueError, RecursionError):
            return None  # absent, damaged or nested past reading: compile again
        if (
            not isinstance(data, dict)
            or data.get("format") != COMPILED_FORMAT
            or data.get("digest") != digest
            or data.get("code") != code_fingerprint()
            or not isinstance(data.get("warnings"), list)
            or not all(isinstance(w, str) for w in data["warnings"])
            or not isinstance(data.get("catalogues"), dict)
            or not isinstance(data.get("listings"), dict)
        ):
            return None
        entry.data = data
        return entry

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self.data["warnings"])

    def section(self, name: str, key: str) -> Any:
        value = self.data[name].get(key)
        return value if isinstance(value, dict) else None

    def put(self, name: str, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            items: dict[str, Any] = self.data[name]
            items.pop(key, None)
            while len(items) >= SECTION_MAX_ITEMS:
                items.pop(next(iter(items)))
            items[key] = value

    def write(self) -> bool:
        with self._lock:  # a warm-up thread may put a catalogue while a request writes a listing
            self.data.update(format=COMPILED_FORMAT, digest=self.digest, code=code_fingerprint())
            written = write_json_atomically(self.path, self.data, max_bytes=COMPILED_MAX_BYTES)
        if written:
            _prune(self.path.parent)
        return written


def _prune(directory: Path) -> None:
    """Keep the directory to `COMPILED_MAX_ENTRIES` entries, dropping the oldest."""
    try:
        entries = [(p.stat().st_mtime, p) for p in directory.glob("*.json")]
    except OSError:
        return
    if len(entries) <= COMPILED_MAX_ENTRIES:
        return
    for _, path in sorted(entries)[: len(entries) - COMPILED_MAX_ENTRIES]:
        with contextlib.suppress(OSError):
            path.unlink()
