"""dagtools on a server written in Ruby: the conference API on graphql-ruby and WEBrick (tests/rb/conference.rb).

The schema is loaded from the live URL; every document sent is checked against the server's own
introspection, and what the tools answer against what the server answers to a plain request.
"""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest
from graphql import build_client_schema, get_introspection_query, parse, validate

from dagtools import Session
from tests.thirdparty import SERVER_VERSIONS, Open, Recorded, attempt, call_ok, conference_url  # noqa: F401 - fixture


def _gid(type_name: str, key: int) -> str:
    """A global ID as graphql-ruby's `UniqueWithinType` writes it."""
    return base64.b64encode(f"{type_name}-{key}".encode()).decode()


def _post(url: str, query: str, **variables: object) -> dict[str, Any]:
    answer = httpx.post(url, json={"query": query, "variables": variables}, timeout=30).json()
    assert "errors" not in answer, (answer, SERVER_VERSIONS["conference"])
    return dict(answer["data"])


@pytest.fixture
def conference(conference_url: str) -> str:
    """The conference API with its data as it started (tests in this module write to it)."""
    httpx.post(conference_url.replace("/graphql", "/reset"), timeout=10).raise_for_status()
    return conference_url


async def _value(session: Session, tool: str, /, **arguments: Any) -> Any:
    """What a field tool reads: a value or a handle."""
    return (await call_ok(session, tool, **arguments))["result"]


def test_the_server_answers_relay_node_and_reset_puts_its_data_back(conference: str) -> None:
    found = _post(conference, "query($id: ID!) { node(id: $id) { __typename ... on Workshop { seatsLeft } } }", id=_gid("Workshop", 3))
    assert found["node"] == {"__typename": "Workshop", "seatsLeft": 1}
    booked = _post(conference, "mutation($id: ID!) { bookSeat(workshopId: $id) { errors { message } } }", id=_gid("Workshop", 3))
    assert booked["bookSeat"]["errors"] == []
    assert _post(conference, "query($id: ID!) { workshop(id: $id) { seatsLeft } }", id=_gid("Workshop", 3))["workshop"]["seatsLeft"] == 0
    httpx.post(conference.replace("/graphql", "/reset"), timeout=10).raise_for_status()
    assert _post(conference, "query($id: ID!) { workshop(id: $id) { seatsLeft } }", id=_gid("Workshop", 3))["workshop"]["seatsLeft"] == 1
    talks = _post(conference, "{ talks { totalCount nodes { abstract } } feed { __typename } }")
    assert talks["talks"]["totalCount"] >= 12 and min(len(t["abstract"]) for t in talks["talks"]["nodes"]) >= 400
    assert {item["__typename"] for item in talks["feed"]} == {"Post", "Comment"} and len(talks["feed"]) == 8


async def test_the_schema_is_loaded_from_the_live_url_with_writes_only_when_allowed(conference: str, opened: Open) -> None:
    reading = await opened(conference)
    names = set(reading.catalogue.names())
    assert {"Query_talks", "Talk_speakerBySpeakerId", "Workshop_availability", "Query_feed", "Query_node"} <= names
    assert {"Post_title", "Comment_body", "Availability_seatsLeft", "ScheduleEntry_room"} <= names
    assert "Comment_title" not in names  # a comment has no title: no tool reads one
    assert not {name for name in names if name.startswith("Mutation_")}
    writing = await opened(conference, mutations=True)
    assert {"Mutation_bookSeat", "Mutation_moveTalk"} <= set(writing.catalogue.names())


async def test_every_document_sent_is_valid_on_graphql_ruby_and_carries_values_as_variables(conference: str, recorded: Recorded) -> None:
    session, executor = await recorded(conference, mutations=True)
    talks = await _value(session, "Query_talks", first=3, track="DATA")
    await _value(session, "Talk_speakerBySpeakerId", Talk=talks[0])
    workshops = await _value(session, "Query_workshops")
    await _value(session, "Workshop_availability", Workshop=workshops[0])
    await _value(session, "Mutation_bookSeat", workshopId=_gid("Workshop", 4))
    await _value(session, "Query_feed", first=8)
    await _value(session, "Mutation_moveTalk", talkId=_gid("Talk", 12), room="Hall A")
    await _value(session, "Query_node", id=_gid("Comment", 2))

    introspection = httpx.post(conference, json={"query": get_introspection_query()}, timeout=30).json()
    schema = build_client_schema(introspection["data"])
    assert len(executor.sent) >= 8
    for document, variables in executor.sent:
        assert validate(schema, parse(document)) == [], document
        for value in variables.values():  # every argument travelled as a variable, none written into the text
            assert not isinstance(value, str) or value not in document, (value, document)


