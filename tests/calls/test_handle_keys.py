"""The pieces under trusted handles: keys, the registry's one-ID-per-key rule, and error texts that keep
what the API put in `extensions`."""

from __future__ import annotations

import json

import strawberry

from dagtools import Handle, Registry, Step, compile_catalogue
from dagtools.calls._moved import describe_key, moved
from dagtools.executors._base import format_error
from dagtools.registry._handles import freeze
from dagtools.registry._identity import Found, Identity, Met, identifies, key_field, key_of
from dagtools.registry._registry import ObjectEntry


@strawberry.type
class Review:
    id: strawberry.ID
    text: str


@strawberry.type
class Slot:
    starts_at: str
    free: bool


@strawberry.type
class Badge:
    code: strawberry.ID
    label: str


@strawberry.type
class Query:
    reviews: list[Review]
    slots: list[Slot]
    badges: list[Badge]


CATALOGUE = compile_catalogue(strawberry.Schema(query=Query)._schema)


def test_a_key_is_the_id_else_the_only_id_typed_field_else_every_scalar_read() -> None:
    assert key_field(CATALOGUE, "Review") == "id"
    assert key_field(CATALOGUE, "Badge") == "code"
    assert key_field(CATALOGUE, "Slot") is None
    assert key_of(CATALOGUE, "Review", {"__typename": "Review", "id": "r1", "text": "x"}) == (("id", "r1"),)
    slot = key_of(CATALOGUE, "Slot", {"__typename": "Slot", "startsAt": "10:00", "free": True})
    assert slot == (("free", True), ("startsAt", "10:00"))
    assert describe_key(slot) == 'free: true, startsAt: "10:00"'


def test_a_long_text_in_a_key_is_kept_by_its_digest() -> None:
    long = "x" * 5000
    key = key_of(CATALOGUE, "Slot", {"startsAt": long, "free": False})
    assert len(json.dumps(key)) < 200
    assert key == key_of(CATALOGUE, "Slot", {"startsAt": long, "free": False})
    assert key != key_of(CATALOGUE, "Slot", {"startsAt": long + "y", "free": False})
    assert describe_key(key) == "free: false, startsAt: (a long text)"


def test_one_id_per_type_and_key_and_it_is_found_where_it_was_seen_last() -> None:
    registry = Registry()
    first = Handle((Step.of("reviews", index=0),), "query", freeze({"id": "r1", "text": "a"}))
    made = Handle((Step.of("addReview"),), "mutation", freeze({"id": "r1", "text": "a", "author": None}))
    later = Handle((Step.of("reviews", index=2),), "query", freeze({"id": "r1", "text": "b"}))
    key = (("id", "r1"),)
    review = Found(key=key, identified=True)
    entry = registry.mint("Review", made, expression="addReview", found=review)
    assert registry.mint("Review", first, expression="reviews[0]", found=review).id == entry.id
    upgraded = registry.get(entry.id)
    assert upgraded is not None and upgraded.handle.steps == first.steps  # a chain replaces a snapshot
    assert upgraded.handle.held()["author"] is None  # and keeps what the snapshot read
    registry.mint("Review", made, expression="addReview", found=review)
    assert registry.get(entry.id).handle.steps == first.steps  # a snapshot never replaces a chain
    registry.mint("Review", later, expression="reviews[2]", found=review)
    assert registry.get(entry.id).handle.steps == later.steps and registry.get(entry.id).handle.held()["text"] == "b"
    registry.mint("Review", first, expression="reviews[0]", found=review)
    other = registry.mint("Review", first, expression="reviews[0]", found=Found(key=(("id", "r2"),), identified=True))
    assert other.id == "Review#2"  # the same place, another key: another object
    plain = Handle((Step.of("pinned"),))
    assert registry.mint("Review", plain, expression="pinned").id == registry.mint("Review", plain, expression="pinned").id


