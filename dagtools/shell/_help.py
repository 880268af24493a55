"""What the shell says about itself and the API: `help`, a tool's parameters, a type's tools, and the
instructions that teach a terminal agent the whole contract in one command (`--agent-help`)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from ..calls._each import MAX_EACH, takes_each
from ..catalogue._catalogue import Catalogue
from ..catalogue._chain_example import example_chain
from ..catalogue._reach import example_call
from ._map import api_map
from ._parse import BUILTINS

__all__ = ["agent_help", "api_section", "builtin_help", "tool_help", "type_help"]


def _first_line(text: str) -> str:
    return (text or "").strip().split("\n", 1)[0]


def _example_line(catalogue: Catalogue) -> str:
    tool, arguments = example_call(catalogue)
    object_name = catalogue.object_parameter(catalogue.ref(tool)) if tool in catalogue else None
    words = [tool]
    for name, value in arguments.items():
        words.append(str(value) if name == object_name else f"{name}={_word(value)}")
    return " ".join(words)


def _root_line(catalogue: Catalogue) -> str | None:
    """A root call that makes the object the example call acts on (`Query_user login=LOGIN`), its
    required arguments named by placeholders; None where no root tool makes it."""
    tool, _ = example_call(catalogue)
    owner = catalogue.ref(tool).type_name if tool in catalogue else None
    query = catalogue.query_type
    roots = set(catalogue.tools_for_type(query)) if query else set()
    makers = [m for m in (catalogue.makers(owner) if owner else ()) if m in roots]
    for maker in sorted(makers, key=lambda m: catalogue.target(m) != owner):  # its own type before an interface's
        if maker in roots:
            required = catalogue.tool(maker).parameters.get("required") or ()
            return " ".join([maker, *(f"{name}={name.upper()}" for name in required)])
    return None


def _chain_line(catalogue: Catalogue) -> str:
    return " | ".join(
        " ".join([step["tool"], *(f"{k}={_word(v)}" for k, v in (step.get("arguments") or {}).items())])
        for step in example_chain(catalogue)
    )


def _word(value: Any) -> str:
    if isinstance(value, str):
        return value if value and not any(c.isspace() or c in "\"'[]{}|=#" for c in value) else json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def builtin_help(catalogue: Catalogue) -> str:
    lines = [
        "One line is one call: Type_field [Type#N] name=value ...",
        *(f"  {line}" for line in (_root_line(catalogue), _example_line(catalogue)) if line),
        'The object goes first, by position (it defaults to the latest of its type); values are words, "quoted text",',
        'or JSON for lists and objects ([A, B], {"key": 1}). A | runs the next tool on what the last returned, in one request:',
        f"  {_chain_line(catalogue)}",
        "Built-ins:",
        *(f"  {line}" for line in BUILTINS.values()),
        "Tab completes tools, objects, argument names and enum values.",
    ]
    return "\n".join(lines)


def _kind(schema: Mapping[str, Any]) -> str:
    if schema.get("enum"):
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return "a list of " + (_kind(items) if isinstance(items, Mapping) else "values")
    if kind == "object":
        fields = list((schema.get("properties") or {}))
        return "an object {" + ", ".join(fields[:8]) + (", ..." if len(fields) > 8 else "") + "}" if fields else "an object"
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    return str(kind or "any JSON value")


def tool_help(catalogue: Catalogue, name: str) -> str:
    tool = catalogue.tool(name)
    properties: Mapping[str, Any] = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or ())
    object_name = catalogue.object_parameter(catalogue.ref(name))
    usage = [name]
    lines = []
    for parameter, schema in properties.items():
        if not isinstance(schema, Mapping):
            continue
        if parameter == object_name:
            usage.append(f"[{parameter}#N]")
            lines.append(f"  {parameter}#N  the object, by position; default: the latest {parameter}")
            continue
        usage.append(f"{parameter}=..." if parameter in required else f"[{parameter}=...]")
        need = "required, " if parameter in required else ""
        described = _first_line(str(schema.get("description", "")))
        several = f" (or a list of up to {MAX_EACH}: each is looked up, in one call)" if takes_each(catalogue, name, parameter) else ""
        lines.append(f"  {parameter}  {need}{_kind(schema)}{several}" + (f": {described}" if described else ""))
    writes = "" if tool.read_only else "\nThis writes to the API: the shell asks before it runs (or --yes)."
    return "\n".join([" ".join(usage), tool.description.strip(), *lines]) + writes


def type_help(catalogue: Catalogue, type_name: str) -> str:
    described = _first_line(getattr(catalogue.schema.get_type(type_name), "description", None) or "")
    tools = catalogue.tools_for_type(type_name)
    lines = [f"{type_name}" + (f": {described}" if described else "")]
    if tools:
        lines.append(f"Tools on a {type_name} (help TOOL for one):")
        lines += [f"  {t}: {_first_line(catalogue.tool(t).description)}" for t in tools]
    makers = catalogue.makers(type_name)
    if makers:
        lines.append("Made by: " + ", ".join(makers[:12]) + (f" and {len(makers) - 12} more" if len(makers) > 12 else ""))
    return "\n".join(lines)


def agent_help(catalogue: Catalogue, command: list[str]) -> str:
    """At most 300 tokens (o200k) that teach a terminal agent the shell: one call per line, handles,
    search, chains, save (`api_section` follows them). `command` is how the agent runs one line (the
    source and session filled in)."""
    run = shlex.join(command)
    return "\n".join(
        [
            f"This API is a command line. Run a call as: {run} 'LINE' (several -c run in turn)",
            "LINE is Type_field [Type#N] name=value ...; the tool names are Type_field, Query_* start from the root:",
            *(f"  {line}" for line in (_root_line(catalogue), _example_line(catalogue)) if line),
            "An object comes back as a handle Type#N with a preview; pass it first in later commands, or as an ID anywhere.",
            'Values: words, "quoted text", JSON lists and objects ([A, B], {"key": 1}).',
            "A tool returning objects takes fields=[a, b.c] to show just those fields (b.c: through b) of each, in one call.",
            "Chain with | to run the next tool on what the last returned, in one request:",
            f"  {_chain_line(catalogue)}",
            "Built-ins: search WORDS (find tools), help TOOL|Type (parameters), held (your objects), save NAME=Type#N",
            "(hand back an output you were asked for), trace (calls so far).",
            "A failed call says why and what to do next, and changes nothing. Writes (Mutation_*) need --yes.",
        ]
    )


def api_section(catalogue: Catalogue) -> str:
    """What `--agent-help` ends with: a small API's map (shell/_map.py), so an agent writes its calls
    without reading the API a type at a time; on a large one, how to find its tools."""
    shown = api_map(catalogue)
    if shown is None:
        return "This API is large: search WORDS finds its tools, help Type lists a type's."
    return "The API, one type a line (a field is called as Type_field; `-> T` gives objects):\n" + shown
