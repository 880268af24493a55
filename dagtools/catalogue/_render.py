"""One toolset, rendered for each provider's tool format, with nothing lost in any of them."""

from __future__ import annotations

import copy
from typing import Any, Literal

from .._tools import Tool
from ._scalars import ANY_VALUE_NOTE, JSON_TEXT_NOTE, is_any_value

__all__ = ["FORMATS", "ProviderFormat", "describe_tools", "render_tool", "render_tools", "strict_schema"]

ProviderFormat = Literal["openai", "openai-strict", "openai-responses", "anthropic", "mcp", "gemini"]
#: `openai` is Chat Completions' nested shape; `openai-responses` the Responses API's flat one.
FORMATS: tuple[str, ...] = ("openai", "openai-strict", "openai-responses", "anthropic", "mcp", "gemini")


def render_tools(tools: list[Tool], format: str = "openai") -> list[dict[str, Any]]:
    """Tool definitions in one provider's format (`FORMATS`: OpenAI's Chat Completions, strict or Responses
    shape, Anthropic's, MCP's, Gemini's), ready to send with a request."""
    return [render_tool(tool, format) for tool in tools]


def render_tool(tool: Tool, format: str = "openai") -> dict[str, Any]:
    if format == "openai":
        return {"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters}}
    if format == "openai-strict":
        return {
            "type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": strict_schema(tool.parameters), "strict": True},
        }
    if format == "openai-responses":
        # strict is on by default in the Responses API, and needs a closed schema: say it is off.
        return {"type": "function", "name": tool.name, "description": tool.description, "parameters": tool.parameters, "strict": False}
    if format == "anthropic":
        return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
    if format == "mcp":
        return {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": tool.parameters,
            "annotations": {"readOnlyHint": tool.read_only, "destructiveHint": tool.destructive},
        }
    if format == "gemini":
        return {"name": tool.name, "description": tool.description, "parameters": inline_refs(tool.parameters)}
    raise ValueError(f"Unknown tool format {format!r}; choose one of {', '.join(FORMATS)}.")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI strict mode: every property required, optional ones nullable, defaults moved into text."""
    return _strict(copy.deepcopy(schema))


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    if is_any_value(node):  # strict mode has no open object: a JSON scalar's object travels as JSON text
        node = _as_json_text(node, ["string", "number", "boolean"])
    for key in ("properties", "$defs"):
        if key in node:
            node[key] = {k: _strict(v) for k, v in node[key].items()}
    for key in ("items", "anyOf"):
        if key in node:
            node[key] = _strict(node[key])
    for bound in ("minProperties", "maxProperties"):
        node.pop(bound, None)
    if "default" in node:
        default = node.pop("default")
        import json

        text = node.get("description", "")
        node["description"] = f"{text} (default: {json.dumps(default)}; null uses it)".strip()
    if node.get("type") == "object" and "properties" in node:
        required = set(node.get("required", ()))
        for name, prop in node["properties"].items():
            if name not in required:
                node["properties"][name] = _nullable(prop)
        node["required"] = list(node["properties"])
        node["additionalProperties"] = False
    return node


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in prop:
        extra = {k: v for k, v in prop.items() if k != "$ref"}
        return {"anyOf": [{"$ref": prop["$ref"]}, {"type": "null"}], **extra}
    out = dict(prop)
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = kind + ["null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = out["enum"] + [None]
    return out


def _as_json_text(node: dict[str, Any], types: list[str] | str) -> dict[str, Any]:
    """A JSON scalar where the format cannot say "any value": text (an object or list as its JSON
    text, which binding parses back), and in strict mode also a number or a boolean."""
    text = str(node.get("description", ""))
    text = text.replace(ANY_VALUE_NOTE, JSON_TEXT_NOTE) if ANY_VALUE_NOTE in text else f"{text}\n{JSON_TEXT_NOTE}".strip()
    return {**node, "type": types, "description": text}


#: The string formats Gemini's schemas take; the others stay in the description only.
_GEMINI_FORMATS = ("date-time", "enum")


def inline_refs(schema: dict[str, Any], depth: int = 3) -> dict[str, Any]:
    """For formats without `$ref`: expand recursive input objects a few levels, then stop with a note."""
    defs = schema.get("$defs", {})

    def walk(node: Any, level: int) -> Any:
        if isinstance(node, list):
            return [walk(n, level) for n in node]
        if not isinstance(node, dict):
            return node
        if is_any_value(node):  # Gemini's schemas have neither an untyped value nor an open object
            node = _as_json_text(node, "string")
        if node.get("type") == "string" and node.get("format") not in (None, *_GEMINI_FORMATS):
            node = {k: v for k, v in node.items() if k != "format"}
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if level >= depth:
                return {"type": "object", "description": f"A {name} (nested too deep to spell out here)."}
            target = dict(defs.get(name, {}))
            if "description" in node:
                target["description"] = node["description"]
            return walk(target, level + 1)
        out: dict[str, Any] = {}
        for key, value in node.items():  # only schemas are walked: a default value or an enum is data
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: walk(each, level) for name, each in value.items()}
            elif key in ("items", "anyOf", "oneOf", "allOf"):
                out[key] = walk(value, level)
            elif key not in ("$defs", "additionalProperties"):
                out[key] = value
        return out

    return walk(schema, 0)


def describe_tools(tools: list[Tool]) -> str:
    """The toolset as the seed's pseudo-signatures: comments, then `name(param: type, ...)`."""
    blocks = []
    for tool in tools:
        lines = [f"# {line}".rstrip() for line in tool.description.splitlines()]
        props = tool.parameters.get("properties", {})
        required = set(tool.parameters.get("required", ()))
        params = []
        for name, schema in props.items():
            for line in (schema.get("description") or "").splitlines():
                params.append(f"  # {line}".rstrip())
            if "enum" in schema:
                params.append(f"  # @enum({', '.join(repr(v) for v in schema['enum'])})".replace("'", '"'))
            params.append(f"  {name}: {_type_text(schema)}{'' if name in required else '?'},")
        lines.append(f"{tool.name}(" + ("\n" + "\n".join(params) + "\n" if params else "") + ")")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _type_text(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "array":
        return f"[{_type_text(schema.get('items', {}))}]"
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if is_any_value(schema):
        return "json"
    return kind if isinstance(kind, str) else "object"
