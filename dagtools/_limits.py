"""Bounds on what an untrusted API or model can make dagtools hold or show.

An answer is read only up to `MAX_RESPONSE_BYTES` (a bigger one is refused, not buffered), and a
text that goes back to the model as an error is cut to `MAX_ERROR_CHARS` with a note saying so: an
API can answer a 50 MB error message, and a model can send a 50 MB argument that an error echoes.
"""

from __future__ import annotations

__all__ = ["MAX_ERROR_CHARS", "MAX_RESPONSE_BYTES", "cap_text", "megabytes"]

#: The most bytes of one HTTP answer dagtools reads (HttpExecutor's default `max_response_bytes`).
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
#: The longest error text a model is shown.
MAX_ERROR_CHARS = 4000


def cap_text(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`text`, or its start with a note of how much was left out when it is longer than `limit`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [cut: {len(text) - limit:,} more characters not shown]"


def megabytes(size: int) -> str:
    """A byte count as people read it: `16 MB`, `1.5 MB`."""
    return f"{size / (1024 * 1024):.3g} MB"
