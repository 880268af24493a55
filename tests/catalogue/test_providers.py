"""One toolset, every provider's format, nothing lost."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from dagtools import compile_catalogue
from dagtools.catalogue._render import describe_tools, render_tool, render_tools


def kitchen_tool(name):
    from examples.kitchen.api import schema

    return compile_catalogue(schema._schema).tool(name)


def test_openai_anthropic_mcp_carry_the_same_schema():
    tool = kitchen_tool("Oven_bake")
    openai = render_tool(tool, "openai")
    assert openai == {"type": "function", "function": {"name": "Oven_bake", "description": tool.description, "parameters": tool.parameters}}
    assert render_tool(tool, "anthropic") == {"name": "Oven_bake", "description": tool.description, "input_schema": tool.parameters}
    mcp = render_tool(tool, "mcp")
    assert mcp["inputSchema"] == tool.parameters
    assert mcp["annotations"] == {"readOnlyHint": True, "destructiveHint": False}


def test_openai_strict_requires_everything_and_keeps_defaults_in_words():
    tool = kitchen_tool("Oven_bake")
    strict = render_tool(tool, "openai-strict")["function"]
    params = strict["parameters"]
    assert strict["strict"] is True
    assert params["required"] == ["Oven", "item", "settings"]
    assert params["properties"]["Oven"]["type"] == ["string", "null"]
    settings = params["properties"]["settings"]
    assert settings["type"] == ["object", "null"]
    assert settings["required"] == ["minutes", "temperature", "fan"]
    assert settings["additionalProperties"] is False
    minutes = settings["properties"]["minutes"]
    assert "default" not in minutes and "(default: 30; null uses it)" in minutes["description"]
    Draft202012Validator.check_schema(params)
    assert tool.parameters["properties"]["settings"]["properties"]["minutes"]["default"] == 30  # source untouched


def test_strict_enums_accept_null_when_optional():
    from graphql import build_schema

    tool = compile_catalogue(build_schema("enum Cut { A B } type Query { cut(kind: Cut): Int }")).tool("Query_cut")
    kind = render_tool(tool, "openai-strict")["function"]["parameters"]["properties"]["kind"]
    assert kind["enum"] == ["A", "B", None] and kind["type"] == ["string", "null"]


def test_gemini_inlines_refs():
    from graphql import build_schema

    tool = compile_catalogue(
        build_schema("""
        input F { and: [F!], name: String }
        type Query { items(where: F): Int }""")
    ).tool("Query_items")
    gemini = render_tool(tool, "gemini")
    text = json.dumps(gemini)
    assert "$ref" not in text and "$defs" not in text
    assert gemini["parameters"]["properties"]["where"]["properties"]["name"] == {"type": "string"}


def test_every_format_renders_every_kitchen_tool():
    from examples.kitchen.api import schema

    tools = compile_catalogue(schema._schema).tools()
    for fmt in ("openai", "openai-strict", "anthropic", "mcp", "gemini"):
        assert len(render_tools(tools, fmt)) == len(tools)


def test_describe_tools_reads_like_the_seed():
    text = describe_tools([kitchen_tool("Potato_slice")])
    assert "# Retrieves this potato cut into pieces." in text
    assert "Potato_slice(\n" in text
    assert '  # @enum("STICKS", "SLICES")\n  shape: string,' in text
