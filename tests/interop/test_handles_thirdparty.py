"""Handles you can trust, on servers someone else wrote: an ID reads its own object or says it cannot.

- tests/js/gateway.js: a GraphQL gateway over a REST service (GraphQL Mesh's OpenAPI handler,
  @omnigraph/openapi, served by GraphQL Yoga). Stations, the bikes docked at each (an `id`, no
  lookup), rides (looked up by `getRide(rideId:)`); lists that shrink, grow and reorder when a ride
  starts or ends; upstream errors whose reason is in `extensions.response.body`.
- tests/pyservers/booking.py on Ariadne: time slots that are values (no id) and move when one is
  booked; reviews with an `id` but no root field to fetch one by; errors with a `code` and a `field`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from importlib import metadata
from typing import Any

import httpx
import pytest

from dagtools import Session
from tests.previews import rows
from tests.pyservers.booking import app as booking_app
from tests.servers import Recorder, serve_asgi
from tests.thirdparty import SERVER_VERSIONS, Open, _version, attempt, start_node_server

VERSIONS = {
    **SERVER_VERSIONS,
    "gateway": f"@omnigraph/openapi {_version('@omnigraph/openapi')} on graphql-yoga {_version('graphql-yoga')}"
    f" (graphql {_version('graphql')})",
    "booking": f"ariadne {metadata.version('ariadne')} (graphql-core {metadata.version('graphql-core')})"
    f" under uvicorn {metadata.version('uvicorn')}",
}


@pytest.fixture(scope="module")
def gateway_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The bike gateway on loopback; yields its base URL (GraphQL at /graphql)."""
    with start_node_server("gateway.js", "@omnigraph/openapi", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}"


class Gateway:
    def __init__(self, base: str) -> None:
        self.url = f"{base}/graphql"
        self.base = base

    def upstream(self) -> int:
        """How many requests the REST service behind the gateway has served."""
        return int(httpx.get(f"{self.base}/upstream", timeout=10).json()["requests"])


@pytest.fixture
def gateway(gateway_base: str) -> Gateway:
    """The gateway with its data as it started (tests in this module change it)."""
    httpx.post(f"{gateway_base}/reset", timeout=10).raise_for_status()
    return Gateway(gateway_base)


@pytest.fixture
def booking() -> Iterator[Recorder]:
    """A fresh booking app on Ariadne; yields its recorder (`.url` is the GraphQL URL)."""
    recorder = Recorder(booking_app())
    with serve_asgi(recorder) as base:
        recorder.url = f"{base}/graphql"
        yield recorder


@pytest.fixture
def opened(opened: Open) -> Open:
    """The shared `opened`, with mutations allowed: these tests write and then read again."""
    return functools.partial(opened, mutations=True)


async def call(session: Session, tool: str, /, **arguments: Any) -> Any:
    result = await attempt(session, tool, **arguments)
    assert not result.is_error, (result.value, VERSIONS)
    return result.value


async def refused(session: Session, tool: str, /, **arguments: Any) -> str:
    result = await attempt(session, tool, **arguments)
    assert result.is_error, (result.value, VERSIONS)
    return str(result.value["error"])


# -- the gateway over REST -------------------------------------------------------------------------------


async def test_gateway_a_bike_that_moved_is_never_answered_with_the_bike_now_in_its_place(gateway: Gateway, opened: Any) -> None:
    session = await opened(gateway.url)
    await call(session, "Query_listStations")
    bikes = await call(session, "Station_bikes", Station="Station#1")
    assert bikes["result"] == ["Bike#1", "Bike#2", "Bike#3"]
    assert rows(bikes)["Bike#1"]["id"] == "B-101"
    assert (await call(session, "Bike_rides", Bike="Bike#1"))["result"] == ["Ride#1"]  # ride 501

    await call(session, "Mutation_startRide", input={"bikeId": "B-101"})  # B-101 leaves: B-102 is first now
    message = await refused(session, "Bike_rides", Bike="Bike#1")
    assert "Bike#1 is no longer where it was found" in message and 'id: "B-101"' in message
    assert "Repeat the call that found Bike#1" in message
    message = await refused(session, "Bike_model", Bike="Bike#1")  # read when found, but before the write: read again
    assert "Bike#1 is no longer where it was found" in message and 'id: "B-101"' in message

    again = await call(session, "Station_bikes", Station="Station#1")
    assert again["result"] == ["Bike#2", "Bike#3"]  # the same bikes keep their IDs in their new places
    assert (await call(session, "Bike_rides", Bike="Bike#2"))["result"] == []


