"""What the model reads after a write or a partial answer, on GraphQL servers someone else wrote.

- tests/js/mercurius.js on Mercurius (Fastify): `createSighting` refusing bad input with user errors
  (`errors: [UserError!]!`) and a null `sighting`; `closeIssue` returning a payload whose `issue` has
  a `state` enum; `reportIssue` answering a union of the issue and an error type; `Park.budget`,
  `Stats.revenue` and `Issue.estimate` failing FORBIDDEN while their objects' other fields resolve;
  `Park.sightings`, a list some of whose items fail. Mercurius writes list indexes in error paths
  as strings.
- tests/js/app.js on GraphQL Yoga: PostGraphile-style payloads (`updateMovieById` returning
  `{ movie, query, clientMutationId }`).

A mutation's payload, its objects (with their previews) and its user errors come back in the one
request that runs it; an error on a field the model did not ask for is a note, an error on the
asked field fails the call, and a list keeps the items the API could read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dagtools import Session, ToolCall
from tests.previews import rows
from tests.thirdparty import SERVER_VERSIONS, Recorded, _version, attempt, media_url, start_node_server  # noqa: F401 - fixtures

PARK = f"mercurius {_version('mercurius')} (fastify {_version('fastify')}, graphql {_version('graphql')})"


@pytest.fixture(scope="module")
def park_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The park app on Mercurius; yields its GraphQL URL."""
    with start_node_server("mercurius.js", "mercurius", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}/graphql"


async def call(session: Session, tool: str, /, **arguments: Any) -> Any:
    result = await attempt(session, tool, **arguments)
    assert not result.is_error, (result.value, PARK, SERVER_VERSIONS)
    return result.value


# -- mutation payloads (Mercurius) ------------------------------------------------------------------------


async def test_a_refused_write_shows_its_user_errors(park_url: str, recorded: Recorded) -> None:
    session, executor = await recorded(park_url, mutations=True, relay_ids=True)
    park = await call(session, "Query_park", name="Yellow Marsh")
    sent = len(executor.sent)
    refused = await call(session, "Mutation_createSighting", input={"parkId": park["result"], "species": "dragon", "count": 0})
    assert len(executor.sent) == sent + 1  # the payload and its errors came with the mutation
    assert refused["result"] == "CreateSightingPayload#1"
    preview = refused["preview"]
    assert preview["sighting"] is None
    assert [e["code"] for e in preview["errors"]] == ["INVALID", "INVALID"]
    assert preview["errors"][1] == {"message": "Count must be at least 1", "field": ["input", "count"], "code": "INVALID"}
    note = refused["note"]
    assert "refused with 2 errors" in note and "CreateSightingPayload#1.errors" in note
    assert 'input.species: Unknown species "dragon"' in note and "input.count: Count must be at least 1" in note
    assert session.registry.count("Sighting") == 0
    errors = await call(session, "CreateSightingPayload_errors")  # read from the snapshot, not sent again
    assert errors["result"] == ["UserError#1", "UserError#2"]
    assert await call(session, "UserError_message", UserError="UserError#2") == {"result": "Count must be at least 1"}
    assert await call(session, "UserError_field", UserError="UserError#2") == {"result": ["input", "count"]}
    assert len(executor.sent) == sent + 1


async def test_a_write_shows_the_object_it_made_with_its_preview(park_url: str, recorded: Recorded) -> None:
    session, executor = await recorded(park_url, mutations=True, relay_ids=True)
    park = await call(session, "Query_park", name="Stone Valley")
    sent = len(executor.sent)
    made = await call(session, "Mutation_createSighting", input={"parkId": park["result"], "species": "otter", "count": 2, "place": "weir"})
    assert len(executor.sent) == sent + 1
    sighting = made["preview"]["sighting"]
    assert sighting == "Sighting#1" and made["preview"]["errors"] == []
    assert made["objects"][sighting] == {"species": "otter", "count": 2, "place": "weir"}
    assert "note" not in made  # nothing refused, nothing left out
    again = await call(session, "CreateSightingPayload_sighting")
    assert again["result"] == sighting and again["preview"]["species"] == "otter"
    assert len(executor.sent) == sent + 1
    assert await call(session, "Sighting_count") == {"result": 2}  # re-rooted on its id: a query now


