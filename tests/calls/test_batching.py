"""One model turn through `Session.call_tools`: reads share one aliased request, writes run in order."""

from __future__ import annotations

from typing import Any

from dagtools import Session, ToolCall, compile_catalogue
from dagtools.session._context import Message
from examples.kitchen.api import schema as kitchen
from examples.relay.api import make_schema
from tests.transports import Transport, relay_session


def calls(*specs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(name=name, arguments=arguments) for name, arguments in specs]


async def setup_issues(session: Session) -> None:
    results = await session.call_tools(calls(("Query_repository", {"name": "engine"}), ("Query_repository", {"name": "compiler"})))
    assert [r.value["result"] for r in results] == ["Repository#1", "Repository#2"]
    results = await session.call_tools(calls(*[("Repository_issue", {"Repository": "Repository#1", "number": n}) for n in (1, 2, 3)]))
    assert [r.value["result"] for r in results] == ["Issue#1", "Issue#2", "Issue#3"]


async def test_a_turn_of_five_reads_is_one_request(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    await setup_issues(session)
    executor.sent.clear()
    results = await session.call_tools(
        calls(
            ("Issue_title", {"Issue": "Issue#1"}),
            ("Issue_state", {"Issue": "Issue#2"}),
            ("Issue_author", {"Issue": "Issue#3"}),
            ("Repository_stats", {"Repository": "Repository#1"}),
            ("Repository_issues", {"Repository": "Repository#2", "first": 1}),
        )
    )
    assert len(executor.sent) == 1
    text, variables = executor.sent[0]
    assert text.startswith("query(") and "c0: node(id: $c0_v0)" in text and "c4: node(id: $c4_v0)" in text
    assert len(variables) == 6
    values = [r.value for r in results]
    assert values[0] == {"result": "Carry propagation is slow"}
    assert values[1] == {"result": "CLOSED"}
    assert values[2]["result"] == "User#2"  # Grace, met as the compiler's owner when the repositories were read
    assert session.object("User#2").preview["name"] == "Grace Hopper"
    assert values[3]["preview"] == {"openIssues": 4, "closedIssues": 1, "comments": 3}
    assert values[4]["result"] == ["Issue#4"] and "more" in values[4]
    assert not any(r.is_error for r in results)


async def test_results_match_running_the_calls_one_by_one(transport: Transport) -> None:
    turn = calls(
        ("Query_repository", {"name": "engine"}),
        ("Repository_issues", {"first": 2}),
        ("Issue_title", {}),
        ("Query_viewer", {}),
        ("User_name", {}),
    )
    one, _, _ = relay_session(transport)
    expected = [(await one.call_tool(c)).value for c in turn]
    batched, _, executor = relay_session(transport)
    got = [r.value for r in await batched.call_tools(turn)]
    assert got == expected
    assert len(executor.sent) < len(turn)


async def test_an_error_stays_with_its_call(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    await setup_issues(session)
    executor.sent.clear()
    results = await session.call_tools(
        calls(
            ("Issue_title", {"Issue": "Issue#9"}),
            ("Issue_title", {"Issue": "Issue#1"}),
            ("Repository_issues", {"Repository": "Repository#1", "after": "bogus"}),
            ("Repository_issue", {"Repository": "Repository#1", "number": 99}),
            ("Issue_body", {"Issue": "Issue#3"}),
        )
    )
    assert len(executor.sent) == 1
    assert [r.is_error for r in results] == [True, False, True, False, False]
    assert "There is no object Issue#9" in results[0].value["error"]
    assert "not a cursor" in results[2].value["error"] and "(at c1." not in results[2].value["error"]
    assert results[3].value["result"] is None and "is null" in results[3].value["note"]  # null is an answer
    assert results[4].value == {"result": "Punch cards jam in the reader."}


async def test_an_error_that_nulls_the_whole_answer_still_fails_only_its_call(transport: Transport) -> None:
    executor = transport.executor(kitchen)
    catalogue = compile_catalogue(kitchen._schema)
    session = Session(catalogue, executor)
    session.select(catalogue.names())
    await session.call_tools(
        calls(
            ("Query_potato", {}),
        )
    )
    await session.call_tools(
        calls(
            ("Potato_peel", {}),
        )
    )
    executor.sent.clear()
    results = await session.call_tools(calls(("Potato_peel", {"Potato": "Potato#2"}), ("Potato_variety", {"Potato": "Potato#1"})))
    assert results[0].is_error and "already peeled" in results[0].value["error"]
    assert results[1].value == {"result": "Russet"}
    assert len(executor.sent) == 3  # the batch, then each call alone


async def test_writes_run_in_order_and_reads_see_the_state_around_them(transport: Transport) -> None:
    session, store, executor = relay_session(transport, mutations=True)
    await setup_issues(session)
    executor.sent.clear()
    results = await session.call_tools(
        calls(
            ("Issue_state", {"Issue": "Issue#1"}),
            ("Repository_stats", {"Repository": "Repository#1"}),
            ("Mutation_closeIssue", {"issueId": "Issue#1"}),
            ("Issue_state", {"Issue": "Issue#1"}),
            ("Mutation_addComment", {"issueId": "Issue#1", "body": "Closed."}),
            ("Issue_comments", {"Issue": "Issue#1"}),
        )
    )
    assert [r.value["result"] for r in results[:2]] == ["OPEN", "Stats#1"]
    assert results[3].value == {"result": "CLOSED"}
    assert len(results[5].value["result"]) == 3
    assert store.calls == {"closeIssue": 1, "addComment": 1}
    assert [t.split("(")[0].split(" ")[0] for t in executor.documents] == ["query", "mutation", "query", "mutation", "query"]


async def test_a_read_that_needs_an_object_from_the_same_turn_waits_for_it(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    results = await session.call_tools(
        calls(
            ("Query_repository", {"name": "compiler"}),
            ("Repository_description", {}),
            ("Repository_issue", {"Repository": "Repository#1", "number": 6}),
            ("Issue_title", {"Issue": "Issue#1"}),
        )
    )
    assert [r.is_error for r in results] == [False, False, False, False]
    assert results[1].value == {"result": "The A-0 compiler."}
    assert results[3].value == {"result": "Moth found in relay 70"}


async def test_select_tools_in_a_turn_takes_effect_for_the_calls_after_it(transport: Transport) -> None:
    api = make_schema()
    session = Session(compile_catalogue(api._schema), transport.executor(api))
    results = await session.call_tools(
        calls(("Query_viewer", {}), ("selectTools", {"tools": ["Query_viewer", "User_name"]}), ("Query_viewer", {}), ("User_name", {}))
    )
    assert results[0].is_error and "not selected yet" in results[0].value["error"]
    assert results[1].value == "ok"
    assert results[3].value == {"result": "Ada Lovelace"}


async def test_call_tools_records_the_turn_in_the_context(transport: Transport) -> None:
    session, _, _ = relay_session(transport)
    results = await session.call_tools(calls(("Query_viewer", {}), ("Query_repository", {"name": 3})))
    messages: list[Message] = list(session.context)
    assert len(messages) == 3
    assert messages[0].role == "assistant" and [c.name for c in messages[0].tool_calls] == ["Query_viewer", "Query_repository"]
    assert [m.tool_call_id for m in messages[1:]] == [r.call_id for r in results]
    assert messages[2].is_error


async def test_execute_tools_leaves_the_context_alone(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    results = await session.execute_tools(calls(("Query_viewer", {}), ("Query_repositories", {})))
    assert results[1].value["result"] == ["Repository#1", "Repository#2"]
    assert len(session.context) == 0 and len(executor.sent) == 1


async def test_client_tools_in_a_turn_are_left_pending(transport: Transport) -> None:
    from dagtools import Tool

    session, _, _ = relay_session(transport)
    session.add_tool(Tool(name="askUser", description="Ask the user.", parameters={"type": "object"}))
    results = await session.call_tools(calls(("Query_viewer", {}), ("askUser", {})))
    assert results[1].pending
    session.tool_call_result(results[1].call_id, "yes")
    assert session.context.has_result(results[1].call_id)
