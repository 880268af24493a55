"""Every exception dagtools raises, in one tree.

    DagtoolsError
    ├── SchemaLoadError        a source could not be read or built into a schema
    ├── CatalogueError         a tool name or type the catalogue does not have
    ├── ConfigError            a host's options, inputs, outputs or script are wrong
    │   ├── ClosedError        a session, executor or model used after it was closed
    │   └── SessionsFull       the MCP server holds as many sessions as it may (internal: answered as HTTP 503)
    ├── ExecutorError          the API could not be reached or answered nonsense
    │   ├── TransportError     connection refused, reset, timed out
    │   ├── HttpStatusError    a non-2xx answer
    │   └── NoServerError      only a schema was given: there is no API to send calls to
    ├── StoreConflictError     a store save lost a race: someone else wrote the session first
    ├── StoreBusyError         a stored session stayed locked by another process too long
    ├── ModelError             a model adapter failed (bad key, refusal, protocol)
    └── ToolCallError          something the model did wrong; never escapes a Session

Two families, as in pydantic-ai's `ModelRetry` and the rest. `ToolCallError` is the one exception the
model can cause (and the one a host's own tool raises to tell the model it got something wrong): the
session turns it into an error result whose message says what to do next, as it does an
`ExecutorError` met while running a call (the API is down: the model can wait or route around it).
Everything else is a developer's or the infrastructure's failure and raises to the host: any other
exception a host's tool raises (a `KeyError`, say) is the host's bug, logged with its traceback and
raised, never shown to the model as its own mistake (see session/_toolsets.py).
"""

from __future__ import annotations

import math

from ._limits import cap_text

__all__ = [
    "install_command",
    "CatalogueError",
    "ClosedError",
    "ConfigError",
    "DagtoolsError",
    "ExecutorError",
    "HttpStatusError",
    "ModelError",
    "NoServerError",
    "SchemaLoadError",
    "SessionsFull",
    "StoreBusyError",
    "StoreConflictError",
    "StoreError",
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


class ClosedError(ConfigError):
    """Something was used after it was closed: open a new one (the message says how)."""


class SessionsFull(ConfigError):
    """No room for a new MCP session now; `retry_after` is when, in seconds, there may be."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(1, math.ceil(retry_after))


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


class NoServerError(ExecutorError):
    """There is no server behind the schema: unlike an API that is down, waiting or retrying never helps."""

    def failed_call(self, expression: str) -> str:
        return f"{expression} did not run: {self} Nothing was created; tell the user."


class StoreError(ExecutorError):
    """The session store failed (a Redis server down, a full disk): the API is not to blame. `ran` says
    whether the call had run before its save failed, so a write may have happened."""

    def __init__(self, message: str, *, ran: bool = False) -> None:
        super().__init__(message)
        self.ran = ran

    def failed_call(self, expression: str) -> str:
        if self.ran:
            return (
                f"{expression} ran, but the session could not be saved: {self} What it made is not kept; "
                "if it was a write, check what the API holds before doing it again."
            )
        return f"{expression} did not run: {self} Nothing was run; try again in a moment, or tell the user if it keeps failing."


class StoreConflictError(DagtoolsError):
    """A save named a version that is no longer the stored one: someone else wrote the session first."""


class StoreBusyError(DagtoolsError):
    """A key stayed locked by another process for longer than the store waits."""


class ModelError(DagtoolsError):
    """A model adapter failed: bad credentials, refusal, or a malformed answer."""


class ToolCallError(DagtoolsError):
    """A mistake the model made in a tool call. The message tells it what to do next.

    The message is cut to a few KB (with a note): it may quote an API's error text or echo an argument,
    and either can be megabytes long."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(cap_text(str(message)), *args)


def install_command(extra: str, direct_url: str | None = None) -> str:
    """The pip command that adds `extra` to this install, for the message of a missing optional package.
    Installed from a checkout (`pip install -e .` in a clone, as the README has it), that checkout again;
    else the published distribution. `direct_url` is the install's PEP 610 record, read when not given."""
    import json
    import shlex
    from urllib.parse import unquote, urlsplit

    if direct_url is None:  # the installed one: a checkout's own dagtools_graphql.egg-info, on the path first, has no record
        from importlib.metadata import distributions

        direct_url = next(filter(None, (d.read_text("direct_url.json") for d in distributions(name="dagtools-graphql"))), None)
    try:
        record = json.loads(direct_url) if direct_url else {}
    except ValueError:
        record = {}
    url = record.get("url", "") if isinstance(record, dict) else ""
    if url.startswith("file://") and isinstance(record.get("dir_info"), dict):
        editable = "-e " if record["dir_info"].get("editable") else ""
        return f"pip install {editable}{shlex.quote(unquote(urlsplit(url).path) + f'[{extra}]')}"
    return f"pip install 'dagtools-graphql[{extra}]'"