async def test_a_closed_issue_shows_its_state_and_the_field_it_may_not_read(park_url: str, recorded: Recorded) -> None:
    session, executor = await recorded(park_url, mutations=True, relay_ids=True)
    issue = await call(session, "Query_issue", number=2)
    assert issue["preview"]["state"] == "OPEN" and "estimate" not in issue["preview"]
    assert "estimate (FORBIDDEN: Not allowed to see estimates)" in issue["note"]
    sent = len(executor.sent)
    closed = await call(session, "Mutation_closeIssue", input={"issueId": issue["result"]})
    assert len(executor.sent) == sent + 1
    assert closed["result"] == "CloseIssuePayload#1"
    assert closed["preview"] == {"issue": issue["result"], "clientMutationId": None}
    assert closed["objects"][issue["result"]]["state"] == "CLOSED"
    assert "issue.estimate (FORBIDDEN: Not allowed to see estimates)" in closed["note"]  # read beside it: a note
    payload_issue = await call(session, "CloseIssuePayload_issue")
    assert payload_issue["result"] == issue["result"] and payload_issue["preview"]["state"] == "CLOSED"
    assert len(executor.sent) == sent + 1
    assert await call(session, "Issue_state") == {"result": "CLOSED"}


async def test_a_failed_write_and_an_error_answer_are_told_apart(park_url: str, recorded: Recorded) -> None:
    session, _ = await recorded(park_url, mutations=True)
    failed = await attempt(session, "Mutation_closeIssue", input={"issueId": "no-such-issue"})
    assert failed.is_error  # the error is on the asked field: the call fails, in the API's words
    assert "NOT_FOUND: no-such-issue is not the id of an issue (at closeIssue)" in failed.value["error"]
    problem = await call(session, "Mutation_reportIssue", title="  ")
    assert problem["result"] == "InputProblem#1"
    assert problem["preview"] == {"message": "A title is required", "field": "title"}
    assert "title: A title is required" in problem["note"] and "refused" in problem["note"]
    reported = await call(session, "Mutation_reportIssue", title="Gate stuck")
    assert reported["result"].startswith("Issue#") and reported["preview"]["title"] == "Gate stuck"
    assert "refused" not in reported.get("note", "")


# -- partial answers (Mercurius) ----------------------------------------------------------------------------


async def test_a_forbidden_preview_field_is_a_note_and_the_asked_one_an_error(park_url: str, recorded: Recorded) -> None:
    session, _ = await recorded(park_url)
    park = await call(session, "Query_park", name="Yellow Marsh")
    assert park["result"] == "Park#1" and park["preview"]["name"] == "Yellow Marsh"
    assert park["preview"]["stats"] == {"visitors": 5400, "month": "2025-05"}  # a small value read whole, but for revenue
    assert "budget (FORBIDDEN: Not allowed to see the budget)" in park["note"]
    budget = await attempt(session, "Park_budget")
    assert budget.is_error and "FORBIDDEN: Not allowed to see the budget" in budget.value["error"]
    stats = await call(session, "Park_stats")
    assert stats["preview"] == {"visitors": 5400, "month": "2025-05"}
    assert "revenue (FORBIDDEN: Not allowed to see revenue)" in stats["note"]
    revenue = await attempt(session, "Stats_revenue")
    assert revenue.is_error and "Not allowed to see revenue" in revenue.value["error"]
    assert await call(session, "Stats_visitors") == {"result": 5400}


async def test_a_list_keeps_the_items_the_api_could_read(park_url: str, recorded: Recorded) -> None:
    session, _ = await recorded(park_url)
    await call(session, "Query_park", name="Yellow Marsh")
    listed = await call(session, "Park_sightings")
    ids = listed["result"]
    assert len(ids) == 6 and ids[2] is None and ids[4] is None
    assert all(i is not None and i.startswith("Sighting#") for i in ids[:2] + ids[3:4] + ids[5:])
    assert rows(listed)[ids[0]]["species"] == "heron"
    note = listed["note"]
    assert "item 2 (Sighting 3 is under review)" in note and "item 4 (Sighting 5 has no species on record)" in note
    assert "null in the list" in note
    assert await call(session, "Sighting_place", Sighting=ids[3]) == {"result": "dam"}


