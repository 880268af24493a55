"""Every exception dagtools raises, in one tree.

    DagtoolsError
    ├── SchemaLoadError        a source could not be read or built into a schema
    ├── CatalogueError         a tool name or type the catalogue does not have
    ├── ConfigError            a host's options, inputs, outputs or script are wrong
    ├── ExecutorError          the API could not be reached or answered nonsense
    │   ├── TransportError     connection refused, reset, timed out
    │   └── HttpStatusError    a non-2xx answer
    ├── ModelError             a model adapter failed (bad key, refusal, protocol)
    └── ToolCallError          something the model did wrong; never escapes a Session

Only developer and infrastructure failures raise. `ToolCallError` is the one exception the model can
cause: the session catches it and turns it into an error result whose message says what to do next.
"""

from __future__ import annotations

from ._limits import cap_text

__all__ = [
    "CatalogueError",
    "ConfigError",
    "DagtoolsError",
    "ExecutorError",
    "HttpStatusError",
    "ModelError",
    "SchemaLoadError",
    "ToolCallError",
    "TransportError",
]


class DagtoolsError(Exception):
    """Base of every error dagtools raises."""


class SchemaLoadError(DagtoolsError):
    """A schema source could not be read, parsed or built."""


class CatalogueError(DagtoolsError):
    """A lookup in the catalogue named something it does not have."""


class ConfigError(DagtoolsError):
    """The host's configuration (inputs, outputs, options, scripts) is invalid."""


class ExecutorError(DagtoolsError):
    """The API could not be reached, or its answer could not be understood."""

    def failed_call(self, expression: str) -> str:
        """What the model is told of a call that failed this way, and what it can do next."""
        advice = "try again later, or go on with the objects you have."
        return f"The API could not be reached for {expression}: {self} Nothing was created; {advice}"


class TransportError(ExecutorError):
    """The request never got an answer: refused, reset or timed out."""


class HttpStatusError(ExecutorError):
    """The API answered with a non-success HTTP status."""

    def __init__(self, message: str, *, status_code: int, body: str = "") -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body


class ModelError(DagtoolsError):
    """A model adapter failed: bad credentials, refusal, or a malformed answer."""


class ToolCallError(DagtoolsError):
    """A mistake the model made in a tool call. The message tells it what to do next.

    The message is cut to a few KB (with a note): it may quote an API's error text or echo an argument,
    and either can be megabytes long."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(cap_text(str(message)), *args)
