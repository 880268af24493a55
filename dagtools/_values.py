"""JSON values that every layer can carry: checked once, where they enter, so nothing later raises.

A value from the model (arguments) or from the API (an answer) is walked once, without recursion,
before anything uses it. What is refused is what would make a later step raise instead of answer:
nesting deeper than `MAX_DEPTH` (Python's own recursion limit is near 1,000, and freezing, printing or
coercing a value recurses), integers longer than `MAX_INT_DIGITS` (Python refuses to print integers
of more than 4,300 digits), NaN and infinities (JSON has no such numbers), strings holding a lone
surrogate (they cannot be encoded as UTF-8, so they cannot be sent or shown), keys that are not
strings, and Python objects that are not JSON at all.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "argument_problem", "json_size", "value_problem"]

#: How deep lists and objects may nest in one value; real arguments and answers stay far below it.
MAX_DEPTH = 64
#: Integers longer than this are refused: no GraphQL API reads them as numbers.
MAX_INT_DIGITS = 1000
_MAX_BITS = int(MAX_INT_DIGITS * math.log2(10))


def value_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why `value` cannot travel as JSON, as the end of a sentence ("nests deeper than ..."), or None."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or item is True or item is False:
            continue
        kind = type(item)
        if kind is str:
            problem = _text_problem(item)
            if problem:
                return problem
        elif kind is int:
            if item.bit_length() > _MAX_BITS:
                return f"holds an integer of more than {MAX_INT_DIGITS} digits; long numbers travel as strings"
        elif kind is float:
            if not math.isfinite(item):
                return f"holds {item!r}, which is not a JSON number"
        elif isinstance(item, (dict, list, tuple)):
            if depth >= max_depth:
                return f"nests deeper than {max_depth} levels"
            if isinstance(item, dict):
                for key, inner in item.items():
                    if not isinstance(key, str):
                        return f"has a key that is not a string ({type(key).__name__})"
                    problem = _text_problem(key)
                    if problem:
                        return problem
                    stack.append((inner, depth + 1))
            else:
                stack.extend((inner, depth + 1) for inner in item)
        elif isinstance(item, (str, int, float)):  # subclasses (enums, Ref): check them as their base value
            stack.append(((str if isinstance(item, str) else float if isinstance(item, float) else int)(item), depth))
        else:
            return f"holds a {kind.__name__}, which is not a JSON value"
    return None


def argument_problem(arguments: dict[str, Any]) -> str | None:
    """`value_problem` for a model's arguments, naming the parameter at fault."""
    for name, value in arguments.items():
        problem = value_problem({name: value}) if isinstance(name, str) else None
        if problem is None and not isinstance(name, str):
            problem = f"has a key that is not a string ({type(name).__name__})"
        if problem is not None:
            shown = repr(name)[:80] if isinstance(name, str) else "a parameter"
            return f"are unusable: {shown} {problem}"
    return None


def _text_problem(text: str) -> str | None:
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"holds a lone surrogate ({text[error.start]!r}) at character {error.start}, which is not valid Unicode"
    return None


def json_size(value: Any) -> int:
    """Bytes of `value` as JSON text; for a value the encoder refuses (nested past its recursion, an
    integer of thousands of digits: a hostile argument) about as many, counted by a walk without recursion."""
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str).encode(errors="replace"))
    except (RecursionError, ValueError):
        pass
    size, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            size += 2 + sum(len(str(k).encode(errors="replace")) + 4 for k in item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            size += 2 + len(item)
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            size += int(item.bit_length() * math.log10(2)) + 2
        else:
            size += len(str(item).encode(errors="replace"))
    return size
