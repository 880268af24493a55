"""Where sessions live between calls: one small async interface (`SessionStore`) and its memory,
SQLite and Redis implementations, chosen by URL with `open_store`. A store keeps bytes under a key
and knows nothing of what a session holds."""

from ._open import open_store
from ._store import MemoryStore, SessionStore, StoreBusyError, StoreConflictError

__all__ = ["MemoryStore", "SessionStore", "StoreBusyError", "StoreConflictError", "open_store"]