async def test_a_turn_of_reads_judges_each_call_on_its_own(park_url: str, recorded: Recorded) -> None:
    session, executor = await recorded(park_url)
    first = await session.call_tools([ToolCall(name="Query_park", arguments={"name": n}) for n in ("Yellow Marsh", "Stone Valley")])
    assert [r.value["result"] for r in first] == ["Park#1", "Park#2"]
    assert all("FORBIDDEN" in r.value["note"] for r in first)
    sent = len(executor.sent)
    turn = [
        ToolCall(name="Park_budget", arguments={"Park": "Park#1"}),
        ToolCall(name="Park_name", arguments={"Park": "Park#2"}),
        ToolCall(name="Park_sightings", arguments={"Park": "Park#1"}),
        ToolCall(name="Park_stats", arguments={"Park": "Park#2"}),
    ]
    budget, name, sightings, stats = await session.call_tools(turn)
    assert len(executor.sent) == sent + 1  # one request for the turn
    assert budget.is_error and "Not allowed to see the budget (at node.budget)" in budget.value["error"]  # not `c0.budget`
    assert name.value == {"result": "Stone Valley"}
    assert sightings.value["result"][2] is None and "item 2 (Sighting 3 is under review)" in sightings.value["note"]
    assert stats.value["preview"] == {"visitors": 2100, "month": "2025-05"} and "revenue" in stats.value["note"]


# -- mutation payloads (GraphQL Yoga) ------------------------------------------------------------------------


async def test_media_payload_shows_the_movie_and_no_dead_query_tool(media_url: str, recorded: Recorded) -> None:
    session, executor = await recorded(media_url, mutations=True)
    sent = len(executor.sent)
    updated = await call(session, "Mutation_updateMovieById", input={"id": 3, "moviePatch": {"rating": 4, "tagline": "Again"}})
    assert len(executor.sent) == sent + 1
    assert updated["result"] == "UpdateMoviePayload#1"
    movie = updated["preview"]["movie"]
    assert movie.startswith("Movie#") and "query" not in updated["preview"]
    assert updated["objects"][movie]["title"] == "Movie C" and updated["objects"][movie]["rating"] == 4
    again = await call(session, "UpdateMoviePayload_movie")
    assert again["result"] == movie and again["preview"]["tagline"] == "Again"
    root = await attempt(session, "UpdateMoviePayload_query")
    assert root.is_error and "query root: call the Query tools themselves" in root.value["error"]
    assert len(executor.sent) == sent + 1
    refused = await attempt(session, "Mutation_updateMovieById", input={"id": 3, "moviePatch": {"rating": 9}})
    assert refused.is_error and "rating must be between 1 and 5" in refused.value["error"], SERVER_VERSIONS["media"]
    assert session.registry.count("UpdateMoviePayload") == 1


async def test_a_write_whose_answer_was_lost_says_it_may_have_happened(park_url: str, recorded: Recorded) -> None:
    session, _ = await recorded(park_url, mutations=True, relay_ids=True)
    park = await call(session, "Query_park", name="Stone Valley")
    before = (await call(session, "Park_stats"))["preview"]["visitors"]
    lost = await attempt(session, "Mutation_recordVisit", parkId=park["result"])
    assert lost.is_error  # a non-null `receipt.total` failed, and took the whole payload down
    message = lost.value["error"]
    assert "ran, but the API could not send its result back" in message and "check with a query" in message
    assert "FORBIDDEN: Not allowed to see receipt totals (at recordVisit.receipt.total)" in message
    assert "Nothing was created" not in message
    after = await call(session, "Park_stats", Park=park["result"])
    assert after["preview"]["visitors"] == before + 1  # it did run
    assert session.registry.count("VisitPayload") == 0
