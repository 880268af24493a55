"""The session: one model's view of one API. Registry of objects, active toolset, meta-tools,
inputs, declared outputs, long values and the conversation context, composed over toolsets."""

from ._context import Context, Message
from ._open import open_session
from ._outputs import Output
from ._registry import ObjectEntry, Registry
from ._session import Session

__all__ = ["Context", "Message", "ObjectEntry", "Output", "Registry", "Session", "open_session"]
