"""What one MCP call may send, and what one session may hold: checked before a call runs.

A session keeps what its calls sent and got back (the context, the objects, long values to read
on), so a client sending large arguments over and over would grow one session without bound. Two
limits stop that, each refused with a message that names it and changes nothing:
- `max_argument_bytes`: the JSON of one call's arguments;
- `max_session_bytes`: what one session's calls have sent and got back, added up.
"""

from __future__ import annotations

import json
from typing import Any

from ._config import McpConfig

__all__ = ["argument_bytes", "refusal"]


def argument_bytes(arguments: Any) -> int:
    return len(json.dumps(arguments, ensure_ascii=False, default=str).encode())


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
