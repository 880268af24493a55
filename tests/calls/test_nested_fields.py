"""`fields` as a model writes it from GraphQL it knows, on the Relay example API (in process and over HTTP):

- a path may start with a page's way to its items (`nodes.title`, `edges.node.title`): read of each item,
  the same as the path without it;
- a path may go through a list or a connection with no required argument: a first page of it is read
  (`first` as a variable), every object reached is a handle with its own columns, and a list cut short
  is named with the tool that reads it whole; all the lists of one call reach a bounded number of rows;
- a step of `callChain` takes `fields` like its tool;
- a call that names its fields shows just those and the column naming each object, reads nothing
  unasked, and later pages of the type show their usual columns with the named ones;
- what is wrong is refused before anything is sent, and changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from dagtools import Session, ToolCall
from dagtools.calls import _field
from dagtools.calls._preview_pages import rows_of
from dagtools.calls._selections import NESTED_ITEMS
from tests.transports import Transport, relay_session


async def call(session: Session, tool: str, /, **arguments: Any) -> Any:
    result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
    assert not result.is_error, result.value
    return result.value


async def refused(session: Session, tool: str, /, **arguments: Any) -> str:
    result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
    assert result.is_error, result.value
    return str(result.value["error"])


def more_issues(store: Any, repository: str, count: int) -> None:
    """`count` more open issues in `repository`, numbered after the seeded ones."""
    for _ in range(count):
        number = max(store.issues) + 1
        store.issues[number] = {
            "number": number,
            "repository": repository,
            "title": f"Issue {number}",
            "author": "ada",
            "body": ".",
            "state": "OPEN",
            "labels": [],
        }


async def test_a_path_through_a_connections_items_reads_each_item(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    repository = (await call(session, "Query_repository", name="engine"))["result"]
    plain = await call(session, "Repository_issues", Repository=repository, first=3, fields=["body", "author.login"])
    sent = executor.sent[-1]
    for written in (["nodes.body", "edges.node.author.login"], ["edges.node.body", "nodes.author.login"]):
        page = await call(session, "Repository_issues", Repository=repository, first=3, fields=written)
        assert executor.sent[-1] == sent  # the same document: the prefix only said "of each item"
        assert page == plain
    rows = rows_of(plain["preview"])
    assert all(rows[i]["body"] and rows[rows[i]["author"]]["login"] for i in plain["result"])


async def test_a_connection_on_the_way_reads_a_bounded_first_page(transport: Transport) -> None:
    session, store, executor = relay_session(transport)
    more_issues(store, "engine", 8)  # engine: 13 issues, compiler: 2
    page = await call(session, "Query_repositories", fields=["name", "issues.title"])
    assert len(executor.sent) == 1
    text, variables = executor.sent[0]
    assert "issues(first: $nestedFirst)" in text and variables == {"nestedFirst": NESTED_ITEMS}  # a variable, never in the text
    rows = rows_of(page["preview"])
    engine, compiler = page["result"]
    # every issue read is linked from its row: the IDs are not cut like other lists
    assert len([i for i in rows[engine]["issues"] if i.startswith("Issue#")]) == NESTED_ITEMS and rows[engine]["issues"][-1] == "+more"
    assert [rows[i]["title"] for i in rows[compiler]["issues"]] == ["Moth found in relay 70", "Write the programming manual"]
    issues = [i for i in rows if i.startswith("Issue#")]
    assert len(issues) == NESTED_ITEMS + 2  # every issue read is a handle with its own row, on the same page
    assert f"{engine}.issues" in page["note"] and "Repository_issues" in page["note"] and f"{compiler}.issues" not in page["note"]
    assert "Every list read on the way is whole" not in page["note"]  # one was cut
    # the objects reached are handles like any other: the list's own tool reads the same ones, and the rest
    whole = await call(session, "Repository_issues", Repository=engine, first=20)
    assert whole["result"][:NESTED_ITEMS] == [i for i in issues if i not in rows[compiler]["issues"]] and len(whole["result"]) == 13


async def test_lists_under_lists_reach_a_bounded_number_of_rows(transport: Transport, monkeypatch: pytest.MonkeyPatch) -> None:
    session, _, _ = relay_session(transport)
    page = await call(session, "Query_repositories", fields=["issues.comments.body"])
    rows = rows_of(page["preview"])
    first_issue = rows[page["result"][0]]["issues"][0]
    assert [rows[c]["body"] for c in rows[first_issue]["comments"]] == ["I can reproduce this.", "Labelled as bug."]
    assert page["note"] == "Every list read on the way is whole."  # "how many comments" needs no second read
    monkeypatch.setattr(_field, "NESTED_ROWS", 4)
    session, _, _ = relay_session(transport)
    page = await call(session, "Query_repositories", fields=["issues.comments.body"])
    reached = [e.id for e in session.registry if e.type_name in ("Issue", "Comment")]
    assert len(reached) == 4  # issues and their comments together
    assert "Lists read on the way stop" in page["note"]


async def test_reads_with_nested_pages_share_one_request(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    await call(session, "Query_repositories")
    executor.sent.clear()
    results = await session.call_tools(
        [
            ToolCall(name="Query_repository", arguments={"name": "engine", "fields": ["issues.title"]}),
            ToolCall(name="Query_repository", arguments={"name": "compiler", "fields": ["issues.title"]}),
        ]
    )
    assert not any(r.is_error for r in results), [r.value for r in results]
    (text, variables), *_ = executor.sent
    assert len(executor.sent) == 1 and variables.get("c0_nestedFirst") == variables.get("c1_nestedFirst") == NESTED_ITEMS
    assert all(r.value["objects"] for r in results)


async def test_a_chain_step_takes_fields_like_its_tool(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    steps = [
        {"tool": "Query_repository", "arguments": {"name": "engine", "fields": ["owner.name"]}},
        {"tool": "Repository_issues", "arguments": {"first": 2, "fields": ["author.login", "comments.body"]}},
    ]
    chained = await call(session, "callChain", steps=steps)
    assert len(executor.sent) == 1
    rows = rows_of(chained["preview"])
    issues = chained["result"]["Repository#1"]
    assert all(rows[rows[i]["author"]]["login"] for i in issues)  # reached, minted, with their own columns
    assert [rows[c]["body"] for c in rows[issues[0]]["comments"]] == ["I can reproduce this.", "Labelled as bug."]
    assert rows[rows["Repository#1"]["owner"]]["name"] == "Ada Lovelace"  # a step on the way reads what it names too


async def test_a_step_on_the_way_shows_no_row_that_only_repeats_its_name(transport: Transport) -> None:
    session, _, _ = relay_session(transport)
    named_only = [
        {"tool": "Query_repositories", "arguments": {"fields": ["name"]}},
        {"tool": "Repository_issues", "arguments": {"first": 2}},
    ]
    chained = await call(session, "callChain", steps=named_only)
    assert chained["objects"] == {"Repository#1": "engine", "Repository#2": "compiler"}
    assert not any(i.startswith("Repository#") for i in rows_of(chained["preview"]))  # `objects` says it already
    more = [{"tool": "Query_repositories", "arguments": {"fields": ["name", "description"]}}, {"tool": "Repository_issues"}]
    rows = rows_of((await call(session, "callChain", steps=more))["preview"])
    assert rows["Repository#1"]["description"] == "The analytical engine."  # a row that says more stays


async def test_wrong_paths_are_refused_before_anything_is_sent(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    repository = (await call(session, "Query_repository", name="engine"))["result"]
    sent, held = len(executor.sent), len(session.registry)
    said = await refused(session, "Repository_issues", Repository=repository, fields=["nodes.titel"])
    assert "Issue has no field 'titel'" in said and "did you mean 'title'" in said
    assert "name a field of them" in await refused(session, "Repository_issues", Repository=repository, fields=["edges.node"])
    assert "takes arguments" in await refused(session, "Query_repositories", fields=["issue.title"])  # a required argument
    assert "at most 3" in await refused(session, "Query_repositories", fields=["issues.comments.author.login"])
    steps: list[dict[str, Any]] = [
        {"tool": "Query_repository", "arguments": {"name": "engine"}},
        {"tool": "Repository_issues", "arguments": {"fields": ["titel"]}},
    ]
    said = await refused(session, "callChain", steps=steps)
    assert said.startswith("Step 2 of the chain:") and "did you mean 'title'" in said and "Nothing was sent" in said
    steps[0]["arguments"] = {"name": "engine", "fields": ["issues.title"]}
    steps[1]["arguments"] = {}
    assert "leave issues out of those fields" in await refused(session, "callChain", steps=steps)
    assert len(executor.sent) == sent and len(session.registry) == held


async def test_named_fields_are_all_a_page_shows(transport: Transport) -> None:
    session, _, executor = relay_session(transport)
    repository = (await call(session, "Query_repository", name="engine"))["result"]
    usual = await call(session, "Repository_issues", Repository=repository, first=3)
    assert len(usual["preview"]["Issue"]["columns"]) > 2 and any(t.startswith("Repository") for t in usual["preview"])
    named = await call(session, "Repository_issues", Repository=repository, first=3, fields=["state", "author.login"])
    text, _ = executor.sent[-1]
    assert "repository" not in text  # a reference no one asked for is not read
    table = named["preview"]
    assert table["Issue"]["columns"] == ["title", "state", "author"]  # the naming column, then what was named
    assert set(table["User"]["columns"]) <= {"name", "login"} and "login" in table["User"]["columns"]
    assert {k for k in table if "#" not in k} == {"Issue", "User"} and "note" not in named
    rows = rows_of(table)
    assert [rows[rows[i]["author"]]["login"] for i in named["result"]] == ["ada", "alan", "grace"]
    # the named fields stay columns of their type for later pages, beside the usual ones
    later = await call(session, "Repository_issues", Repository=repository, first=3)
    assert {"state", "author"} <= set(later["preview"]["Issue"]["columns"]) and len(later["preview"]["Issue"]["columns"]) > 3


async def test_a_chain_shows_just_the_fields_its_steps_named(transport: Transport) -> None:
    session, _, _ = relay_session(transport)
    steps = [
        {"tool": "Query_repository", "arguments": {"name": "engine"}},
        {"tool": "Repository_issues", "arguments": {"first": 2, "fields": ["number"]}},
    ]
    chained = await call(session, "callChain", steps=steps)
    assert chained["preview"]["Issue"]["columns"] == ["title", "number"]


async def test_what_a_call_names_keeps_room_on_a_full_page(transport: Transport) -> None:
    """A long page asked for fields through a list: the room a note would need goes to what was named,
    as such a call gets no note on what was left out."""
    session, store, _ = relay_session(transport)
    for n in range(45):
        store.repositories[f"r{n}"] = {"name": f"r{n}", "description": ".", "owner": "ada"}
    more_issues(store, "r0", 1)
    page = await call(session, "Query_repositories", fields=["name", "issues.title", "issues.author.login"])
    rows = rows_of(page["preview"])
    issues = [i for i in rows if i.startswith("Issue#")]
    assert len(issues) == 8 and all(rows[rows[i]["author"]]["login"] for i in issues), page
    assert page["note"] == "Every list read on the way is whole."  # and nothing on what was left out
