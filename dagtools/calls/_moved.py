"""What the model is told when an object is no longer where it was found.

A handle without identity reaches its object through the chain that found it, and a read through the
chain checks that it still ends at the same object (registry/_identity.py). When the list behind the
chain has changed, the end of the chain holds another object (its key differs) or nothing at all (a
null on the way). Either way the call is refused with what happened and what the model can do, and
nothing of the other object is shown.
"""

from __future__ import annotations

import json

from ..registry._handles import thaw
from ..registry._identity import DIGEST, Key
from ..registry._registry import ObjectEntry

__all__ = ["describe_key", "dotted", "moved", "unreachable"]


def moved(expression: str, holder: ObjectEntry) -> str:
    """Why an answer is not about `holder`: what sits at the end of its chain has another key."""
    return (
        f"{expression} was not read: {holder.id} is no longer where it was found ({holder.expression} now holds "
        f"another {holder.type_name}; {holder.id} is the one with {describe_key(holder.key)}). Nothing was read of the "
        f"other one. Repeat the call that found {holder.id} to get the current IDs, or go on with the values it showed."
    )


def describe_key(key: Key, limit: int = 80) -> str:
    """A key as the model reads it: `startsAt: "10:00", free: true`, each value shown by its start."""
    parts = []
    for name, value in key:
        if isinstance(value, str) and value.startswith(DIGEST) and len(value) == len(DIGEST) + 32:
            parts.append(f"{name}: (a long text)")
            continue
        text = json.dumps(thaw(value), ensure_ascii=False)
        parts.append(f"{name}: {text if len(text) <= limit else text[: limit - 1] + '…'}")
    return ", ".join(parts)


def unreachable(expression: str, holder: ObjectEntry | None, where: str, *, re_rooted: bool) -> str:
    """A null on the way to the field: the object the field is read on is no longer where it was
    found (it moved, left the list, or was deleted), and what the model can do about it."""
    if holder is None:
        return f"{expression} could not be read: the API answered null at {where}, on the way to it. Nothing was read."
    if re_rooted:
        return (
            f"{expression} could not be read: {holder.id} no longer exists at the API (looking it up by its id "
            f"answers null). Nothing was read; go on with other objects, or find it again the way it was found ({holder.expression})."
        )
    return (
        f"{expression} could not be read: {holder.id} is no longer where it was found ({holder.expression}: "
        f"the API now answers null at {where}), so it has moved or is gone. Nothing was read. Repeat the call that "
        f"found {holder.id} to see where things are now, or go on with the values it showed."
    )


def dotted(path: tuple[str | int, ...]) -> str:
    """A path in an answer as the model reads it: `slots[1].room`."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "the root"
