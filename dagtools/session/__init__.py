"""The session: one model's view of one API. Registry of objects, active toolset, meta-tools,
inputs, declared outputs, long values and the conversation context, composed over toolsets. The
stores a session can live in are in `dagtools.stores`, the registry in `dagtools.registry`; their
names are re-exported here, where they used to be."""

from ..registry import ObjectEntry, Registry
from ..stores import MemoryStore, SessionStore, StoreBusyError, StoreConflictError, open_store
from ._context import Context, Message
from ._open import open_session
from ._outputs import Output
from ._session import Session
from ._state import SessionState

__all__ = [
    "Context",
    "MemoryStore",
    "Message",
    "ObjectEntry",
    "Output",
    "Registry",
    "Session",
    "SessionState",
    "SessionStore",
    "StoreBusyError",
    "StoreConflictError",
    "open_session",
    "open_store",
]