async def test_a_talks_page_holds_the_talks_the_server_lists_and_the_next_page_follows_its_cursor(conference: str, opened: Open) -> None:
    session = await opened(conference)
    plain = _post(conference, "{ talks(first: 3, track: DATA) { pageInfo { endCursor } nodes { title rating } } }")["talks"]
    page = await _value(session, "Query_talks", first=3, track="DATA")
    assert [handle.split("#")[0] for handle in page] == ["Talk"] * 3 and len(set(page)) == 3
    assert [await _value(session, "Talk_title", Talk=talk) for talk in page] == [t["title"] for t in plain["nodes"]]
    assert [await _value(session, "Talk_rating", Talk=talk) for talk in page] == [t["rating"] for t in plain["nodes"]]
    assert {await _value(session, "Talk_track", Talk=talk) for talk in page} == {"DATA"}

    following = await _value(session, "Query_talks", first=3, track="DATA", after=plain["pageInfo"]["endCursor"])
    assert len(following) == 2 and not set(following) & set(page)  # five DATA talks: the rest, new handles
    rest = _post(
        conference,
        "query($after: String) { talks(first: 3, track: DATA, after: $after) { nodes { title } } }",
        after=plain["pageInfo"]["endCursor"],
    )
    assert [await _value(session, "Talk_title", Talk=talk) for talk in following] == [t["title"] for t in rest["talks"]["nodes"]]
    first, last = (
        await call_ok(session, "Query_talks", first=3, track="DATA"),
        await call_ok(session, "Query_talks", first=3, track="DATA", after=plain["pageInfo"]["endCursor"]),
    )
    assert "more" in first and "lastPage" not in first  # the server's hasNextPage, said as the model reads it
    assert last["lastPage"] is True and "more" not in last and last["totalCount"] == 5

    refused = await attempt(session, "Query_talks", first=3, track="MUSIC")
    assert refused.is_error and "MUSIC" in refused.value["error"] and "WEB|DATA|OPS" in refused.value["error"]


async def test_a_foreign_key_and_the_field_that_reads_it_name_the_same_speaker(conference: str, opened: Open) -> None:
    session = await opened(conference)
    talk = await _value(session, "Query_talk", id=_gid("Talk", 5))
    speaker_id = await _value(session, "Talk_speakerId", Talk=talk)
    assert speaker_id == _gid("Speaker", 5)
    speaker = await _value(session, "Talk_speakerBySpeakerId", Talk=talk)
    assert speaker.startswith("Speaker#")
    assert await _value(session, "Speaker_id", Speaker=speaker) == speaker_id
    assert await _value(session, "Speaker_name", Speaker=speaker) == "Mei Lin Zhou"
    assert await _value(session, "Query_speaker", id=speaker_id) == speaker  # one speaker, one handle

    announced_later = await _value(session, "Query_talk", id=_gid("Talk", 8))
    assert await _value(session, "Talk_speakerId", Talk=announced_later) is None
    assert await _value(session, "Talk_speakerBySpeakerId", Talk=announced_later) is None
    assert await _value(session, "Talk_rating", Talk=announced_later) is None  # no ratings yet


