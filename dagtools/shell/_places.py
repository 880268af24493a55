"""Where the shell keeps things between runs: named sessions (a SQLite store by default) and its history,
under the user's state directory."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from .._errors import ConfigError

__all__ = ["default_state_dir", "default_store_url", "history_path", "session_key"]

_SESSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def default_state_dir() -> Path:
    """`DAGTOOLS_STATE_DIR`, else `$XDG_STATE_HOME/dagtools` (`~/.local/state/dagtools`); on macOS and
    Windows, the per-user application data folder, where such state lives there."""
    if os.environ.get("DAGTOOLS_STATE_DIR"):
        return Path(os.environ["DAGTOOLS_STATE_DIR"]).expanduser()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "dagtools"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "dagtools"
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "dagtools"


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
