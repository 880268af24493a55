"""Answers that came back in part: each GraphQL error judged by where it happened.

A document reads more than the field the model asked for: the chain leading to it, and below it
what dagtools adds (`__typename`, identity, preview fields, a payload's objects and user errors, the
items of a list). An error's `path` says which part failed, and that decides what the model reads:

- on the asked field, on the chain leading to it, or with no path at all: the call failed, and the
  error says why (as before);
- below the asked field, while the asked value itself came back: the call succeeded in part. The
  failed part is left out (a field is dropped from the object, an item of a list stays null where
  it was), and a note on the result quotes the error, so a `FORBIDDEN` on a preview's `revenue`
  never hides the object, and a list keeps the items the API could read;
- on another branch of the document (another item of a list the chain picks one of): it does not
  touch this answer and is ignored, unless the asked value is missing too: then nothing came back,
  and every error is quoted.

Some servers (Mercurius) write list indexes in a path as strings (`["parks", "2"]`); they are read as
the indexes they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..executors._base import format_error

__all__ = ["failed_call", "leave_out", "partial_note", "shown_error", "sort_errors"]

#: Errors a note quotes, and the characters of each.
QUOTED = 5
MESSAGE_CUT = 200
#: The characters of the error that failed a call: what the API said and what its `extensions` add.
FIRST_CUT = 600

Path = Sequence[str | int]


def sort_errors(errors: Sequence[Any], path: Path) -> tuple[list[Any], list[tuple[list[str | int], Any]], list[Any]]:
    """The errors that fail the call, those below the asked field (with their path below it), and
    those elsewhere in the document, which matter only when the asked value is missing too."""
    failing: list[Any] = []
    below: list[tuple[list[str | int], Any]] = []
    elsewhere: list[Any] = []
    for error in errors:
        where = error.get("path") if isinstance(error, dict) else None
        if type(where) is not list or not where or not all(type(p) in (str, int) for p in where):
            failing.append(error)
            continue
        common = min(len(where), len(path))
        if not all(_same(where[i], path[i]) for i in range(common)):
            elsewhere.append(error)
        elif len(where) <= len(path):
            failing.append(error)
        else:
            below.append((list(where[len(path) :]), error))
    return failing, below, elsewhere


def failed_call(
    expression: str, operation: str, root: tuple[str, str] | None, failing: list[Any], lost: list[Any], elsewhere: list[Any]
) -> str:
    """Why a call failed, in the API's words (`root`: the batch alias and the field it stands for).
    A mutation whose own field answered, but whose payload came back null through an error below
    it (`lost`), did run: the model must not repeat it blind."""
    quoted = (failing + lost + elsewhere)[:QUOTED]  # the first in full (what the API said and added), the rest short
    shown = [shown_error(e, root=root, budget=FIRST_CUT if i == 0 else MESSAGE_CUT).rstrip(". ") for i, e in enumerate(quoted)]
    messages = "; ".join(shown)
    if not failing and lost and operation == "mutation":
        return (
            f"{expression} ran, but the API could not send its result back: {messages}. It may have made its change; "
            "check with a query before calling it again."
        )
    return (
        f"The API returned an error for {expression}: {messages}. Nothing was created; change the arguments or try another object or tool."
    )


def leave_out(value: Any, below: Sequence[tuple[list[str | int], Any]]) -> list[tuple[list[str | int], Any]]:
    """Drop from `value` (the answer as sent, under its aliases, as error paths name it) what each
    error below the asked field nulled: a field is removed from its object, an item of a list stays
    null in its place. Returns where each landed, with its error."""
    return [(_drop(value, rest), error) for rest, error in below]


def _drop(value: Any, rest: list[str | int]) -> list[str | int]:
    """Walk `rest` into `value` to the null the error left (GraphQL nulls the nearest nullable
    parent of a failed field), removing it where it is an object's field."""
    current = value
    walked: list[str | int] = []
    for step in rest:
        if isinstance(current, list):
            index = _index(step)
            if index is None or index >= len(current):
                break
            walked.append(index)
            if current[index] is None:
                break
            current = current[index]
        elif isinstance(current, dict):
            key = str(step)
            walked.append(key)
            if key not in current:
                break
            if current[key] is None:
                del current[key]
                break
            current = current[key]
        else:
            break
    return walked


def partial_note(landed: Sequence[tuple[list[str | int], Any]], renames: Mapping[str, str], *, connection: bool = False) -> str | None:
    """The note on a result that came back in part: what was left out, and why, in the API's words,
    each place named as the model knows it: aliases read back (`renames`), and in a `connection` the
    steps it never sees (`edges`, `node`) left out."""
    if not landed:
        return None
    skip = ("edges", "nodes", "node") if connection else ()
    parts: list[str] = []
    items = False
    for walked, error in landed:
        seen = [renames.get(s, s) if isinstance(s, str) else s for s in walked if s not in skip]
        items = items or bool(seen and isinstance(seen[-1], int))
        place = _place(seen)
        parts.append(f"{place} ({shown_error(error, with_path=False)})" if place else shown_error(error, with_path=False))
    unique = list(dict.fromkeys(parts))
    quoted = "; ".join(unique[:QUOTED]) + (f"; and {len(unique) - QUOTED} more" if len(unique) > QUOTED else "")
    kept = "Items it could not read are null in the list; the rest" if items else "The rest"
    return f"The API could not read all of this answer, so part of it is left out: {quoted}. {kept} is as the API sent it."


def shown_error(error: Any, *, with_path: bool = True, root: tuple[str, str] | None = None, budget: int = MESSAGE_CUT) -> str:
    """One GraphQL error as the model reads it: its message and what `extensions` add, within `budget`, with its code (`FORBIDDEN`)
    when the message does not say it, and (`with_path`) where it happened. `root` renames the
    path's first step, an alias of a batched call, to the field it reads."""
    if isinstance(error, dict):
        where = error.get("path")
        if not with_path:
            error = {k: v for k, v in error.items() if k != "path"}
        elif root is not None and type(where) is list and where and where[0] == root[0]:
            error = {**error, "path": [root[1], *where[1:]]}
    extensions = error.get("extensions") if isinstance(error, dict) else None
    code = extensions.get("code") if isinstance(extensions, dict) else None
    if not (isinstance(code, str) and 0 < len(code) <= 40) or code in str(error.get("message")):
        return format_error(error, budget=budget)
    rest = {k: v for k, v in extensions.items() if k != "code"}  # type: ignore[union-attr]
    return f"{code}: {format_error({**error, 'extensions': rest}, budget=budget - len(code) - 2)}"


def _same(a: str | int, b: str | int) -> bool:
    if a == b:
        return True
    index_a, index_b = _index(a), _index(b)
    return index_a is not None and index_a == index_b and (isinstance(a, int) or isinstance(b, int))


def _index(step: str | int) -> int | None:
    if isinstance(step, int):
        return step if step >= 0 else None
    return int(step) if step.isascii() and step.isdigit() and len(step) < 10 else None


def _place(walked: Sequence[str | int]) -> str:
    """`stats.revenue`, `item 2`, `item 4.species`: where in the result a part is missing."""
    text = ""
    for step in walked:
        if isinstance(step, int):
            text += f"item {step}" if not text else f"[{step}]"
        else:
            text += f".{step}" if text else step
    return text
