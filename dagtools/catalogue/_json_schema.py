"""GraphQL input types as JSON Schema (2020-12), the one source every provider rendering starts from.

An argument whose input object holds only scalars and enums is inlined; every other input object goes
to `$defs`, spelled out once per tool, so recursion is finite and nesting never grows exponentially.
Custom scalars take what their name and description say (any JSON value, JSON text, a date in a
stated format, a number, else a string: see `_scalars`); enums carry their value descriptions;
defaults are JSON values.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from graphql import (
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    Undefined,
    ast_from_value,
    get_named_type,
    value_from_ast_untyped,
)

from ._describe import DESCRIBE_TOOLS
from ._fit import fit
from ._scalars import scalar_schema

__all__ = [
    "ObjectArgument",
    "SchemaRenderer",
    "default_to_json",
    "is_required",
    "object_reference_description",
    "reaches_itself",
]

JsonSchema = dict[str, Any]
# Tells the renderer which arguments name objects: (argument, its name) -> target type, "*" or None.
ObjectArgument = Callable[[GraphQLArgument | GraphQLInputField, str], str | None]

_BUILTIN: dict[str, JsonSchema] = {
    "Int": {"type": "integer"},
    "Float": {"type": "number"},
    "String": {"type": "string"},
    "Boolean": {"type": "boolean"},
    "ID": {"type": "string"},
}


# Tells the renderer how to describe an object argument: (argument, target type) -> its text.
DescribeReference = Callable[[GraphQLArgument | GraphQLInputField, str], str]


def object_reference_description(target: str, example: str | None = None, *, raw: bool = False) -> str:
    """What an object argument takes, with an example ID of the API at hand (`example`)."""
    example = example or (f"{target}#1" if target != "*" else "Type#1")
    text = f'An object ID such as "{example}".' if target == "*" else f'{target} ID, such as "{example}".'
    if raw:
        text += " A global id the API gave is taken as it is."
    return text


# A tool's whole parameter schema stays near this many bytes of JSON (about 1,000 o200k tokens): input
# objects are spelled out breadth first while they fit, and the rest are summarised. A summary names the
# input type, its first fields and the dotted path `describeTools` takes to spell it out; it accepts any
# properties, so the model can still send the nested value (binding checks it against the full type).
PARAMETER_BUDGET = 3_000
DEFS_BUDGET = PARAMETER_BUDGET


class SchemaRenderer:
    """Renders argument types for one tool; collects `$defs`, breadth first, within a size budget."""

    def __init__(
        self,
        object_argument: ObjectArgument,
        recursive: Callable[[GraphQLInputObjectType], bool],
        defs_budget: int = DEFS_BUDGET,
        *,
        describe: DescribeReference | None = None,
        path: str = "",
    ):
        self._object_argument = object_argument
        self._describe = describe or (lambda _arg, target: object_reference_description(target))
        self._recursive = recursive
        self._queue: list[GraphQLInputObjectType] = []
        self._budget = defs_budget
        self._depth = 0  # > 0 while spelling out an input object: nested ones are shared through $defs
        self._root = [path] if path else []
        self._path = list(self._root)  # the dotted path being rendered, for describeTools hints
        self._paths: dict[str, str] = {}  # input type -> the first path that reached it
        self.defs: dict[str, JsonSchema] = {}

    def finish(self, used: int = 0) -> dict[str, JsonSchema]:
        """Spell out the queued `$defs`, nearest first, while they fit beside `used` bytes; summarise the rest.

        A def is spelled out only when it and summaries of the input types it newly reaches fit, so the
        budget holds however many types one filter reaches.
        """
        used += sum(len(json.dumps(self._summary(q))) for q in self._queue)
        while self._queue:
            named = self._queue.pop(0)
            queued, known = len(self._queue), set(self.defs)
            path = self._paths.get(named.name, "")
            self._path = path.split(".") if path else []
            rendered = self._input_object(named)
            reached = [n for n in self.defs if n not in known]
            grows = len(json.dumps(rendered)) - len(json.dumps(self._summary(named)))
            grows += sum(len(json.dumps(self._summary(q))) for q in self._queue[queued:])
            if used + grows > self._budget:
                del self._queue[queued:]
                for name in reached:
                    del self.defs[name]
                    self._paths.pop(name, None)
                rendered = self._summary(named)
            else:
                used += grows
            self.defs[named.name] = rendered
        return self.defs

    def _summary(self, named: GraphQLInputObjectType) -> JsonSchema:
        return _summary(named, self._paths.get(named.name, ""))

    def spell_out(self, named: GraphQLInputObjectType) -> JsonSchema:
        """One input object in full, its nested ones in `$defs` within the budget: what describeTools shows."""
        rendered = self._input_object(named)
        defs = self.finish(len(json.dumps(rendered)))
        if defs:
            rendered["$defs"] = defs
        return fit(rendered, self._budget, ".".join(self._root))

    def argument(self, arg: GraphQLArgument | GraphQLInputField, name: str) -> JsonSchema:
        self._path.append(name)
        try:
            return self._argument(arg, name)
        finally:
            self._path.pop()

    def _argument(self, arg: GraphQLArgument | GraphQLInputField, name: str) -> JsonSchema:
        target = self._object_argument(arg, name)
        if target is not None:
            schema = self._wrap(arg.type, lambda _named: {"type": "string"})
            leaf = self._describe(arg, target)
        else:
            schema = self.type(arg.type)
            leaf = ""
        text = " ".join(part for part in (leaf, arg.description or "") if part)
        if text:
            schema = _with_description(schema, text)
        default = default_to_json(arg)
        if default is not Undefined:
            schema["default"] = default
        return schema

    def type(self, type_: GraphQLInputType) -> JsonSchema:
        return self._wrap(type_, self._named)

    def _wrap(self, type_: GraphQLInputType, leaf: Callable[[Any], JsonSchema]) -> JsonSchema:
        if isinstance(type_, GraphQLNonNull):
            return self._wrap(type_.of_type, leaf)
        if isinstance(type_, GraphQLList):
            return {"type": "array", "items": self._wrap(type_.of_type, leaf)}
        return leaf(type_)

    def _named(self, named: Any) -> JsonSchema:
        if isinstance(named, GraphQLScalarType):
            if named.name in _BUILTIN:
                return dict(_BUILTIN[named.name])
            return scalar_schema(named)
        if isinstance(named, GraphQLEnumType):
            return _enum(named)
        if isinstance(named, GraphQLInputObjectType):
            if self._depth > 0 or self._recursive(named) or _has_nested_input(named):
                if named.name not in self.defs:
                    self.defs[named.name] = {}  # reserved; finish() fills it in
                    self._paths[named.name] = ".".join(self._path)
                    self._queue.append(named)
                return {"$ref": f"#/$defs/{named.name}"}
            return self._input_object(named)
        raise TypeError(f"not an input type: {named}")

    def _input_object(self, named: GraphQLInputObjectType) -> JsonSchema:
        properties: dict[str, JsonSchema] = {}
        required: list[str] = []
        self._depth += 1
        try:
            for field_name, field in named.fields.items():
                if field.deprecation_reason is not None and not is_required(field):
                    continue
                properties[field_name] = self.argument(field, field_name)
                if is_required(field):
                    required.append(field_name)
        finally:
            self._depth -= 1
        out: JsonSchema = {"type": "object"}
        if named.description:
            out["description"] = named.description.strip()
        out["properties"] = properties
        if required:
            out["required"] = required
        out["additionalProperties"] = False
        if getattr(named, "is_one_of", False):
            out["description"] = (out.get("description", "") + " Set exactly one field.").strip()
            out["minProperties"] = 1
            out["maxProperties"] = 1
        return out


def _summary(named: GraphQLInputObjectType, path: str = "", limit: int = 6) -> JsonSchema:
    """A stand-in for an input object past the budget: its name, first fields, and how to see it all."""
    names = [n for n, f in named.fields.items() if f.deprecation_reason is None or is_required(f)]
    fields = ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
    hint = f" ({DESCRIBE_TOOLS} {path} for its schema)" if path else ""
    return {"type": "object", "description": f"{named.name}: fields {fields}{hint}"}


def _has_nested_input(named: GraphQLInputObjectType) -> bool:
    """Input objects that hold other input objects go to `$defs`: inlining them can grow exponentially."""
    return any(isinstance(_unwrap(f.type), GraphQLInputObjectType) for f in named.fields.values())


def _unwrap(type_: Any) -> Any:
    while isinstance(type_, (GraphQLNonNull, GraphQLList)):
        type_ = type_.of_type
    return type_


def _has_default(arg: GraphQLArgument | GraphQLInputField) -> bool:
    # graphql-core 3.3 keeps defaults read from introspection or SDL in `default`; 3.2 only has
    # `default_value`.
    return arg.default_value is not Undefined or getattr(arg, "default", None) is not None


def is_required(arg: GraphQLArgument | GraphQLInputField) -> bool:
    return isinstance(arg.type, GraphQLNonNull) and not _has_default(arg)


def _enum(named: GraphQLEnumType) -> JsonSchema:
    values = {k: v for k, v in named.values.items() if v.deprecation_reason is None}
    lines = [f"{named.name}: {named.description.strip()}" if named.description else ""]
    described = [f"{k}: {v.description.strip()}" for k, v in values.items() if v.description]
    out: JsonSchema = {"type": "string", "enum": list(values)}
    text = "\n".join(part for part in lines + described if part)
    if text:
        out["description"] = text
    return out


def _with_description(schema: JsonSchema, text: str) -> JsonSchema:
    """Put the argument's text first, then whatever the type itself said."""
    if "$ref" in schema:
        return {"$ref": schema["$ref"], "description": text}
    out = dict(schema)
    inner = out.get("description")
    out["description"] = f"{text}\n{inner}" if inner else text
    return out


