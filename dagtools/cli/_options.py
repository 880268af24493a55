"""Inputs, values and outputs as written on a command line, the same for `run` and `mcp`.

    --input  name=chain[:description]     oven=oven:An oven you can use
    --value  name=json                    limit=3
    --output name:Type[:description]      fries:Plate:The fries, on a plate

The forms `name=chain # description` and `name=Type # description` are read too.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import ConfigError

__all__ = ["parse_input", "parse_output", "parse_value"]


def parse_input(text: str) -> tuple[str, dict[str, Any]]:
    """An object input; a colon inside the chain's parentheses or quotes is part of the chain."""
    from ..calls._chains import split_outside  # graphql-core, only once an input is given

    name, sep, rest = text.partition("=")
    if " # " in rest:
        chain, _, description = rest.partition(" # ")
    else:
        chain, *more = split_outside(rest, ":", maxsplit=1)
        description = more[0] if more else ""
    if not sep or not name.strip() or not chain.strip():
        raise ConfigError(f"--input {text!r}: write name=chain[:description], such as oven=oven:An oven.")
    return name.strip(), {"field": chain.strip(), "description": description.strip()}


def parse_value(text: str) -> tuple[str, dict[str, Any]]:
    """A plain value: JSON, or a bare word taken as a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"--value {text!r}: write name=json, such as limit=3 or owner='\"octocat\"'.")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return name.strip(), {"value": value}


def parse_output(text: str) -> tuple[str, dict[str, Any]]:
    """An output to save: a name, a GraphQL type and what it is."""
    colon, equals = text.find(":"), text.find("=")
    if equals >= 0 and (colon < 0 or equals < colon):
        name, _, rest = text.partition("=")
        type_, _, description = rest.partition(" # ")
    else:
        name, _, rest = text.partition(":")
        type_, _, description = rest.partition(":")
    if not name.strip() or not type_.strip():
        raise ConfigError(f"--output {text!r}: write name:Type[:description], such as fries:Plate.")
    return name.strip(), {"type": type_.strip(), "description": description.strip()}
