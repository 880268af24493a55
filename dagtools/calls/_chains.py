"""Root-field chains a host writes, such as `repository(owner: "a", name: "b").issue(number: 3)`.

Each segment is read with GraphQL's own parser, so arguments are GraphQL literals; their values then
travel as variables like every other argument.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError, GraphQLObjectType, get_named_type, parse, value_from_ast_untyped
from graphql.language import FieldNode, OperationDefinitionNode

from .._errors import ConfigError
from ..catalogue._catalogue import Catalogue
from ..registry._handles import Step
from ._arguments import value_problems

__all__ = ["parse_chain", "split_chain", "split_outside"]


def split_outside(text: str, separator: str, maxsplit: int = -1) -> list[str]:
    """Split at `separator` where it stands outside parentheses, brackets, braces and strings."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == separator and depth == 0 and maxsplit != 0:
            parts.append(text[start:i])
            start = i + 1
            maxsplit -= 1
        i += 1
    parts.append(text[start:])
    return parts


def split_chain(text: str) -> list[str]:
    """The steps of a chain: `a(x: "1.2").b` -> `['a(x: "1.2")', 'b']`."""
    return [part.strip() for part in split_outside(text, ".")]


def parse_chain(catalogue: Catalogue, text: str) -> tuple[tuple[Step, ...], Any]:
    """The steps of a chain from the query root, and the GraphQL type it ends on."""
    schema = catalogue.schema
    current: Any = schema.query_type
    steps: list[Step] = []
    field_type: Any = None
    for segment in split_chain(text):
        if not segment:
            raise ConfigError(f'Chain {text!r} has an empty step; write it like potato or repository(owner: "a").issue(number: 1).')
        try:
            document = parse("{ " + segment + " }", no_location=True)
        except GraphQLError as error:
            raise ConfigError(f"Chain step {segment!r} is not a GraphQL field: {error.message}") from None
        operation = document.definitions[0]
        assert isinstance(operation, OperationDefinitionNode)
        selections = operation.selection_set.selections
        node = selections[0]
        if len(selections) != 1 or not isinstance(node, FieldNode) or node.selection_set is not None:
            raise ConfigError(f"Chain step {segment!r} must be one field with optional arguments.")
        if not isinstance(current, GraphQLObjectType):
            raise ConfigError(f"Chain {text!r}: {current} has no fields to follow.")
        field = current.fields.get(node.name.value)
        if field is None:
            hint = _did_you_mean(node.name.value, current.fields, "fields")
            raise ConfigError(f"Chain {text!r}: {current.name} has no field {node.name.value!r}.{hint}")
        arguments: dict[str, Any] = {}
        for arg in node.arguments or ():
            definition = field.args.get(arg.name.value)
            if definition is None:
                hint = _did_you_mean(arg.name.value, field.args, "arguments")
                raise ConfigError(f"Chain {text!r}: {current.name}.{node.name.value} has no argument {arg.name.value!r}.{hint}")
            value = value_from_ast_untyped(arg.value)
            problems = [message for _, message in value_problems(value, definition.type)]
            if problems:
                raise ConfigError(f"Chain {text!r}: argument {arg.name.value}: {'; '.join(problems)}")
            arguments[arg.name.value] = value
        steps.append(Step.of(node.name.value, arguments))
        field_type = field.type
        current = get_named_type(field.type)
    return tuple(steps), field_type


def _did_you_mean(name: str, names: Any, what: str) -> str:
    """A near miss gets "Did you mean 'oven'?", anything else the names there are (a few): the next try can be right."""
    from difflib import get_close_matches

    close = get_close_matches(name, list(names), n=1)
    if close:
        return f" Did you mean {close[0]!r}?"
    listed = sorted(names)
    if not listed:
        return f" It takes no {what}."
    more = f" and {len(listed) - 8} more" if len(listed) > 8 else ""
    return f" Its {what}: {', '.join(listed[:8])}{more}."
