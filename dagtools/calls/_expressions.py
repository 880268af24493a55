"""How a call is written back to the model: the expression that made an object, the hint for a
connection's next page, and the words for an answer the schema does not allow.

Expressions are repeated in results, errors and the list of objects, so they are kept short.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ._arguments import Ref

__all__ = ["expression_of", "next_page", "nonsense"]


def nonsense(expression: str, problem: str) -> str:
    """An answer the schema does not allow: the API is at fault, and nothing was made of it."""
    return (
        f"The API answered {expression} with something its schema does not allow: {problem}. Nothing was created; "
        "try again later, or go on with the objects you have."
    )


def next_page(tool_name: str, shown: dict[str, Any]) -> Callable[[str], str]:
    def hint(cursor: str) -> str:
        arguments = {k: v for k, v in shown.items() if k != "after"} | {"after": cursor}
        return f"For the next page call {tool_name} with {json.dumps(arguments, ensure_ascii=False)}"

    return hint


def expression_of(parent: str | None, field: str, shown: dict[str, Any]) -> str:
    """How an object came to be, as the model would write it: `Potato#1.rinse(sink: Sink#1)`.

    A long argument is shown by its start: the expression is repeated in results, errors and the
    list of objects, and a model's megabyte argument must not be echoed back to it each time."""
    args = ", ".join(f"{k}: {_shorten(_literal(v))}" for k, v in shown.items())
    call = f"{field}({args})" if args else field
    return f"{parent}.{call}" if parent else call


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def _literal(value: Any) -> str:
    if isinstance(value, Ref):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_literal(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)
