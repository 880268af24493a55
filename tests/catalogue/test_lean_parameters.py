"""Lean parameter schemas: every tool's schema fits a budget, deep input objects are summarised with
the dotted path `describeTools` spells out, and a model still reaches a nested filter field on Linear
and sends it, checked against the full input type."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dagtools import LocalExecutor, Session, compile_catalogue
from dagtools._errors import ToolCallError
from dagtools.catalogue._json_schema import PARAMETER_BUDGET
from dagtools.mcpserver.sessions import FixedToolset
from tests.conftest import load_shared, shared_catalogue

pytestmark = pytest.mark.public_schemas  # about the public APIs themselves (tests/conftest.py)

TOKEN_BUDGET = 1_000
BUDGETED = [
    "linear.schema.graphql",
    "github.schema.json",
    "shopify.storefront.schema.json",
    "shopify.customer-account.schema.json",
]


def _encoding() -> Any:
    try:
        import bpe_openai
    except ImportError:
        print("bpe-openai is not installed (pip install -e '.[bench]'): counting bytes only")
        return None
    return bpe_openai.get_encoding("o200k_base")


@pytest.mark.parametrize("name", BUDGETED)
def test_every_tool_schema_fits_the_budget_and_is_valid_2020_12(name):
    catalogue = shared_catalogue(name)
    encoding = _encoding()
    validator = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    over: list[tuple[str, int, int | None]] = []
    checked: set[str] = set()
    for tool in catalogue.tools():
        text = json.dumps(tool.parameters)
        if text in checked:
            continue
        checked.add(text)
        tokens = len(encoding.encode(text)) if encoding is not None else None
        if len(text) > PARAMETER_BUDGET or (tokens is not None and tokens > TOKEN_BUDGET):
            over.append((tool.name, len(text), tokens))
        errors = list(validator.iter_errors(tool.parameters))
        assert not errors, (tool.name, errors[0].message)
    assert not over, over[:5]


def test_linear_issues_summarises_its_filter_and_names_the_path():
    catalogue = shared_catalogue("linear.schema.graphql")
    parameters = catalogue.tool("Query_issues").parameters
    summary = parameters["$defs"]["IssueFilter"]
    assert "properties" not in summary and "additionalProperties" not in summary  # any nested value goes
    assert "describeTools Query_issues.filter" in summary["description"]
    Draft202012Validator(parameters).validate({"filter": {"state": {"name": {"eq": "Done"}}}, "first": 5})


def linear_session() -> tuple[Session, list[dict[str, Any]]]:
    """Linear's schema run in process with resolvers that find no issues; the documents are validated."""
    schema = load_shared("linear.schema.graphql").schema
    page = {"hasNextPage": False, "hasPreviousPage": False, "startCursor": None, "endCursor": None}
    root = {"issues": {"nodes": [], "edges": [], "pageInfo": page}}
    sent: list[dict[str, Any]] = []

    class Recording(LocalExecutor):
        async def execute(self, document: str, variables: dict[str, Any] | None = None, **kwargs: Any):
            sent.append({"document": document, "variables": variables})
            return await super().execute(document, variables, **kwargs)

    executor = Recording(schema, root_value=root, validate_documents=True)
    return Session(compile_catalogue(schema), executor), sent


async def test_a_caller_reaches_a_nested_linear_filter_field_through_describe_tools():
    session, sent = linear_session()
    fixed = FixedToolset(session)

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        tool = fixed.get(name)
        assert tool is not None, name
        return await fixed.call_tool(tool, arguments)

    encoding = _encoding()
    described = await call("describeTools", {"tools": ["Query_issues"]})
    path = "Query_issues"
    for step in ("filter", "state", "name"):
        # The caller follows the hint the summary gives, one level at a time.
        schema = described["tools"][0]["inputSchema"] if path == "Query_issues" else described["parts"][0]["schema"]
        text = json.dumps(schema)
        assert len(text) <= PARAMETER_BUDGET + 100, (path, len(text))
        if encoding is not None:
            assert len(encoding.encode(text)) <= TOKEN_BUDGET, path
        assert f"describeTools {path}" in text or step in schema.get("properties", {}), (path, text[:300])
        path = f"{path}.{step}"
        described = await call("describeTools", {"tools": [path]})
        assert described["parts"][0]["path"] == path
    leaf = described["parts"][0]
    assert leaf["type"] == "StringComparator"
    assert "eq" in leaf["schema"]["properties"]

    await call("callTool", {"tool": "Query_issues", "arguments": {"filter": {"state": {"name": {"eq": "Done"}}}, "first": 5}})
    assert sent[-1]["variables"] and {"state": {"name": {"eq": "Done"}}} in sent[-1]["variables"].values()


async def test_a_bad_nested_value_is_refused_before_sending_and_names_the_path_to_describe():
    session, sent = linear_session()
    fixed = FixedToolset(session)
    call_tool = fixed.get("callTool")
    assert call_tool is not None
    with pytest.raises(ToolCallError) as raised:
        await fixed.call_tool(call_tool, {"tool": "Query_issues", "arguments": {"filter": {"state": {"name": {"eqq": "Done"}}}}})
    assert "describeTools Query_issues.filter.state.name" in str(raised.value)
    assert sent == []  # nothing invalid reached the API


async def test_describe_tools_says_which_part_there_is_when_a_path_is_wrong():
    session, _ = linear_session()
    fixed = FixedToolset(session)
    describe = fixed.get("describeTools")
    assert describe is not None
    with pytest.raises(ToolCallError, match=r"has no 'filtr'.*filter"):
        await fixed.call_tool(describe, {"tools": ["Query_issues.filtr"]})
    with pytest.raises(ToolCallError, match="Query_issue"):
        await fixed.call_tool(describe, {"tools": ["Query_issuez.filter"]})
