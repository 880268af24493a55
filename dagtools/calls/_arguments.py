"""Binding a model's arguments to a field: the object it operates on, object references, and checks.

Every check runs before anything executes, so a call that fails here changes nothing. Values are
checked the way the API will check them (graphql-core's input coercion), and object references
(`"Sink#1"`, or `"1"` where the type is known) become the API's own ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphql import (
    GraphQLArgument,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    get_named_type,
)
from graphql.utilities import validate_input_value

from .._errors import ToolCallError
from .._tools import Tool
from .._values import MAX_DEPTH, argument_problem, value_problem
from ..catalogue._catalogue import Catalogue
from ..catalogue._json_schema import is_required
from ._handles import parse_object_id

if TYPE_CHECKING:  # the session holds these; this layer is given them and never imports it
    from ..session._registry import ObjectEntry, Registry

__all__ = ["Bound", "bind_arguments", "parse_arguments", "resolve_reference", "signature", "value_problems"]


def value_problems(value: Any, type_: Any) -> list[tuple[list[str | int], str]]:
    """What the API would reject in `value` for `type_`: (path, message) pairs, checked by graphql-core."""
    problems: list[tuple[list[str | int], str]] = []
    validate_input_value(value, type_, lambda error, path: problems.append((list(path), getattr(error, "message", str(error)).rstrip("."))))
    return problems


@dataclass(frozen=True, kw_only=True)
class Bound:
    """A call ready to run: the parent object, the values to send, and the values to show."""

    parent: ObjectEntry | None
    values: dict[str, Any]
    shown: dict[str, Any]


class Ref(str):
    """An object ID inside shown arguments, printed bare in expressions."""


def parse_arguments(tool_name: str, raw: dict[str, Any] | str | None) -> dict[str, Any]:
    """The model's arguments as a dict of JSON values that every later step (and the API) can take."""
    if not isinstance(tool_name, str):
        raise ToolCallError(f"A tool name is text, not {type(tool_name).__name__}. selectTools lists the tools you can select.")
    if not tool_name.isascii() and value_problem(tool_name) is not None:  # the name is echoed in every message
        raise ToolCallError(f"There is no tool {ascii(tool_name)}: a tool name is plain text. selectTools lists the tools you can select.")
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as error:
            owner = tool_name.split("_", 1)[0] if "_" in tool_name else ""
            example = f'{{"{owner}": "{owner}#1"}}' if owner and owner not in ("Query", "Mutation") else '{"name": "value"}'
            raise ToolCallError(
                f"The arguments for {tool_name} are not valid JSON ({error.msg} at character {error.pos}). "
                f"Send a JSON object, such as {example}."  # an example of this API, never another's
            ) from None
        except RecursionError:
            raise ToolCallError(
                f"The arguments for {tool_name} nest deeper than {MAX_DEPTH} levels. Send a flat JSON object, such as "
                '{"Potato": "Potato#1"}.'
            ) from None
        except ValueError:  # an integer literal longer than Python reads (sys.get_int_max_str_digits)
            raise ToolCallError(f"The arguments for {tool_name} hold a number too long to read. Send long numbers as strings.") from None
    if not isinstance(raw, dict):
        raise ToolCallError(f"The arguments for {tool_name} must be a JSON object of parameter names to values, not {type(raw).__name__}.")
    problem = None if _plain(raw) else argument_problem(raw)
    if problem is not None:
        raise ToolCallError(f"The arguments for {tool_name} {problem}. Nothing was run; fix that value and call {tool_name} again.")
    return raw


def _plain(arguments: dict[str, Any]) -> bool:
    """Arguments that need no walk: ASCII names and values that are ASCII text, booleans, null or
    short integers (the usual call, `{"Potato": "Potato#1"}`); anything else is walked in full."""
    for name, value in arguments.items():
        kind = type(value)
        if type(name) is not str or not name.isascii():
            return False
        if kind is str:
            if not value.isascii():
                return False
        elif kind is int:
            if not -(2**63) <= value < 2**63:
                return False
        elif value is not None and kind is not bool:
            return False
    return True


def signature(catalogue: Catalogue, tool: Tool) -> str:
    """A one-line reminder of a tool's parameters for error messages."""
    props = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", ()))
    parts = []
    for name, schema in props.items():
        kind = schema.get("type") or "object"
        if "enum" in schema:
            kind = "|".join(schema["enum"][:8])
        parts.append(f"{name}{'' if name in required else '?'}: {kind}")
    return f"{tool.name}({', '.join(parts)})"


