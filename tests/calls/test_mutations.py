"""Mutations: off unless the host allows them, run exactly once, and never re-run to reach a field."""

from __future__ import annotations

import pytest

from dagtools import ToolCall, compile_catalogue
from examples.relay.api import make_schema
from tests.transports import Transport, call, relay_session


def test_mutations_are_off_by_default() -> None:
    catalogue = compile_catalogue(make_schema()._schema)
    assert not [n for n in catalogue.names() if n.startswith("Mutation_")]


async def test_a_mutation_the_host_did_not_allow_is_refused_with_a_reason(transport: Transport) -> None:
    session, store, executor = relay_session(transport)
    result = await session.call_tool(ToolCall(name="Mutation_closeIssue", arguments={"issueId": "Issue#1"}))
    assert result.is_error and "does not allow mutations" in result.value["error"]
    assert not store.calls and not executor.sent


def test_allow_all() -> None:
    catalogue = compile_catalogue(make_schema()._schema, mutations=True)
    assert {n for n in catalogue.names() if n.startswith("Mutation_")} == {
        "Mutation_createIssue",
        "Mutation_addComment",
        "Mutation_closeIssue",
    }


@pytest.mark.parametrize("allowed", [["addComment"], ["Mutation_addComment"]])
def test_allow_list(allowed: list[str]) -> None:
    catalogue = compile_catalogue(make_schema()._schema, mutations=allowed)
    assert [n for n in catalogue.names() if n.startswith("Mutation_")] == ["Mutation_addComment"]


def test_mutation_tools_are_marked_destructive() -> None:
    catalogue = compile_catalogue(make_schema()._schema, mutations=True)
    tool = catalogue.tool("Mutation_addComment")
    assert (tool.read_only, tool.destructive) == (False, True)
    query = catalogue.tool("Query_repository")
    assert (query.read_only, query.destructive) == (True, False)


async def test_result_with_identity_is_re_rooted_and_the_mutation_runs_once(transport: Transport) -> None:
    session, store, executor = relay_session(transport, mutations=True)
    await call(session, "Query_repository", name="engine")
    created = await call(session, "Mutation_createIssue", repositoryId="Repository#1", title="Gears grind")
    assert store.calls["createIssue"] == 1
    issue = session.object(created["result"])
    assert issue.handle.operation == "query"
    assert [s.field for s in issue.handle.steps] == ["node"]
    assert created["preview"]["title"] == "Gears grind"
    assert await call(session, "Issue_state") == {"result": "OPEN"}
    assert (await call(session, "Issue_repository"))["result"] == "Repository#1"
    assert store.calls["createIssue"] == 1
    assert sum(text.startswith("mutation") for text in executor.documents) == 1


async def test_result_without_identity_is_a_snapshot_that_never_re_runs(transport: Transport) -> None:
    session, store, executor = relay_session(transport, mutations=True)
    await call(session, "Query_repository", name="engine")
    await call(session, "Repository_issue", number=1)
    added = await call(session, "Mutation_addComment", issueId="Issue#1", body="On it.")
    payload = session.object(added["result"])
    assert payload.handle.operation == "mutation" and payload.handle.is_snapshot
    assert store.calls["addComment"] == 1
    sent = len(executor.sent)
    assert await call(session, "AddCommentPayload_totalComments") == {"result": 3}
    assert await call(session, "AddCommentPayload_totalComments") == {"result": 3}
    assert len(executor.sent) == sent  # served from the snapshot
    comment = await call(session, "AddCommentPayload_comment")
    assert comment["result"] == "Comment#1"
    assert [s.field for s in session.object("Comment#1").handle.steps] == ["node"]
    assert await call(session, "Comment_body") == {"result": "On it."}
    issue = await call(session, "AddCommentPayload_issue")  # read with the mutation: its preview too
    assert issue["result"] == "Issue#1" and issue["preview"]["state"] == "OPEN"
    assert store.calls["addComment"] == 1
    assert sum(text.startswith("mutation") for text in executor.documents) == 1
    assert len(store.comments) == 4


async def test_snapshot_fields_not_read_say_so(transport: Transport) -> None:
    session, store, _ = relay_session(transport, mutations=True)
    await call(session, "Query_repository", name="engine")
    await call(session, "Repository_issue", number=1)
    closed = await call(session, "Mutation_closeIssue", issueId="Issue#1")
    assert session.object(closed["result"]).handle.is_snapshot
    assert await call(session, "CloseIssuePayload_openIssues") == {"result": 3}
    assert await call(session, "CloseIssuePayload_wasOpen") == {"result": True}
    assert store.calls["closeIssue"] == 1


async def test_a_failing_mutation_creates_nothing(transport: Transport) -> None:
    session, store, _ = relay_session(transport, mutations=True)
    await call(session, "Query_repository", name="engine")
    refused = await session.call_tool(ToolCall(name="Mutation_addComment", arguments={"issueId": "Repository#1", "body": "x"}))
    assert refused.is_error and "takes an Issue" in refused.value["error"]  # checked before anything is sent
    assert store.calls["addComment"] == 0
    repository_global_id = session.object("Repository#1").identity  # a raw global id reaches the API as it is
    result = await session.call_tool(ToolCall(name="Mutation_addComment", arguments={"issueId": repository_global_id, "body": "x"}))
    assert result.is_error and "not the id of an issue" in result.value["error"]
    assert store.calls["addComment"] == 1
    assert session.registry.count("AddCommentPayload") == 0