def test_equal_values_are_not_an_identity_only_the_same_place_is() -> None:
    """Two slots read with the same values at two places are two objects; the same place read again
    with the same values is the one found there; a write's result is a place met once."""
    registry = Registry()
    values = {"startsAt": "10:00", "free": True}
    key = key_of(CATALOGUE, "Slot", values)
    assert not identifies(CATALOGUE, "Slot", key) and identifies(CATALOGUE, "Review", (("id", "r1"),))
    assert not identifies(CATALOGUE, "Review", (("id", None),))
    at = [Handle((Step.of("slots", index=i),), "query", freeze(values)) for i in (0, 1)]
    slot = Found(key=key)
    first, second = (registry.mint("Slot", h, expression=f"slots[{i}]", found=slot) for i, h in enumerate(at))
    assert (first.id, second.id) == ("Slot#1", "Slot#2")
    assert registry.keyed("Slot", key) is None
    assert registry.mint("Slot", at[0], expression="slots[0]", found=slot).id == "Slot#1"
    made = Handle((Step.of("bookSlot"),), "mutation", freeze(values))
    once, again = (registry.mint("Slot", made, expression="bookSlot", found=Found(key=key, met=Met.WRITE)) for _ in range(2))
    assert (once.id, again.id) == ("Slot#3", "Slot#4")


def test_how_an_answer_met_an_object_decides_its_place_and_its_values() -> None:
    """A read's object is held by its chain with the values read, and equal values are no identity; a
    write's own result is a snapshot at a place met once; what a write links to is a snapshot too, but
    at a place that can be met again; both replace what was held, a kept copy and a read never do."""
    rules = Identity(CATALOGUE)
    at = (Step.of("slots", index=0),)
    values = {"__typename": "Slot", "startsAt": "10:00", "free": True}
    handle, read = rules.meet("Slot", values, at, Met.READ)
    assert handle.steps == at and not handle.is_snapshot and handle.held()["startsAt"] == "10:00"
    assert read.key == (("free", True), ("startsAt", "10:00")) and not read.identified
    assert (read.met.once, read.met.written) == (False, False)
    written, found = rules.meet("Slot", values, (Step.of("bookSlot"),), Met.WRITE)
    assert written.is_snapshot and found.key == () and (found.met.once, found.met.written) == (True, True)
    _, linked = rules.meet("Review", {"__typename": "Review", "id": "r1", "text": "a"}, (), Met.WRITE_LINKED)
    assert linked.identified and linked.key == (("id", "r1"),) and (linked.met.once, linked.met.written) == (False, True)
    assert not Met.KEPT.written and not Met.KEPT.once


def test_values_read_are_fresh_until_the_sessions_next_write() -> None:
    """Only values read here since the last write may answer a read; values never read here (restored
    from a store) are not; a chain checks its key at its end, but not the field being read unless a
    value of it is held from before a write, and a handle re-rooted on an identity checks nothing."""
    rules = Identity(CATALOGUE)
    chain = Handle((Step.of("slots", index=0),), "query", freeze({"startsAt": "10:00", "free": True}))
    slot = ObjectEntry(
        id="Slot#1", type_name="Slot", number=1, handle=chain, expression="slots[0]", key=(("free", True), ("startsAt", "10:00"))
    )
    assert not rules.fresh(slot.id)
    assert rules.seen(slot) is slot and rules.fresh(slot.id)
    rules.wrote()
    assert not rules.fresh(slot.id)
    rules.seen(slot)
    assert rules.fresh(slot.id)
    assert rules.checked(slot, "free", stale=False) == (("startsAt", "10:00"),)
    assert rules.checked(slot, "free", stale=True) == slot.key
    review = ObjectEntry(
        id="Review#1", type_name="Review", number=1, handle=Handle((Step.of("review", {"id": "r1"}),)), expression="r", key=(("id", "r1"),)
    )
    assert rules.checked(review, "text", stale=False) == ()


