"""Bodies with bounds: JSON that always encodes, answers read only up to a size limit.

Shared by the GraphQL executor and the tools config's REST calls, the two places dagtools reads what
an untrusted server sends.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from .._errors import ExecutorError
from .._limits import megabytes

__all__ = ["Progress", "encode_json", "read_capped"]

Progress = Callable[[int, "int | None"], None]
"""Called as bytes of an answer arrive: (received so far, Content-Length or None)."""


def encode_json(value: Any) -> bytes:
    """JSON as UTF-8; text that is not valid Unicode (a lone surrogate) travels as `\\u` escapes instead
    of failing the request, and the server decides what to make of it."""
    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True).encode("ascii")


async def read_capped(answer: httpx.Response, limit: int, progress: Progress | None = None, *, who: str = "The API") -> bytearray:
    """The body, read as it streams in and abandoned as soon as it passes `limit` bytes, so a huge
    (or endless) answer costs at most `limit` bytes of memory."""
    length = answer.headers.get("Content-Length")
    total = int(length) if length and length.isdigit() else None
    if total is not None and total > limit:
        raise _too_big(who, limit, f" (it announced {megabytes(total)})")
    content = bytearray()
    async for chunk in answer.aiter_bytes():
        content += chunk
        if len(content) > limit:
            raise _too_big(who, limit, "")
        if progress is not None:
            progress(len(content), total)
    return content


def _too_big(who: str, limit: int, announced: str) -> ExecutorError:
    return ExecutorError(
        f"{who} answered more than the {megabytes(limit)} one answer may take{announced}, so the rest was not read. "
        "Ask for less (fewer fields, a smaller page), or raise the limit (max_response_bytes) if such answers are expected."
    )
