"""Writes and refusals on two server families the other tests do not start, over real HTTP.

- tests/js/workshops.js, TypeGraphQL with class-validator (Node, classes and decorators): `Workshop`
  is read again only through `session(id:): Session`, an interface; `Room` only through
  `bookable(id:): Bookable`, a union; `Comment` through no lookup at all (its workshop's list).
- tests/pyservers/jobs_django.py, graphene-django on Django's ORM and SQLite with pydantic (Python):
  `JobNode` is read again only through Relay's `node(id:)`; `Company` only through
  `employer(id:): Employer`, a union.

What they show, whatever the lookup returns:
- a write that returns an object the session holds shows it as that `Type#N`, nested in a payload
  or in a list, with the values the write read back, and the handle then answers those values, never
  the ones from before the write (the handle's reads are recorded: the new value comes from the API
  or from the write's own answer);
- a payload kept from an earlier write never lends its older copy of an object back to the handle;
- a host's named write operation names the held objects it returns too, and what the session holds
  of them becomes what the write read back;
- a refusal leads with its reason: class-validator's `constraints` and pydantic's `msg` for every
  field are read before the echo of the input both libraries send first, within the cap on errors.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from dagtools import Session, open_session
from tests.previews import rows
from tests.recording import RecordingExecutor
from tests.thirdparty import Recorded, attempt, jobs_url, workshops_url  # noqa: F401 - fixtures
from tests.thirdparty import call_ok as call


@pytest.fixture
def opened(recorded: Recorded) -> Recorded:
    """The shared `recorded`, with mutations allowed: these tests write and then read again."""
    return functools.partial(recorded, mutations=True)


async def refused(session: Session, tool: str, /, **arguments: Any) -> str:
    result = await attempt(session, tool, **arguments)
    assert result.is_error, (tool, result.value)
    return str(result.value["error"])


def where(executor: RecordingExecutor) -> int:
    return len(executor.sent)


# -- TypeGraphQL: interface and union lookups, nested and listed payloads ------------------------------


async def test_a_booking_shows_the_held_workshop_as_its_handle_and_the_handle_reads_the_new_seats(opened: Recorded, workshops_url: str):
    session, executor = await opened(workshops_url)
    assert session.catalogue.identity("Workshop") is not None, "session(id:): Session is the lookup of a Workshop"
    listed = await call(session, "Query_sessions")
    first = listed["result"][0]
    assert first == "Workshop#1" and rows(listed)[first]["seatsLeft"] == 1
    assert (await call(session, "Workshop_seatsLeft", Workshop=first))["result"] == 1

    booked = await call(session, "Mutation_book", input={"workshopId": "w1", "attendee": "Ada"})
    assert booked["preview"]["booking"]["workshop"] == first, booked  # the handle, not an inline copy
    assert rows(booked, "objects")[first]["seatsLeft"] == 0, booked

    before = where(executor)
    assert (await call(session, "Workshop_seatsLeft", Workshop=first))["result"] == 0
    assert where(executor) == before + 1, "the handle is re-rooted on session(id:): the value comes from the API"
    assert "session(" in executor.documents[-1] and "... on Workshop" in executor.documents[-1]

    full = await refused(session, "Mutation_book", input={"workshopId": "w1", "attendee": "Bo"})
    assert "GraphQL for agents is full" in full
    assert (await call(session, "Workshop_seatsLeft", Workshop=first))["result"] == 0


async def test_a_list_a_write_returns_shows_held_workshops_with_their_new_seats(opened: Recorded, workshops_url: str):
    session, _ = await opened(workshops_url)
    listed = await call(session, "Query_sessions")
    second = listed["result"][1]
    seats = rows(listed)[second]["seatsLeft"]
    booked = await call(session, "Mutation_bookMany", workshopIds=["w2", "w2"], attendee="Cy")
    assert booked["result"] == [second, second]
    assert rows(booked)[second]["seatsLeft"] == seats - 2
    assert (await call(session, "Workshop_seatsLeft", Workshop=second))["result"] == seats - 2


async def test_an_older_payload_never_lends_its_copy_back_to_the_handle(opened: Recorded, workshops_url: str):
    session, _ = await opened(workshops_url)
    listed = await call(session, "Query_sessions")
    second = listed["result"][1]
    seats = rows(listed)[second]["seatsLeft"]
    earlier = await call(session, "Mutation_book", input={"workshopId": "w2", "attendee": "Di"})
    later = await call(session, "Mutation_book", input={"workshopId": "w2", "attendee": "Ed"})
    assert rows(earlier, "objects")[second]["seatsLeft"] == seats - 1 and rows(later, "objects")[second]["seatsLeft"] == seats - 2

    booking = await call(session, "BookingPayload_booking", BookingPayload=earlier["result"])
    assert booking["preview"]["workshop"] == second
    assert rows(booking, "objects")[second]["seatsLeft"] == seats - 2, "the held workshop's values are the latest write's"
    workshop = await call(session, "Booking_workshop", Booking=booking["result"])
    assert workshop["result"] == second and workshop["preview"]["seatsLeft"] == seats - 2, workshop
    assert (await call(session, "Workshop_seatsLeft", Workshop=second))["result"] == seats - 2


async def test_a_reservation_shows_the_room_held_through_the_union_lookup(opened: Recorded, workshops_url: str):
    session, executor = await opened(workshops_url)
    assert session.catalogue.identity("Room") is not None, "bookable(id:): Bookable is the lookup of a Room"
    rooms = await call(session, "Query_rooms")
    atlas = rooms["result"][0]
    assert rows(rooms)[atlas]["reservedBy"] is None
    reserved = await call(session, "Mutation_reserveRoom", roomId="r1", by="Fay")
    assert reserved["preview"]["room"] == atlas and rows(reserved, "objects")[atlas]["reservedBy"] == "Fay", reserved
    assert (await call(session, "Room_reservedBy", Room=atlas))["result"] == "Fay"
    assert "bookable(" in executor.documents[-1]


async def test_an_edit_refreshes_a_comment_held_through_a_list_with_no_lookup(opened: Recorded, workshops_url: str):
    session, _ = await opened(workshops_url)
    await call(session, "Mutation_addComment", input={"workshopId": "w2", "author": "Gus", "text": "Bring a laptop?"})
    listed = await call(session, "Query_sessions")
    comments = await call(session, "Workshop_comments", Workshop=listed["result"][1])
    comment = comments["result"][-1]
    assert (await call(session, "Comment_text", Comment=comment))["result"] == "Bring a laptop?"
    edited = await call(session, "Mutation_editComment", input={"commentId": rows(comments)[comment]["id"], "text": "Laptops provided."})
    assert edited["preview"]["comment"] == comment, edited
    assert (await call(session, "Comment_text", Comment=comment))["result"] == "Laptops provided."


async def test_a_hosts_write_operation_names_the_held_workshop_and_replaces_its_preview(workshops_url: str, tmp_path: Path):
    (tmp_path / "book.graphql").write_text(
        "# Book a seat.\nmutation BookSeat($input: BookingInput!) { book(input: $input) { booking { workshop { seatsLeft } } } }\n"
    )
    async with await open_session(workshops_url, cache=False, operations=str(tmp_path), mutations=True) as session:
        session.select(["Query_sessions", "Workshop_seatsLeft"])
        listed = await call(session, "Query_sessions")
        second = listed["result"][1]
        seats = rows(listed)[second]["seatsLeft"]
        booked = await call(session, "BookSeat", input={"workshopId": "w2", "attendee": "Ivy"})
        assert booked["result"]["book"]["booking"]["workshop"] == {"object": second, "seatsLeft": seats - 1}, booked
        entry = session.object(second)
        assert entry is not None and entry.preview == {"id": "w2", "seatsLeft": seats - 1}, "what the write did not read back is not kept"
        assert (await call(session, "Workshop_seatsLeft", Workshop=second))["result"] == seats - 1


async def test_a_comment_over_the_limit_is_refused_with_class_validators_reason_first(opened: Recorded, workshops_url: str):
    session, _ = await opened(workshops_url)
    text = "I loved this workshop. " * 13  # 299 characters
    error = await refused(session, "Mutation_addComment", input={"workshopId": "w1", "author": "Hal", "text": text})
    assert "text must be shorter than or equal to 280 characters" in error, error
    assert error.index("constraints") < error.index("validationErrors[0].value"), "the echo of the input comes after the reason"

    both = await refused(session, "Mutation_addComment", input={"workshopId": "w1", "author": "H" * 70, "text": text})
    for reason in ("author must be shorter than or equal to 60 characters", "text must be shorter than or equal to 280 characters"):
        assert reason in both, both
    edit = await refused(session, "Mutation_editComment", input={"commentId": "c1", "text": text})
    assert "text must be shorter than or equal to 280 characters" in edit, edit


# -- graphene-django: Relay node(id:), a union lookup, Relay payloads, pydantic's errors ----------------


async def test_an_application_and_closed_jobs_refresh_the_jobs_held_through_node(opened: Recorded, jobs_url: str):
    session, executor = await opened(jobs_url)
    jobs = await call(session, "Query_allJobs")
    first, second, third = jobs["result"]
    assert rows(jobs)[first]["openings"] == 1
    applied = await call(
        session,
        "Mutation_applyToJob",
        input={"jobId": first, "name": "Ada", "email": "ada@example.org", "coverLetter": "I build APIs."},
    )
    application = applied["preview"]["application"]
    assert application.startswith("ApplicationNode#"), applied
    assert (await call(session, "ApplicationNode_job", ApplicationNode=application))["result"] == first
    before = where(executor)
    assert (await call(session, "JobNode_openings", JobNode=first))["result"] == 0
    assert where(executor) == before + 1 and "node(" in executor.documents[-1]

    closed = await call(session, "Mutation_closeJobs", input={"jobIds": [second, third]})
    assert closed["preview"]["jobs"] == [second, third], closed
    assert all(rows(closed, "objects")[j]["open"] is False and rows(closed, "objects")[j]["openings"] == 0 for j in (second, third))
    assert (await call(session, "JobNode_open", JobNode=second))["result"] is False


async def test_pausing_hiring_refreshes_the_company_held_through_the_union_lookup(opened: Recorded, jobs_url: str):
    session, executor = await opened(jobs_url)
    assert session.catalogue.identity("Company") is not None, "employer(id:): Employer is the lookup of a Company"
    companies = await call(session, "Query_companies")
    acme = companies["result"][0]
    assert rows(companies)[acme]["hiring"] is True
    paused = await call(session, "Mutation_pauseHiring", companyId=rows(companies)[acme]["id"])
    assert paused["preview"]["company"] == acme and rows(paused, "objects")[acme]["hiring"] is False, paused
    assert (await call(session, "Company_hiring", Company=acme))["result"] is False
    assert "employer(" in executor.documents[-1]


async def test_an_application_pydantic_refuses_names_every_fields_reason_before_the_echoes(opened: Recorded, jobs_url: str):
    session, _ = await opened(jobs_url)
    jobs = await call(session, "Query_allJobs")
    letter = "I have shipped GraphQL servers for ten years. " * 50  # 2,300 characters, echoed back in full
    error = await refused(
        session, "Mutation_applyToJob", input={"jobId": jobs["result"][0], "name": "Bo", "email": "bo", "coverLetter": letter}
    )
    assert "String should have at most 2000 characters" in error, error
    assert "String should match pattern" in error, error  # the second field's reason, after the first's 2,300-character echo
    assert "errors.pydantic.dev" not in error, "a link to the library's docs tells the model nothing"
    assert letter[:200] not in error