async def test_gateway_a_chain_that_now_ends_in_null_says_the_object_left(gateway: Gateway, opened: Any) -> None:
    session = await opened(gateway.url)
    await call(session, "Query_listStations")
    assert (await call(session, "Station_bikes", Station="Station#2"))["result"] == ["Bike#1"]  # B-201, alone there
    await call(session, "Mutation_startRide", input={"bikeId": "B-201"})
    message = await refused(session, "Bike_rides", Bike="Bike#1")
    assert "Bike#1 is no longer where it was found (Station#2.bikes[0]" in message
    assert "moved or is gone" in message and "Repeat the call that found Bike#1" in message
    assert "part of the chain leading to it is null" not in message


async def test_gateway_rides_are_one_id_however_they_were_reached(gateway: Gateway, opened: Any) -> None:
    session = await opened(gateway.url)
    listed = await call(session, "Query_listRides")
    assert listed["result"] == ["Ride#1", "Ride#2"]
    started = await call(session, "Mutation_startRide", input={"bikeId": "B-102"})
    ride = started["result"]
    assert started["preview"]["status"] == "active"
    ended = await call(session, "Mutation_endRide", rideId=started["preview"]["id"], input={"stationId": 3})
    fetched = await call(session, "Query_getRide", rideId=started["preview"]["id"])
    again = await call(session, "Query_listRides")
    assert ended["result"] == fetched["result"] == ride == again["result"][0]
    assert again["result"][1:] == ["Ride#1", "Ride#2"]  # the list grew at the top: old IDs still mean their rides
    assert (await call(session, "Ride_id", Ride="Ride#1")) == {"result": 502}
    assert (await call(session, "Ride_status", Ride=ride)) == {"result": "ended"}
    assert session.registry.count("Ride") == 3


async def test_gateway_reading_one_field_costs_the_request_that_field_needs(gateway: Gateway, opened: Any) -> None:
    session = await opened(gateway.url)
    await call(session, "Query_listStations")
    await call(session, "Station_bikes", Station="Station#1")
    before = gateway.upstream()
    assert (await call(session, "Bike_battery", Bike="Bike#2")) == {"result": 40}
    assert gateway.upstream() == before  # read when the bike was found: nothing sent
    await call(session, "Station_bikes", Station="Station#2")
    assert gateway.upstream() - before <= 2  # that station (re-rooted on getStation) and its bikes, not every station's


async def test_gateway_errors_carry_what_the_rest_service_said(gateway: Gateway, opened: Any) -> None:
    session = await opened(gateway.url)
    message = await refused(session, "Query_listRides", limit=99)
    assert "Upstream HTTP Error: 400" in message and "limit must be between 1 and 50." in message
    assert "127.0.0.1" not in message  # the gateway's copy of the upstream request is left out
    message = await refused(session, "Query_getRide", rideId=999)
    assert "no ride 999" in message and "NOT_FOUND" in message and '"rideId"' in message
    assert len(session.registry) == 0


# -- value objects and ids without a lookup (Ariadne) ----------------------------------------------------