def resolve_reference(catalogue: Catalogue, registry: Registry, value: Any, target: str, *, where: str) -> ObjectEntry:
    """The object a reference names, checked against the type the parameter takes."""
    exact = registry.get(value) if isinstance(value, str) else None
    if exact is not None and exact.type_name == target:  # the usual case: an ID as the session wrote it
        return exact
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if not text:
        raise ToolCallError(f'{where} takes an object ID such as "{catalogue.example_id(target)}", not {json.dumps(value)}.')
    parsed = parse_object_id(text)
    number = _bare_number(text) if parsed is None else None
    if number is not None:
        if target == "*" or catalogue.schema.get_type(target) is None or _is_abstract(catalogue, target):
            options = _options(catalogue, registry, target)
            raise ToolCallError(
                f'{where} needs the full object ID, with its type: "{text}" could be {options or "any type"}. Give the full Type#N.'
            )
        parsed = (target, number)
    if parsed is None:
        raise ToolCallError(f'{where} takes an object ID such as "{catalogue.example_id(target)}"; {json.dumps(value)} is not one.')
    type_name, number = parsed
    if catalogue.schema.get_type(type_name) is None:
        fixed = next((t for t in registry.types() if t.lower() == type_name.lower()), None)
        if fixed is not None:
            type_name = fixed
    entry = registry.find(type_name, number)
    if entry is None:
        count = registry.count(type_name)
        known = f"{type_name}#1 to {type_name}#{count}" if count else f"none of type {type_name} yet"
        raise ToolCallError(
            f"There is no object {type_name}#{number} (known: {known}). Use an ID that a tool returned or that selectTools lists."
        )
    if not catalogue.is_of_type(entry.type_name, target):
        options = _options(catalogue, registry, target)
        raise ToolCallError(
            f"{entry.id} is {article(entry.type_name)}, but {where} takes {article(target)}. "
            + (f"Use one of: {options}." if options else f"Get {article(target)} first.")
        )
    return entry


def _bare_number(text: str) -> int | None:
    """`"3"` or `"#3"` -> 3: the N of an ID whose type the parameter implies. ASCII digits only, at most
    15 of them, as in `parse_object_id` (`"²"` is a digit to `str.isdigit` but not to `int`)."""
    digits = text.lstrip("#")
    if digits.isascii() and digits.isdigit() and len(digits) <= 15:
        return int(digits)
    return None


def article(type_name: str) -> str:
    """`a Potato`, `an Oven`: error messages read as sentences."""
    return f"{'an' if type_name[:1].lower() in 'aeiou' else 'a'} {type_name}"


def _is_abstract(catalogue: Catalogue, target: str) -> bool:
    from graphql import is_abstract_type

    return is_abstract_type(catalogue.schema.get_type(target))


