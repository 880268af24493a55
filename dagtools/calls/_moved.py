"""What the model is told when an object is no longer where it was found.

A handle without identity reaches its object through the chain that found it (calls/_keys.py). When
the list behind the chain has changed, the end of the chain holds another object (its key differs)
or nothing at all (a null on the way). Either way the call is refused with what happened and what the
model can do, and nothing of the other object is shown.
"""

from __future__ import annotations

from typing import Any

from .._values import value_problem
from ..registry._registry import ObjectEntry
from ._keys import Key, describe_key, key_value

__all__ = ["dotted", "moved", "unreachable"]


def moved(expression: str, holder: ObjectEntry | None, found: Any, keys: Key) -> str | None:
    """Why an answer is not about `holder`: what sits at the end of its chain (`found`) has another
    key. None when it has the holder's key, or when nothing sits there (see `unreachable`)."""
    if holder is None or not isinstance(found, dict):
        return None
    if all(_same(found.get(name), value) for name, value in keys):
        return None
    return (
        f"{expression} was not read: {holder.id} is no longer where it was found ({holder.expression} now holds "
        f"another {holder.type_name}; {holder.id} is the one with {describe_key(holder.key)}). Nothing was read of the "
        f"other one. Repeat the call that found {holder.id} to get the current IDs, or go on with the values it showed."
    )


def _same(answered: Any, held: Any) -> bool:
    """Whether a key value just answered is the one held. The answer is the API's: a value that is not
    plain JSON (nested past any bound) is another value, never a crash."""
    if isinstance(answered, (dict, list)) and value_problem(answered) is not None:
        return False
    return bool(key_value(answered) == held)


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