async def test_booking_a_seat_takes_one_and_a_full_workshop_refuses_with_a_user_error(conference: str, opened: Open) -> None:
    session = await opened(conference, mutations=True)
    workshop = await _value(session, "Query_workshop", id=_gid("Workshop", 3))
    assert await _value(session, "Workshop_seatsLeft", Workshop=workshop) == 1
    availability = await _value(session, "Workshop_availability", Workshop=workshop)
    assert await _value(session, "Availability_seatsLeft", Availability=availability) == 1

    booked = await _value(session, "Mutation_bookSeat", workshopId=_gid("Workshop", 3))
    assert await _value(session, "BookSeatPayload_errors", BookSeatPayload=booked) == []
    assert await _value(session, "BookSeatPayload_workshop", BookSeatPayload=booked) == workshop
    now = await _value(session, "Workshop_availability", Workshop=workshop)
    assert await _value(session, "Availability_seatsLeft", Availability=now) == 0
    assert await _value(session, "Workshop_seatsLeft", Workshop=workshop) == 0
    seats = "query($id: ID!) { workshop(id: $id) { seatsLeft availability { seatsLeft waitlist } } }"
    assert _post(conference, seats, id=_gid("Workshop", 3))["workshop"] == {"seatsLeft": 0, "availability": {"seatsLeft": 0, "waitlist": 0}}

    full = await _value(session, "Mutation_bookSeat", workshopId=_gid("Workshop", 3))
    errors = await _value(session, "BookSeatPayload_errors", BookSeatPayload=full)
    assert len(errors) == 1
    assert "is full" in await _value(session, "UserError_message", UserError=errors[0])
    assert await _value(session, "UserError_path", UserError=errors[0]) == ["workshopId"]
    assert _post(conference, seats, id=_gid("Workshop", 3))["workshop"]["seatsLeft"] == 0  # refused: nothing taken

    unknown = await _value(session, "Mutation_bookSeat", workshopId=_gid("Workshop", 99))
    assert await _value(session, "BookSeatPayload_workshop", BookSeatPayload=unknown) is None
    assert len(await _value(session, "BookSeatPayload_errors", BookSeatPayload=unknown)) == 1


async def test_moving_a_talk_changes_its_schedule_entry_and_a_taken_room_is_refused(conference: str, opened: Open) -> None:
    session = await opened(conference, mutations=True)
    entries = await _value(session, "Query_schedule")
    assert len(entries) == 10
    first = entries[0]  # 09:30 in Hall A, while Hall B holds another talk
    assert await _value(session, "ScheduleEntry_room", ScheduleEntry=first) == "Hall A"
    talk = await _value(session, "ScheduleEntry_talk", ScheduleEntry=first)
    talk_id = await _value(session, "Talk_id", Talk=talk)

    taken = await _value(session, "Mutation_moveTalk", talkId=talk_id, room="Hall B")
    assert await _value(session, "MoveTalkPayload_entry", MoveTalkPayload=taken) is None
    [error] = await _value(session, "MoveTalkPayload_errors", MoveTalkPayload=taken)
    assert "Hall B is taken" in await _value(session, "UserError_message", UserError=error)

    moved = await _value(session, "Mutation_moveTalk", talkId=talk_id, room="Studio 3")
    assert await _value(session, "MoveTalkPayload_errors", MoveTalkPayload=moved) == []
    entry = await _value(session, "MoveTalkPayload_entry", MoveTalkPayload=moved)
    assert await _value(session, "ScheduleEntry_room", ScheduleEntry=entry) == "Studio 3"
    assert await _value(session, "ScheduleEntry_talk", ScheduleEntry=entry) == talk

    again = await _value(session, "Query_schedule")
    rooms = {
        await _value(session, "ScheduleEntry_talk", ScheduleEntry=e): await _value(session, "ScheduleEntry_room", ScheduleEntry=e)
        for e in again[:2]
    }
    assert rooms[talk] == "Studio 3" and sorted(rooms.values()) == ["Hall B", "Studio 3"]
    plain = _post(conference, "{ schedule { room talk { id } } }")["schedule"]
    assert {"room": "Studio 3", "talk": {"id": talk_id}} in plain


async def test_the_feed_mixes_posts_and_comments_in_the_servers_order(conference: str, opened: Open) -> None:
    session = await opened(conference)
    plain = _post(conference, "{ feed(first: 8) { __typename id ... on Post { title } ... on Comment { body } } }")["feed"]
    feed = await _value(session, "Query_feed", first=8)
    assert [handle.split("#")[0] for handle in feed] == [item["__typename"] for item in plain]
    for handle, item in zip(feed, plain, strict=True):
        kind = item["__typename"]
        assert await _value(session, f"{kind}_id", **{kind: handle}) == item["id"]
        field = "title" if kind == "Post" else "body"
        assert await _value(session, f"{kind}_{field}", **{kind: handle}) == item[field]
    assert await _value(session, "Query_feed", first=3) == feed[:3]  # the same items, the same handles
    comment = await _value(session, "Query_node", id=plain[1]["id"])
    assert comment == feed[1]
