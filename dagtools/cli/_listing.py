"""The catalogue as `dagtools tools` lists it for a person: one signature a tool, grouped by type.

    Potato_slice(Potato?: Potato#N, shape: STICKS|SLICES) -> Potato: Retrieves this potato cut into pieces.

The signature says what a call takes and gives, in the words the model sees: the object parameter
(optional, the most recent object of its type by default), each argument with `?` when it may be left
out, `Type#N` where the argument takes an object, an enum's values, a default after `=`; then the
type the field returns and the first line of its description. The JSON a provider gets, and its size,
are for `--json` and `--sizes`.

A GitHub-sized catalogue (thousands of tools) is not printed whole unless asked (`--all`): the root
types' tools are, since every task starts there (unless a root has more than `_ROOT_IN_FULL`), and
every other type is named with its count of tools, most first, with how to narrow: `--type NAME` for
one type's signatures, `--search WORDS`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from graphql import GraphQLEnumType, GraphQLList, GraphQLNonNull, Undefined

from .._errors import ConfigError
from .._words import counted

if TYPE_CHECKING:
    from ..catalogue._catalogue import Catalogue

__all__ = ["LISTED_WHOLE", "list_signatures", "signature", "types_named"]

#: Up to this many tools the whole catalogue is listed; above it, the root types and a count per type.
LISTED_WHOLE = 300
#: A root type with at most this many tools is listed in full in a large catalogue (every task starts
#: there); one with more is named first among the others.
_ROOT_IN_FULL = 50
#: The other types named (with their counts) when a catalogue is not listed whole; the rest are counted.
_TYPES_NAMED = 40
#: The width the list of other types is wrapped to.
_WIDTH = 100
#: An enum with more values than this is named by its type instead of spelled out.
_ENUM_VALUES = 6
#: A description's first line is cut here (with an ellipsis).
_DESCRIPTION = 100


def signature(catalogue: Catalogue, name: str) -> str:
    """`Type_field(object?: Type#N, argument: type, ...) -> Returned: first line of the description`."""
    ref = catalogue.ref(name)
    field = catalogue.field(ref)
    parameters = []
    own = catalogue.object_parameter(ref)
    if own is not None:
        parameters.append(f"{own}?: {ref.type_name}#N")
    for arg_name, arg in catalogue.arguments(ref).items():
        optional = not isinstance(arg.type, GraphQLNonNull) or arg.default_value is not Undefined
        target = catalogue.dialect.object_argument(arg, arg_name)
        text = f"{arg_name}{'?' if optional else ''}: {_type_text(arg.type, target)}"
        if arg.default_value is not Undefined and arg.default_value is not None:
            text += f" = {_default_text(arg.default_value)}"
        parameters.append(text)
    line = f"{name}({', '.join(parameters)}) -> {_type_text(field.type, None)}"
    description = _first_line(field.description or "")
    return f"{line}: {description}" if description else line


def types_named(catalogue: Catalogue, wanted: Sequence[str]) -> list[str]:
    """The catalogue's types for `--type` (by name or tool prefix, any case); an unknown one is an error
    naming the closest types."""
    import difflib

    types = catalogue.types()
    by_lower = {t.lower(): t for t in types} | {catalogue.prefix(t).lower(): t for t in types}
    found = []
    for name in wanted:
        match = by_lower.get(name.strip().lower())
        if match is None:
            close = difflib.get_close_matches(name.strip().lower(), list(by_lower), n=3, cutoff=0.6)
            hint = f" Did you mean {', '.join(by_lower[c] for c in close)}?" if close else ""
            raise ConfigError(
                f"--type {name}: no type of this API has tools.{hint} "
                "dagtools tools SOURCE names every type with tools; --search WORDS finds tools by what they do."
            )
        found.append(match)
    return list(dict.fromkeys(found))


def list_signatures(catalogue: Catalogue, *, types: Sequence[str] = (), whole: bool = False, start: str = "") -> list[str]:
    """The lines `dagtools tools` prints: a header, then each type's tools as signatures. `types` lists
    only those; `whole` lists every type even when the catalogue is large; `start` says what a model
    starts with."""
    chosen = list(types) or _ordered_types(catalogue)
    large = not types and not whole and len(catalogue) > LISTED_WHOLE
    shown = [t for t in chosen if catalogue.is_root(t) and len(catalogue.tools_for_type(t)) <= _ROOT_IN_FULL] if large else chosen
    lines = []
    if types:
        count = sum(len(catalogue.tools_for_type(t)) for t in chosen)
        lines.append(f"{counted(count, 'tool')} of {counted(len(catalogue), 'tool')} in the catalogue, on {', '.join(chosen)}.")
    else:
        lines.append(f"{counted(len(catalogue), 'tool')} in the catalogue, on {counted(len(chosen), 'type')}{start}.")
    for type_name in shown:
        lines.extend(_type_block(catalogue, type_name))
    if large:
        rest = sorted((t for t in chosen if t not in shown), key=lambda t: (not catalogue.is_root(t), -len(catalogue.tools_for_type(t)), t))
        named = [f"{t} ({len(catalogue.tools_for_type(t))})" for t in rest[:_TYPES_NAMED]]
        if len(rest) > _TYPES_NAMED:
            named.append(f"and {counted(len(rest) - _TYPES_NAMED, 'more type', 'more types')}")
        lines += ["", f"{'Other types' if shown else 'Types'}, with their count of tools, most first:", *_wrapped(named)]
        lines.append(
            f"{counted(len(catalogue), 'tool')} are too many to list here: narrow with --type NAME (repeatable) "
            "or --search WORDS; --all lists every signature."
        )
    return lines


def _wrapped(items: list[str]) -> list[str]:
    """Items joined by commas into indented lines of at most `_WIDTH`, never breaking one item."""
    lines: list[str] = []
    line = ""
    for index, item in enumerate(items):
        item += "." if index == len(items) - 1 else ","
        if line and len(line) + 1 + len(item) > _WIDTH:
            lines.append(line)
            line = ""
        line = f"{line} {item}" if line else f"  {item}"
    return [*lines, line] if line else lines


def _ordered_types(catalogue: Catalogue) -> list[str]:
    types = [t for t in catalogue.types() if catalogue.tools_for_type(t)]
    roots = [t for t in (catalogue.query_type, catalogue.mutation_type) if t in types]
    return roots + sorted(t for t in types if t not in roots)


def _type_block(catalogue: Catalogue, type_name: str) -> list[str]:
    names = catalogue.tools_for_type(type_name)
    lines = ["", f"{type_name} ({counted(len(names), 'tool')})"]
    lines.extend(f"  {signature(catalogue, name)}" for name in names)
    return lines


def _type_text(type_: Any, target: str | None) -> str:
    if isinstance(type_, GraphQLNonNull):
        return _type_text(type_.of_type, target)
    if isinstance(type_, GraphQLList):
        return f"[{_type_text(type_.of_type, target)}]"
    if target is not None:
        return "Type#N" if target == "*" else f"{target}#N"
    if isinstance(type_, GraphQLEnumType) and len(type_.values) <= _ENUM_VALUES:
        return "|".join(type_.values)
    return str(type_.name)


def _default_text(value: Any) -> str:
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict, list)):
        value = list(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        return str(value)


def _first_line(text: str) -> str:
    line = next((part.strip() for part in text.strip().splitlines() if part.strip()), "")
    return line if len(line) <= _DESCRIPTION else line[: _DESCRIPTION - 1].rstrip() + "…"
