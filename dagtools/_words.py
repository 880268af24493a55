"""How a count reads in a message: "1 tool", "2 tools", never "1 tools"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str = "") -> str:
    """`count` and the noun that agrees with it; `plural` for a noun that does not just take an s."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
