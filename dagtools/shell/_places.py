"""Where the shell keeps things between runs: named sessions (a SQLite store by default) and its history,
under the user's state directory."""

from __future__ import annotations

import re
from pathlib import Path

from .._errors import ConfigError
from ..stores._open import user_dir

__all__ = ["default_state_dir", "default_store_url", "history_path", "session_key"]

_SESSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def default_state_dir() -> Path:
    """`DAGTOOLS_STATE_DIR`, else `$XDG_STATE_HOME/dagtools` (`~/.local/state/dagtools`); on macOS and
    Windows, the per-user application data folder, where such state lives there."""
    return user_dir("DAGTOOLS_STATE_DIR", "XDG_STATE_HOME", Path(".local") / "state")


def default_store_url() -> str:
    """The store of named shell sessions when no `--store` is given: one SQLite file, safe for several
    processes at once (its leases serialise two commands on one session)."""
    folder = default_state_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"The shell's sessions go in {folder}, which cannot be made ({error.strerror or error}); "
            "set DAGTOOLS_STATE_DIR to a folder you can write, or pass --store."
        ) from None
    return f"sqlite:///{folder / 'shell-sessions.sqlite3'}"


def history_path() -> Path:
    return default_state_dir() / "shell-history"


def session_key(name: str) -> str:
    """The store key of a named shell session (apart from the MCP server's unguessable keys in a shared store)."""
    if not _SESSION_NAME.match(name):
        raise ConfigError(f"--session {name!r}: a session name is letters, digits, '.', '_' and '-' (at most 128), such as work-1.")
    return f"shell:{name}"