async def test_booking_a_slot_never_makes_another_slots_id_answer(booking: Recorder, opened: Any) -> None:
    session = await opened(booking.url)
    slots = await call(session, "Query_slots", day="2030-01-01")
    assert slots["result"] == ["Slot#1", "Slot#2", "Slot#3", "Slot#4", "Slot#5"]
    assert {"startsAt": "09:30", "free": True}.items() <= rows(slots)["Slot#2"].items()
    assert (await call(session, "Slot_price", Slot="Slot#2")) == {"result": 25.0}

    await call(session, "Mutation_book", day="2030-01-01", startsAt="09:00", name="Eve")  # 09:00 moves to the end
    sent = len(booking.requests)
    message = await refused(session, "Slot_startsAt", Slot="Slot#2")  # kept from before the write: read again
    assert "Slot#2 is no longer where it was found" in message and 'startsAt: "09:30"' in message
    assert len(booking.requests) == sent + 1  # the one request that reads its place again
    message = await refused(session, "Slot_price", Slot="Slot#2")
    assert 'Slot#2 is no longer where it was found (slots(day: "2030-01-01")[1] now holds another Slot' in message
    assert 'free: true, startsAt: "09:30"' in message
    message = await refused(session, "Slot_room", Slot="Slot#2")
    assert "no longer where it was found" in message

    again = await call(session, "Query_slots", day="2030-01-01")
    held = {f"Slot#{n}" for n in range(1, 6)}
    assert not held & set(again["result"])  # no identity: each slot is the one found at its place, equal values or not
    assert {"startsAt": "09:30", "free": True}.items() <= rows(again)[again["result"][0]].items()
    moved_here = again["result"][0]
    sent = len(booking.requests)
    assert (await call(session, "Slot_price", Slot=moved_here, currency="USD")) == {"result": 27.5}
    assert len(booking.requests) == sent + 1  # the one request that field needs, key checked in it
    assert {"startsAt": "09:00", "free": False}.items() <= rows(again)[again["result"][-1]].items()


async def test_booking_a_review_from_a_mutation_and_from_the_list_is_one_id(booking: Recorder, opened: Any) -> None:
    session = await opened(booking.url)
    added = await call(session, "Mutation_addReview", stars=5, text="Lovely.")
    review = added["result"]
    sent = len(booking.requests)
    assert (await call(session, "Review_author", Review=review))["result"] == "Author#1"  # read with the write itself
    assert len(booking.requests) == sent
    listed = await call(session, "Query_reviews")
    assert listed["result"] == [review, "Review#2", "Review#3"]
    author = (await call(session, "Review_author", Review=review))["result"]  # a value without id: by what it reads
    assert (await call(session, "Author_name", Author=author)) == {"result": "You"}

    await call(session, "Mutation_addReview", stars=3, text="Fine.")  # the list grows at the top
    message = await refused(session, "Review_author", Review="Review#3")
    assert "Review#3 is no longer where it was found" in message and 'id: "r1"' in message
    relisted = await call(session, "Query_reviews")
    assert relisted["result"][1:] == [review, "Review#2", "Review#3"]
    author = (await call(session, "Review_author", Review="Review#3"))["result"]
    assert (await call(session, "Author_name", Author=author)) == {"result": "Ben"}


async def test_booking_errors_name_the_code_and_field_the_server_gave(booking: Recorder, opened: Any) -> None:
    session = await opened(booking.url)
    await call(session, "Mutation_book", day="2030-01-01", startsAt="10:00", name="Eve")
    message = await refused(session, "Mutation_book", day="2030-01-01", startsAt="10:00", name="Sam")
    assert "That slot is taken" in message
    assert "CONFLICT" in message and 'field: "startsAt"' in message and '"Eve"' in message


async def test_stored_sessions_keep_keys_and_load_the_old_format(booking: Recorder, opened: Any) -> None:
    from dagtools.session._state import SessionState

    session = await opened(booking.url)
    await call(session, "Query_reviews")
    await call(session, "Query_slots", day="2030-01-01")
    stored = json.loads(json.dumps(session.state().to_json()))
    first = stored["objects"][0]
    assert first["key"] == {"id": "r2"} and first["handle"]["snapshot"]["text"] == "Quiet rooms."
    old_format = json.loads(json.dumps(stored))
    for item in old_format["objects"]:  # as stored before objects had keys and chains kept what they read
        del item["key"]
        item["handle"].pop("snapshot", None)
    for data in (stored, old_format):
        fresh = await opened(booking.url)
        fresh.restore(SessionState.from_json(data))
        assert [e.id for e in fresh.registry] == [e.id for e in session.registry]
        assert (await call(fresh, "Review_author", Review="Review#1"))["result"] == "Author#1"
    restored = await opened(booking.url)
    restored.restore(SessionState.from_json(stored))
    await call(restored, "Mutation_addReview", stars=1, text="Loud.")
    assert (await call(restored, "Query_reviews"))["result"] == ["Review#3", "Review#1", "Review#2"]  # keys survive the store
