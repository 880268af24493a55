"""One lookup for several keys: a root read given a list where its argument takes one value
(`Query_employer(id: ["1", "2", "100"])`) reads each, as GraphQL aliases would: one request for
every EACH_REQUEST values.

Where no call lists a kind of object (an API with `employer(id:)` and no list of agencies), a model
looks each one up; one call a key made a dozen calls of what a raw query does in one. The call is
each key's own call, prepared and checked as it would be alone (a bad key is that key's error and
changes nothing), and the answers come back keyed by the value asked; the values that found nothing
are said once, in the note, a run of whole numbers as a range (a model that probes ids 11 to 200
for the one agency reads one line, not 190 nulls twice):

    {"result": {"1": "Company#1", "100": "Agency#1"},
     "preview": {"Company#1": {...}, "Agency#1": {...}}, "note": "null: nothing at id 2-99."}

Only a read of a root field, one argument given as a list of at most MAX_EACH values where the
schema takes one value; anything else is the call it always was.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from graphql import get_named_type, get_nullable_type, is_leaf_type, is_list_type

from .._errors import ToolCallError
from .._tools import Tool
from ..catalogue._catalogue import Catalogue
from ..catalogue._json_schema import is_required

__all__ = ["EACH_REQUEST", "MAX_EACH", "Lookup", "each_key", "each_lookup", "merge_each", "only_by", "takes_each"]

#: Values one call may look up, and values one request reads (a server may bound a document's
#: aliases or its cost; fifty lookups stay well inside the usual bounds).
MAX_EACH = 200
EACH_REQUEST = 50


def each_key(catalogue: Catalogue, tool: Tool, arguments: dict[str, Any]) -> tuple[str, list[Any]] | None:
    """The argument given several values and the values, where `arguments` asks for a lookup per
    value (see the module's docstring); None for any other call. Too many values is an error."""
    if not tool.read_only:
        return None
    listed = [name for name, value in arguments.items() if isinstance(value, list) and takes_each(catalogue, tool.name, name)]
    if len(listed) != 1:
        return None
    name = listed[0]
    values = arguments[name]
    if not values or any(isinstance(v, (list, dict)) for v in values):
        return None
    if len(values) > MAX_EACH:
        raise ToolCallError(f"{tool.name} looks up at most {MAX_EACH} values of {name} in one call; {len(values)} were given. Split them.")
    return name, list(dict.fromkeys(values))


def takes_each(catalogue: Catalogue, tool: str, argument: str) -> bool:
    """Whether `tool` reads one object a value of `argument` and so takes a list of them: a root
    field's argument that takes one value (the search says so where no call lists a kind of object)."""
    if tool not in catalogue:
        return False
    ref = catalogue.ref(tool)
    args = catalogue.field(ref).args
    if not catalogue.is_root(ref.type_name) or ref.type_name == catalogue.mutation_type or argument not in args:
        return False
    taken = get_nullable_type(args[argument].type)
    return is_leaf_type(taken) and not is_list_type(taken)


class Lookup(NamedTuple):
    """The root lookup that reads several objects of a type no tool lists: `tool` given a list of
    `key`; `only` where no other tool gives one (no field of another object reaches them either)."""

    tool: str
    key: str
    only: bool


def each_lookup(catalogue: Catalogue, type_name: str) -> Lookup | None:
    """The root lookup that reads several `type_name` objects in one call, given a list, where no
    tool lists them (`Query_employer` by `id` for an Agency); None where a tool lists them or no root
    lookup reads them by a key. A key is the lookup's one required argument, an ID or named as a field
    of the type (`id`, `slug`): `slowRepository(seconds!)` reads a repository, by no key."""
    from ._connections import listed_types

    if type_name in listed_types(catalogue) or catalogue.is_root(type_name):
        return None
    fields = getattr(catalogue.schema.get_type(type_name), "fields", {})
    makers = catalogue.makers(type_name)
    for tool in makers:
        arguments = catalogue.field(catalogue.ref(tool)).args
        required = [n for n, a in arguments.items() if is_required(a)]
        if len(required) != 1 or not takes_each(catalogue, tool, key := required[0]):
            continue
        if key in fields or get_named_type(arguments[key].type).name == "ID":
            return Lookup(tool, key, makers == [tool])
    return None


def only_by(catalogue: Catalogue, tool: str, name: str) -> list[str]:
    """The types `tool` gives that no tool lists and no other tool gives: a model reads them only by
    guessing keys (`Agency`, for `Query_employer` on an API with no list of agencies)."""
    from ..catalogue._reach import concrete_types

    return [t for t in concrete_types(catalogue.schema, catalogue.target(tool)) if each_lookup(catalogue, t) == Lookup(tool, name, True)]


def merge_each(name: str, values: list[Any], answers: list[Any], sought: Sequence[str] = ()) -> dict[str, Any]:
    """Each value's answer (a result or its ToolCallError) as one result keyed by the value asked.
    `sought`: the types only this lookup reads (`only_by`); where no answer is one of them, the note
    says they are found by no other way, so a model tries other keys instead of searching for a list
    (five of six players searched for one after their first ids found no agency)."""
    result: dict[str, Any] = {}
    preview: dict[str, Any] = {}
    empty: list[str] = []
    notes: list[str] = []
    for value, answer in zip(values, answers):
        key = value if isinstance(value, str) else json.dumps(value)
        if isinstance(answer, ToolCallError):
            result[key] = f"error: {answer}"
            continue
        got = answer.get("result")
        if got is None:
            empty.append(key)
            continue
        result[key] = got
        shown = answer.get("preview")
        if isinstance(got, str) and isinstance(shown, dict):
            preview[got] = shown
        elif shown:
            preview[key] = shown
        note = answer.get("note")
        if note and note not in notes:
            notes.append(note)
    out: dict[str, Any] = {"result": result}
    if preview:
        out["preview"] = preview
    if empty:
        notes.insert(0, f"null: nothing at {name} {', '.join(_runs(empty))}.")
    found = {got.split("#", 1)[0] for got in result.values() if isinstance(got, str) and "#" in got and not got.startswith("error: ")}
    unmet = [t for t in sought if t not in found]
    if unmet:
        kinds = " or ".join(unmet)
        notes.append(f"None is {_a(kinds)}: no tool lists {kinds} objects or their {name}s; look up other {name}s to find them.")
    if notes:
        out["note"] = " ".join(notes)
    return out


def _runs(keys: list[str]) -> list[str]:
    """The keys in the order asked, three or more whole numbers counting up by one as `first-last`."""
    out: list[str] = []
    run: list[int] = []

    def close() -> None:
        out.extend([f"{run[0]}-{run[-1]}"] if len(run) >= 3 else [str(n) for n in run])
        run.clear()

    for key in keys:
        number = int(key) if key.isdigit() and str(int(key)) == key else None
        if number is not None and run and number == run[-1] + 1:
            run.append(number)
            continue
        close()
        if number is None:
            out.append(key)
        else:
            run.append(number)
    close()
    return out


def _a(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word