def default_to_json(arg: GraphQLArgument | GraphQLInputField) -> Any:
    """The argument's default as a JSON value, or Undefined when it has none."""
    if not _has_default(arg):
        return Undefined
    node = getattr(arg, "ast_node", None)
    literal = getattr(node, "default_value", None)
    if literal is not None:
        return value_from_ast_untyped(literal)
    default = getattr(arg, "default", None)
    if default is not None:
        if default.literal is not None:
            return value_from_ast_untyped(default.literal)
        if default.value is not Undefined:
            return default.value  # the external value: what a client sends
    if arg.default_value is Undefined:
        return Undefined
    try:
        ast = ast_from_value(arg.default_value, arg.type)
    except Exception:  # an internal value the type cannot serialise: say nothing rather than lie
        return Undefined
    return None if ast is None else value_from_ast_untyped(ast)


def reaches_itself(type_: GraphQLInputObjectType) -> bool:
    """Whether an input object holds itself, at any depth: such a one always goes to `$defs`."""
    return _reaches(type_, type_.name, set())


def _reaches(type_: GraphQLInputObjectType, target: str, seen: set[str]) -> bool:
    for field in type_.fields.values():
        named = get_named_type(field.type)
        if not isinstance(named, GraphQLInputObjectType):
            continue
        if named.name == target:
            return True
        if named.name not in seen:
            seen.add(named.name)
            if _reaches(named, target, seen):
                return True
    return False
