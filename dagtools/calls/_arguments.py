"""Binding a model's arguments to a field: the object it operates on, object references, and checks.

Every check runs before anything executes, so a call that fails here changes nothing. Values are
checked the way the API will check them (graphql-core's input coercion), and object references
(`"Sink#1"`, or `"1"` where the type is known) become the API's own ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from graphql import (
    GraphQLArgument,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    get_named_type,
)
from graphql.utilities import validate_input_value

from .._errors import ToolCallError
from .._tools import Tool
from .._values import MAX_DEPTH, argument_problem, value_problem
from ..catalogue._catalogue import Catalogue
from ..catalogue._describe import DESCRIBE_TOOLS, points_to_describe
from ..catalogue._json_schema import is_required
from ..catalogue._scalars import is_any_value, scalar_kind
from ..registry._registry import ObjectEntry, Registry
from ._references import Ref, article, held_or_raw, reference_value, resolve_reference

__all__ = ["Bound", "Ref", "bind_arguments", "parse_arguments", "resolve_reference", "signature", "value_problems"]


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


def parse_arguments(tool_name: str, raw: dict[str, Any] | str | None) -> dict[str, Any]:
    """The model's arguments as a dict of JSON values that every later step (and the API) can take."""
    if not isinstance(tool_name, str):
        raise ToolCallError(f"A tool name is text, not {type(tool_name).__name__}. selectTools lists the tools you can select.")
    if not tool_name.isascii() and value_problem(tool_name) is not None:  # the name is echoed in every message
        raise ToolCallError(f"There is no tool {ascii(tool_name)}: a tool name is plain text. selectTools lists the tools you can select.")
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        owner = tool_name.split("_", 1)[0] if "_" in tool_name else ""
        example = f'{{"{owner}": "{owner}#1"}}' if owner and owner not in ("Query", "Mutation") else '{"name": "value"}'
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as error:
            raise ToolCallError(
                f"The arguments for {tool_name} are not valid JSON ({error.msg} at character {error.pos}). "
                f"Send a JSON object, such as {example}."  # an example of this API, never another's
            ) from None
        except RecursionError:
            raise ToolCallError(
                f"The arguments for {tool_name} nest deeper than {MAX_DEPTH} levels. Send a flat JSON object, such as {example}."
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
        kind = schema.get("type") or ("json" if is_any_value(schema) else "object")
        if "enum" in schema:
            kind = "|".join(schema["enum"][:8])
        parts.append(f"{name}{'' if name in required else '?'}: {kind}")
    return f"{tool.name}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class _Plan:
    """What binding needs to know of one tool, worked out once per catalogue rather than per call:
    its arguments, which are required, and which name objects (directly, or inside input objects)."""

    type_name: str
    declared: dict[str, GraphQLArgument]
    accepted: frozenset[str]
    required: tuple[str, ...]
    targets: dict[str, str | None]
    plain: frozenset[str]  # no reference, input object or JSON scalar: the value is sent as given
    summarised: bool  # its schema leaves parts to describeTools, so errors may point there


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
            plain=frozenset(name for name, arg in declared.items() if targets[name] is None and _sent_as_given(catalogue, arg)),
            summarised=points_to_describe(tool.parameters),
        )
    return plan


def bind_arguments(catalogue: Catalogue, registry: Registry, tool: Tool, arguments: dict[str, Any], *, chained: bool = False) -> Bound:
    """Check a field tool's arguments and resolve its object and references. Raises ToolCallError.
    A `chained` call runs on what a chain's step before returns, so it binds no object of its own."""
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
    if object_parameter is not None and not chained:
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
        _check(arg, name, value, problems, tool.name if plan.summarised else "")
        values[name] = value
        shown[name] = display
    if problems:
        said = "; ".join(problems)
        raise ToolCallError(
            f"Bad argument{'s' if len(problems) > 1 else ''} for {tool.name}: {said}"
            + ("" if said.endswith(("?", "!")) else ".")  # graphql-core's own "Did you mean ...?" ends the sentence
            + f" Its parameters: {signature(catalogue, tool)}."
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
        return _map_list(arg.type, value, lambda v: reference_value(catalogue, registry, v, target, where, raw=raw))
    if catalogue.dialect.takes_handle(arg):
        return _map_list(arg.type, value, lambda v: held_or_raw(catalogue, registry, v, where))
    named = get_named_type(arg.type)
    if isinstance(named, GraphQLScalarType):
        kind = _json_kind(catalogue, named)
        return _map_list(arg.type, value, lambda v: (_json_value(kind, v),) * 2) if kind else (value, value)
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


def _sent_as_given(catalogue: Catalogue, arg: GraphQLArgument) -> bool:
    """An argument binding never rewrites: no input object, handle or JSON scalar anywhere in it."""
    named = get_named_type(arg.type)
    if isinstance(named, GraphQLInputObjectType) or catalogue.dialect.takes_handle(arg):
        return False
    return not (isinstance(named, GraphQLScalarType) and _json_kind(catalogue, named))


def _json_kind(catalogue: Catalogue, scalar: GraphQLScalarType) -> str | None:
    """ "json" or "json-text" for a JSON scalar (see catalogue._scalars), else None; once per scalar."""
    kinds: dict[str, str | None] = catalogue.derived("json scalars", dict)
    if scalar.name not in kinds:
        kind = scalar_kind(scalar) if scalar.name not in _BUILTIN_SCALARS else "string"
        kinds[scalar.name] = kind if kind in ("json", "json-text") else None
    return kinds[scalar.name]


_BUILTIN_SCALARS = frozenset(("Int", "Float", "String", "Boolean", "ID"))


def _json_value(kind: str | None, value: Any) -> Any:
    """A JSON scalar's value as the API takes it. Where a rendering could only offer text (OpenAI's
    strict mode, Gemini), an object or list arrives as its JSON text and is sent as that value; a
    scalar carried as JSON text gets the text of an object or list the model sent as one."""
    if kind == "json" and isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value  # not JSON after all: text, sent as the model wrote it
        return parsed if value_problem(parsed) is None else value
    if kind == "json-text" and isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return value


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
        if tool and isinstance(get_named_type(arg.type), GraphQLInputObjectType):  # the schema summarised deep inputs
            dotted = ".".join([tool, name, *(str(p) for p in path if not isinstance(p, int))])
            message += f" ({DESCRIBE_TOOLS} {dotted} shows its schema)"
        elif "unknown field" in message and isinstance(owner := _type_at(arg.type, path), GraphQLInputObjectType):
            names = list(owner.fields)
            message += f" ({owner.name} takes {', '.join(names[:_FIELDS_NAMED])}{', ...' if len(names) > _FIELDS_NAMED else ''})"
        problems.append(f"{where}: {message}")


#: The most fields of an input object a message names.
_FIELDS_NAMED = 12


def _type_at(type_: Any, path: list[str | int]) -> Any:
    """The named type at `path` inside an input value of `type_` (field names and list indexes)."""
    named = get_named_type(type_)
    for step in path:
        if isinstance(step, str):
            if not isinstance(named, GraphQLInputObjectType) or step not in named.fields:
                return None
            named = get_named_type(named.fields[step].type)
    return named
