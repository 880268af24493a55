"""What one MCP call may send, and what one session may hold: checked before a call runs.

A session keeps what its calls sent and got back (the context, the objects, long values to read
on), so a client sending large arguments over and over would grow one session without bound. Two
limits stop that, each refused with a message that names it and changes nothing:
- `max_argument_bytes`: the JSON of one call's arguments;
- `max_session_bytes`: what one session's calls have sent and got back, added up (`Session.held_bytes`,
  counted in each call's turn and kept with the session in a store, so it holds across restarts too).

Text that is not valid Unicode (a lone UTF-16 surrogate such as `"\\ud800"`, which JSON can spell
but UTF-8 cannot) is refused the same way, in either protocol era. The SDK parses a handshake-era
message with a parser that rejects such text outright (a parse error the client cannot tie to its
call), so the transports read each `tools/call` first (`mark_invalid_text`): its unpaired halves become
U+FFFD and the call is marked under `_meta["dagtools/invalid-text"]`, which `invalid_text` refuses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..._values import json_size
from .._config import McpConfig

__all__ = ["INVALID_TEXT_META", "argument_bytes", "invalid_text", "mark_invalid_text", "refusal"]

#: Where a transport marks a call whose text held lone surrogates: the places they were, as paths.
INVALID_TEXT_META = "dagtools/invalid-text"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: A JSON escape of a surrogate half (paired or not): the only way one reaches a parsed message.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SHOWN = 4


def argument_bytes(arguments: Any) -> int:
    return json_size(arguments)  # a client's arguments may nest past the JSON encoder's recursion


def invalid_text(name: str, arguments: Any, meta: Mapping[str, Any] | None) -> str | None:
    """Why a call whose name or arguments are not valid Unicode may not run, or None."""
    places = list((meta or {}).get(INVALID_TEXT_META) or ()) if isinstance(meta, Mapping) else []
    if _SURROGATE.search(name):
        places.append("the tool name")
    places += _surrogates(arguments, "arguments")
    if not places:
        return None
    where = ", ".join(str(p) for p in places[:_SHOWN]) + (f" and {len(places) - _SHOWN} more" if len(places) > _SHOWN else "")
    return (
        f"This call's text is not valid Unicode: {where} holds a lone UTF-16 surrogate (such as \\ud800), half of a "
        "pair whose other half is missing. Nothing was run: send the text as valid UTF-8, with each surrogate pair "
        "whole or the broken character left out (a U+FFFD replacement character is fine)."
    )


def mark_invalid_text(raw: bytes) -> bytes | None:
    """A `tools/call` message whose text holds lone surrogates, rewritten so any JSON parser takes it:
    each surrogate becomes U+FFFD and the call is marked for `invalid_text` to refuse. None for any other
    message (left as it came)."""
    if not _SURROGATE_ESCAPE.search(raw):
        return None
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call" or not isinstance(message.get("params"), dict):
        return None
    params = message["params"]
    places = _surrogates(params.get("name"), "the tool name") + _surrogates(params.get("arguments"), "arguments")
    if not places:
        return None
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    message["params"] = {**_replaced(params), "_meta": {**_replaced(meta), INVALID_TEXT_META: places[:64]}}
    return json.dumps(message).encode()  # any surrogate left (outside the call) is escaped, as it came


def _surrogates(value: Any, path: str) -> list[str]:
    """Where in `value` (keys and strings, at any depth) a surrogate stands."""
    if isinstance(value, str):
        return [path] if _SURROGATE.search(value) else []
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            label = _SURROGATE.sub("\ufffd", key) if isinstance(key, str) else str(key)
            if isinstance(key, str) and _SURROGATE.search(key):
                found.append(f"the name of {path}.{label}")
            found += _surrogates(item, f"{path}.{label}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _surrogates(item, f"{path}[{index}]")
    return found


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replaced(k): _replaced(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v) for v in value]
    return value


def refusal(config: McpConfig, held: int, size: int) -> str | None:
    """Why a call whose arguments take `size` bytes may not run in a session holding `held`, or None."""
    if size > config.max_argument_bytes:
        return (
            f"This call's arguments take {size:,} bytes; one call may send at most {config.max_argument_bytes:,} "
            "(max_argument_bytes). Nothing was run: send a smaller value."
        )
    if held + size > config.max_session_bytes:
        return (
            f"This session holds {held / 2**20:.1f} MB of call arguments and results, the most one session may hold is "
            f"{config.max_session_bytes / 2**20:.1f} MB (max_session_bytes). Nothing was run: open a new session to go on."
        )
    return None