def test_a_graphql_error_keeps_what_extensions_say_within_a_budget_without_credentials() -> None:
    gateway = {
        "message": "Upstream HTTP Error: 400, Could not invoke operation GET /rides",
        "path": ["listRides"],
        "extensions": {
            "code": "DOWNSTREAM_SERVICE_ERROR",
            "request": {"url": "http://10.0.0.5/rides?limit=99&api_key=s3cr3tvalue", "method": "GET"},
            "response": {
                "status": 400,
                "statusText": "Bad Request",
                "headers": {"set-cookie": "session=abcdef123456"},
                "body": {"message": "limit must be between 1 and 50.", "hint": "see https://user:pw@docs.example/x?token=t0k3n"},
            },
            "http": {"status": 400},
            "stacktrace": ["at resolve (/srv/app.js:10)"],
        },
    }
    text = format_error(gateway)
    assert text.startswith("Upstream HTTP Error: 400, Could not invoke operation GET /rides (at listRides). The API adds: ")
    assert text.index("limit must be between 1 and 50.") < text.index("DOWNSTREAM_SERVICE_ERROR")  # messages first
    for hidden in ("s3cr3tvalue", "10.0.0.5", "abcdef123456", "app.js", "pw@", "t0k3n"):
        assert hidden not in text
    assert text.count("400") == 2  # the message's and one status: `http.status` says `response.status` again
    assert len(format_error(gateway, budget=200)) <= 200
    many = {"message": "bad", "extensions": {f"k{i}": "v" * 50 for i in range(100)}}
    assert len(format_error(many)) <= 600
    assert format_error({"message": "plain"}) == "plain"


def test_a_key_answered_as_deeply_nested_json_is_another_value_not_a_crash() -> None:
    holder = ObjectEntry(id="Slot#1", type_name="Slot", number=1, handle=Handle(()), expression="slots[0]", key=(("startsAt", "10:00"),))
    deep: object = "10:00"
    for _ in range(5000):
        deep = [deep]
    rules = Identity(CATALOGUE)
    assert not rules.holds({"startsAt": deep}, holder.key)
    assert "Slot#1 is no longer where it was found" in moved("Slot#1.room", holder)
    assert rules.holds({"startsAt": "10:00"}, holder.key)


@strawberry.type
class Shelf:
    title: str

    @strawberry.field
    def shout(self, times: int) -> str:
        return self.title.upper() * times


SHELVES = ["a", "b", "c"]


@strawberry.type
class ShelfQuery:
    @strawberry.field
    def shelves(self) -> list[Shelf | None]:
        return [Shelf(title=t) if t else None for t in SHELVES]


async def test_reads_sharing_one_request_each_check_their_own_object() -> None:
    from dagtools import LocalExecutor, Session, ToolCall
    from tests.recording import RecordingExecutor

    schema = strawberry.Schema(query=ShelfQuery)
    catalogue = compile_catalogue(schema._schema)
    executor = RecordingExecutor(LocalExecutor(schema))
    session = Session(catalogue, executor)
    session.select(catalogue.names())
    SHELVES[:] = ["a", "b", "c"]
    await session.call_tool(ToolCall(name="Query_shelves", arguments={}))
    SHELVES[:] = ["b", "a", ""]  # a and b swap places; c's place now answers null
    sent = len(executor.sent)
    results = await session.execute_tools([ToolCall(name="Shelf_shout", arguments={"Shelf": f"Shelf#{n}", "times": n}) for n in (1, 2, 3)])
    assert len(executor.sent) == sent + 1  # one request for the turn's three reads
    assert [r.is_error for r in results] == [True, True, True]
    assert "Shelf#1 is no longer where it was found (shelves[0] now holds another Shelf" in results[0].value["error"]
    assert 'title: "b"' in results[1].value["error"]
    assert "Shelf#3 is no longer where it was found (shelves[2]: the API now answers null at shelves[2])" in results[2].value["error"]
    SHELVES[:] = ["a", "b", "x"]
    results = await session.execute_tools([ToolCall(name="Shelf_shout", arguments={"Shelf": f"Shelf#{n}", "times": n}) for n in (1, 2)])
    assert [r.value for r in results] == [{"result": "A"}, {"result": "BB"}]
