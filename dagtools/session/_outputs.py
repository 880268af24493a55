"""The outputs a host asks for, the `save` tool that hands them back, and the checks it runs on them.

`save` is served only when outputs are declared; without them a call of it is told why (`NO_OUTPUTS`).
Every value is checked before any is stored: an object output must name an object of its type, a
value output must pass the API's own input coercion. A save that fails stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from graphql import GraphQLInputObjectType, GraphQLInputType, GraphQLList, GraphQLNonNull, get_named_type, is_composite_type, is_input_type
from graphql.language import parse_type
from graphql.utilities import type_from_ast

from .._errors import ConfigError, ToolCallError
from .._tools import Tool
from ..calls._arguments import value_problems
from ..calls._references import resolve_reference
from ..catalogue._catalogue import Catalogue
from ..catalogue._json_schema import SchemaRenderer
from ..registry._registry import Registry
from ._toolsets import FunctionToolset

__all__ = ["NO_OUTPUTS", "SAVE", "Output", "OutputSpec", "add_save", "check_outputs", "normalize_outputs", "output_schema", "save_tool"]


@dataclass(frozen=True, kw_only=True)
class Output:
    """One output the host asked for: a name, a GraphQL type (`Plate`, `[String!]`) and what it is."""

    name: str
    type: str
    description: str = ""

    def graphql_type(self, catalogue: Catalogue) -> Any:
        try:
            resolved = type_from_ast(catalogue.schema, parse_type(self.type))
        except Exception as error:
            raise ConfigError(f"Output {self.name!r}: {self.type!r} is not a GraphQL type ({error}).") from None
        if resolved is None:
            raise ConfigError(
                f"Output {self.name!r}: the schema has no type {self.type!r}. Name an object type, a scalar or an enum of the schema."
            )
        return resolved


OutputSpec = Output | str | Mapping[str, Any]

#: The tool that hands the outputs back.
SAVE = "save"


def normalize_outputs(outputs: Mapping[str, OutputSpec] | Iterable[Output] | None) -> list[Output]:
    """Outputs as the host may write them: `{"fries": "Plate"}`, `{"fries": {"type": ..., "description": ...}}`."""
    if outputs is None:
        return []
    if not isinstance(outputs, Mapping):
        return list(outputs)
    result = []
    for name, spec in outputs.items():
        if isinstance(spec, Output):
            result.append(replace(spec, name=name))
        elif isinstance(spec, str):
            result.append(Output(name=name, type=spec))
        elif isinstance(spec, Mapping) and "type" in spec:
            result.append(Output(name=name, type=str(spec["type"]), description=str(spec.get("description", ""))))
        else:
            raise ConfigError(f"Output {name!r} needs a type, such as {{type: Plate, description: ...}}.")
    return result


def check_outputs(catalogue: Catalogue, registry: Registry, outputs: list[Output], arguments: dict[str, Any]) -> dict[str, Any]:
    """The values to store for a `save` call; raises ToolCallError naming every problem at once."""
    declared = {o.name: o for o in outputs}
    extra = [k for k in arguments if k not in declared]
    missing = [k for k in declared if arguments.get(k) is None]
    if extra or missing:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if extra:
            parts.append(f"no output named {', '.join(extra)}")
        expected = ", ".join(f"{o.name} ({o.type})" for o in outputs)
        raise ToolCallError(f"save was not done: {'; '.join(parts)}. Pass every output at once: {expected}.")
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, output in declared.items():
        try:
            values[name] = _check(catalogue, registry, output, arguments[name])
        except ToolCallError as error:
            problems.append(f"{name}: {str(error).rstrip('.')}")  # one full stop, at the end
    if problems:
        raise ToolCallError("save was not done: " + "; ".join(problems) + ". Fix these and call save again.")
    return values


def _check(catalogue: Catalogue, registry: Registry, output: Output, value: Any) -> Any:
    type_ = output.graphql_type(catalogue)
    named = get_named_type(type_)
    if not is_composite_type(named):
        problems = [message for _, message in value_problems(value, type_)]
        if problems:
            raise ToolCallError("; ".join(problems))
        return value

    def check(item: Any, t: Any) -> Any:
        while isinstance(t, GraphQLNonNull):
            t = t.of_type
        if isinstance(t, GraphQLList):
            if not isinstance(item, list):
                raise ToolCallError(f"expected a list of {named.name} IDs")
            return [check(i, t.of_type) for i in item]
        return resolve_reference(catalogue, registry, item, named.name, where="it").id

    return check(value, type_)


def output_schema(catalogue: Catalogue, output: Output) -> dict[str, Any]:
    type_ = output.graphql_type(catalogue)
    named = get_named_type(type_)
    if is_composite_type(named):
        schema = _wrap_ref(type_)
        text = f'{named.name} ID, such as "{named.name}#1".'
    elif is_input_type(type_) and not isinstance(named, GraphQLInputObjectType):
        schema = SchemaRenderer(lambda *_: None, lambda _t: False).type(type_)
        text = ""
    else:
        raise ConfigError(f"Output {output.name!r}: {output.type} is an input type; outputs are objects, scalars or enums.")
    text = " ".join(p for p in (text, output.description) if p)
    if text:
        inner = schema.get("description")
        schema["description"] = f"{text}\n{inner}" if inner else text
    return schema


def _wrap_ref(type_: GraphQLInputType | Any) -> dict[str, Any]:
    if isinstance(type_, GraphQLNonNull):
        return _wrap_ref(type_.of_type)
    if isinstance(type_, GraphQLList):
        return {"type": "array", "items": _wrap_ref(type_.of_type)}
    return {"type": "string"}


#: What a call of `save` is told in a session that asks for no outputs (the model, and whoever reads its log).
NO_OUTPUTS = (
    "There is no save here: no outputs were asked for, so there is nothing to save. When the task is done, "
    "answer in plain text. (Outputs are declared by whoever starts the session: --output NAME:TYPE on the command "
    "line, outputs: in a script or config file, outputs= in Python.)"
)


def add_save(toolset: FunctionToolset, catalogue: Catalogue, outputs: list[Output], handler: Callable[[dict[str, Any]], Any]) -> None:
    """Serve `save` by `handler` when outputs are declared; without them, a call of `save` is told why
    there is none (`NO_OUTPUTS`) rather than that no such tool exists."""
    if outputs:
        toolset.add(SAVE, save_tool(catalogue, outputs), handler)
    else:
        toolset.absent(SAVE, NO_OUTPUTS)


def save_tool(catalogue: Catalogue, outputs: list[Output]) -> Tool:
    lines = [f"- {o.name} ({o.type})" + (f": {o.description}" if o.description else "") for o in outputs]
    description = (
        "Save your work, making the requested outputs available to the user.\n\n"
        "Your task is to return the following outputs:\n" + "\n".join(lines)
    )
    return Tool(
        name=SAVE,
        description=description,
        parameters={
            "type": "object",
            "properties": {o.name: output_schema(catalogue, o) for o in outputs},
            "required": [o.name for o in outputs],
            "additionalProperties": False,
        },
        kind="save",
    )