def _options(catalogue: Catalogue, registry: Registry, target: str, limit: int = 6) -> str:
    ids = [e.id for e in registry.recent() if catalogue.is_of_type(e.type_name, target)][:limit]
    return ", ".join(ids)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What binding needs to know of one tool, worked out once per catalogue rather than per call:
    its arguments, which are required, and which name objects (directly, or inside input objects)."""

    type_name: str
    declared: dict[str, GraphQLArgument]
    accepted: frozenset[str]
    required: tuple[str, ...]
    targets: dict[str, str | None]
    plain: frozenset[str]  # neither a reference nor an input object: the value is sent as given


def _plan(catalogue: Catalogue, tool: Tool) -> _Plan:
    plans: dict[str, _Plan] = catalogue.derived("binding plans", dict)
    plan = plans.get(tool.name)
    if plan is None:
        ref = catalogue.ref(tool.name)
        declared = catalogue.arguments(ref)
        targets = {name: catalogue.dialect.object_argument(arg, name) for name, arg in declared.items()}
        plan = plans[tool.name] = _Plan(
            type_name=ref.type_name,
            declared=declared,
            accepted=frozenset([*declared, *([tool.object_parameter] if tool.object_parameter else [])]),
            required=tuple(name for name, arg in declared.items() if is_required(arg)),
            targets=targets,
            plain=frozenset(
                name
                for name, arg in declared.items()
                if targets[name] is None and not isinstance(get_named_type(arg.type), GraphQLInputObjectType)
            ),
        )
    return plan


def bind_arguments(catalogue: Catalogue, registry: Registry, tool: Tool, arguments: dict[str, Any]) -> Bound:
    """Check a field tool's arguments and resolve its object and references. Raises ToolCallError."""
    plan = _plan(catalogue, tool)
    declared = plan.declared
    parent: ObjectEntry | None = None
    object_parameter = tool.object_parameter
    unknown = [k for k in arguments if k not in plan.accepted]
    if unknown:
        from difflib import get_close_matches

        hints = []
        for name in unknown:
            close = get_close_matches(name, list(declared) + ([object_parameter] if object_parameter else []), n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ToolCallError(f"{tool.name} has no parameter {', '.join(hints)}. Its parameters: {signature(catalogue, tool)}.")
    if object_parameter is not None:
        given = arguments.get(object_parameter)
        type_name = plan.type_name
        if given is None:
            parent = registry.latest(type_name)
            if parent is None:
                makers = [n for n in catalogue.makers(type_name) if n != tool.name][:5]
                raise ToolCallError(
                    f"There is no {type_name} object yet, so {tool.name} has nothing to operate on. "
                    + (f"Get one first, with {', '.join(makers)}." if makers else f"Get {article(type_name)} first.")
                )
        else:
            parent = resolve_reference(catalogue, registry, given, type_name, where=f"{tool.name}'s {object_parameter}")
    missing = [n for n in plan.required if arguments.get(n) is None]
    if missing:
        raise ToolCallError(
            f"{tool.name} is missing the required argument{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)}. Its parameters: {signature(catalogue, tool)}."
        )
    values: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    problems: list[str] = []
    for name, arg in declared.items():
        if name not in arguments:
            continue
        if name in plan.plain:
            value = display = arguments[name]
        else:
            value, display = _substitute(catalogue, registry, arg, name, arguments[name], f"{tool.name}'s {name}", plan.targets[name])
        _check(arg, name, value, problems, tool.name)
        values[name] = value
        shown[name] = display
    if problems:
        raise ToolCallError(
            f"Bad argument{'s' if len(problems) > 1 else ''} for {tool.name}: "
            + "; ".join(problems)
            + f". Its parameters: {signature(catalogue, tool)}."
        )
    return Bound(parent=parent, values=values, shown=shown)


def _substitute(
    catalogue: Catalogue,
    registry: Registry,
    arg: GraphQLArgument | GraphQLInputField,
    name: str,
    value: Any,
    where: str,
    target: str | None | bool = False,
) -> tuple[Any, Any]:
    """Replace object references with real ids, inside lists and input objects too. `target` is the
    type the argument names objects of, when the caller knows it already (False: work it out)."""
    if value is None:
        return None, None
    if target is False:
        target = catalogue.dialect.object_argument(arg, name)  # type: ignore[arg-type]
    if isinstance(target, str):
        raw = catalogue.dialect.accepts_raw_id(arg)
        return _map_list(arg.type, value, lambda v: _reference_value(catalogue, registry, v, target, where, raw=raw))
    named = get_named_type(arg.type)
    if isinstance(named, GraphQLInputObjectType):

        def visit(item: Any) -> tuple[Any, Any]:
            if not isinstance(item, dict):
                return item, item
            real, shown = {}, {}
            for key, inner in item.items():
                field = named.fields.get(key)
                if field is None:
                    real[key] = shown[key] = inner  # coercion names the unknown field
                    continue
                real[key], shown[key] = _substitute(catalogue, registry, field, key, inner, f"{where}.{key}")
            return real, shown

        return _map_list(arg.type, value, visit)
    return value, value


def _reference_value(
    catalogue: Catalogue, registry: Registry, value: Any, target: str, where: str, *, raw: bool = False
) -> tuple[Any, Any]:
    if raw and isinstance(value, (str, int)) and not isinstance(value, bool):
        text = str(value).strip()
        if text.lstrip("#").isdigit():
            raise ToolCallError(
                f'{where} takes an object ID or a global id the API gave; "{text}" could be either. '
                f'Give the full Type#N, such as "{catalogue.example_id(target)}", or the global id itself.'
            )
        if isinstance(value, str) and _is_raw_id(catalogue, registry, value):
            return value, value  # the API's own global id, sent as it is
    entry = resolve_reference(catalogue, registry, value, target, where=where)
    if entry.identity is None:
        raise ToolCallError(f"{entry.id} has no id the API can take back, so it cannot be passed to {where}.")
    return entry.identity, Ref(entry.id)


def _is_raw_id(catalogue: Catalogue, registry: Registry, value: str) -> bool:
    """A global id the API gave, rather than one of our `Type#N` (or a bare number, which is ambiguous)."""
    text = value.strip()
    if not text or text.lstrip("#").isdigit():
        return False
    parsed = parse_object_id(text)
    if parsed is None:
        return True
    type_name = parsed[0].lower()
    return catalogue.schema.get_type(parsed[0]) is None and all(t.lower() != type_name for t in registry.types())


def _map_list(type_: Any, value: Any, leaf: Any) -> tuple[Any, Any]:
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    if isinstance(type_, GraphQLList):
        items = value if isinstance(value, list) else [value]
        pairs = [_map_list(type_.of_type, v, leaf) if v is not None else (None, None) for v in items]
        return [p[0] for p in pairs], [p[1] for p in pairs]
    return leaf(value)


def _check(arg: GraphQLArgument | GraphQLInputField, name: str, value: Any, problems: list[str], tool: str = "") -> None:
    for path, message in value_problems(value, arg.type):
        where = name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
        if tool and isinstance(get_named_type(arg.type), GraphQLInputObjectType):  # schemas summarise deep inputs
            dotted = ".".join([tool, name, *(str(p) for p in path if not isinstance(p, int))])
            message += f" (describeTools {dotted} shows its schema)"
        problems.append(f"{where}: {message}")
