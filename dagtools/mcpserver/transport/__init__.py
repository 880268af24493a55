"""How clients reach `dagtools mcp` over HTTP and what a call may carry: the HTTP app behind its gate,
handshake-era sessions that never came back, bounded connections, per-request forwarded headers, and
the limits checked before a call runs."""

import typing as _typing

from ..._lazy import lazy_exports as _lazy_exports
from ._app import build_http_app
from ._forwarding import UpstreamClient, forwarded_headers, request_headers, use_forwarded
from ._limits import argument_bytes, invalid_text, mark_invalid_text, refusal

# Imported on first use: the guarded connections are uvicorn's protocol, needed only to serve HTTP.
__getattr__, __dir__ = _lazy_exports(__name__, {"guarded_protocol": "._connections"})

if _typing.TYPE_CHECKING:
    from ._connections import guarded_protocol

__all__ = [
    "UpstreamClient",
    "argument_bytes",
    "build_http_app",
    "forwarded_headers",
    "guarded_protocol",
    "invalid_text",
    "mark_invalid_text",
    "refusal",
    "request_headers",
    "use_forwarded",
]
