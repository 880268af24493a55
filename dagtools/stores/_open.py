"""Opening a session store by its URL, whichever of the memory, SQLite and Redis stores it names.

    memory:                 this process only (the default when no store is given is no store at all)
    sqlite:///PATH          a file, safe for several processes on one machine (`sqlite:` for the default file)
    redis://HOST:PORT/DB    a Redis server, for several machines (the optional extra `redis`)

The SQLite and Redis stores are imported when a URL names them: the Redis client is an optional extra.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from .._errors import ConfigError
from ._store import MemoryStore, SessionStore

__all__ = ["default_data_dir", "open_store", "user_dir"]


def default_data_dir() -> Path:
    """`DAGTOOLS_DATA_DIR`, else the platform's per-user data directory, with `dagtools` under it."""
    return user_dir("DAGTOOLS_DATA_DIR", "XDG_DATA_HOME", Path(".local") / "share")


def user_dir(variable: str, xdg: str, xdg_default: Path) -> Path:
    """A per-user folder of dagtools': `variable` where set, else the XDG one (`xdg`, defaulting to
    `~/xdg_default`) with `dagtools` under it; on macOS and Windows, the application data folder."""
    if os.environ.get(variable):
        return Path(os.environ[variable]).expanduser()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "dagtools"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "dagtools"
    return Path(os.environ.get(xdg) or Path.home() / xdg_default) / "dagtools"


_memory: dict[str, MemoryStore] = {}


def open_store(url: str) -> SessionStore:
    """The store a URL names. `?idle=SECONDS` sets how long an unused session is kept.

    `memory:` (one store per process, shared by every session opened with it; `memory:NAME` for
    another), `sqlite:///relative/path.db`, `sqlite:////absolute/path.db` or `sqlite:` (a file
    under `default_data_dir()`), `redis://HOST:PORT/DB` or `rediss://...` (TLS), and a Redis Cluster:
    `redis+cluster://HOST:PORT[,HOST:PORT...]` or `rediss+cluster://...`. On Redis, `?replicas=N` is how
    many replicas confirm a save before it is acknowledged (1 in a cluster, 0 on one server).
    """
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    options: dict[str, float] = {}
    if "idle" in query:
        try:
            options["idle_ttl"] = float(query["idle"][-1])
        except ValueError:
            raise ConfigError(f"Store {url!r}: idle must be a number of seconds.") from None
    scheme = parts.scheme.lower()
    if scheme == "memory":
        name = parts.path or "default"
        if name not in _memory:
            _memory[name] = MemoryStore(**options)
        return _memory[name]
    if scheme == "sqlite":
        from ._sqlite import SqliteStore

        path = parts.path[1:] if parts.path.startswith("/") else parts.path
        return SqliteStore(Path(path).expanduser() if path else default_data_dir() / "sessions.sqlite3", **options)
    if scheme in ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster"):
        from ._redis import RedisStore

        replicas: int | None = None
        if "replicas" in query:
            try:
                replicas = int(query["replicas"][-1])
            except ValueError:
                raise ConfigError(f"Store {url.split('?', 1)[0]!r}: replicas must be a whole number.") from None
        return RedisStore(url.split("?", 1)[0], replicas=replicas, **options)
    raise ConfigError(f"Unknown session store {url!r}. Use memory:, sqlite:///PATH, redis://HOST:PORT/DB or redis+cluster://HOST:PORT.")
