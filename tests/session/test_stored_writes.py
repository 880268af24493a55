"""A write's refresh of a held object is saved with the call, so another worker (or a restart) that
resumes the session from its store holds the values the write returned, not those from before it.

A call saves what it changed rather than the whole session (session/_keeper.py); an object the call
did not make but refreshed is part of that change.
"""

from __future__ import annotations

from pathlib import Path

import strawberry

from dagtools import open_session
from tests.kitchen import call


@strawberry.interface
class Session:
    id: strawberry.ID
    title: str


@strawberry.type
class Workshop(Session):
    seats_left: int


@strawberry.type
class Booking:
    id: strawberry.ID
    workshop: Workshop


@strawberry.type
class BookingPayload:
    booking: Booking
    message: str


def make_schema() -> strawberry.Schema:
    seats = {"w1": 2, "w2": 9}

    def workshop(id: str) -> Workshop:
        return Workshop(id=strawberry.ID(id), title=f"Workshop {id}", seats_left=seats[id])

    @strawberry.type
    class Query:
        @strawberry.field
        def sessions(self) -> list[Session]:
            return [workshop(i) for i in seats]

        @strawberry.field
        def session(self, id: strawberry.ID) -> Session | None:
            return workshop(id) if id in seats else None

    @strawberry.type
    class Mutation:
        @strawberry.mutation
        def book(self, workshop_id: strawberry.ID) -> BookingPayload:
            seats[workshop_id] -= 1
            return BookingPayload(booking=Booking(id=strawberry.ID(f"b{seats[workshop_id]}"), workshop=workshop(workshop_id)), message="ok")

    return strawberry.Schema(query=Query, mutation=Mutation, types=[Workshop])


async def test_a_refresh_by_a_write_is_saved_with_the_call(tmp_path: Path):
    schema, store = make_schema(), f"sqlite:///{tmp_path / 'sessions.db'}"
    async with await open_session(schema, store=store, key="k", mutations=True) as first:
        first.select(first.catalogue.names())
        assert (await call(first, "Query_sessions")).value["preview"]["Workshop#1"]["seatsLeft"] == 2
        await call(first, "Query_session", id="w2")  # a call after the listing: the listing is a base the next save adds to
        booked = (await call(first, "Mutation_book", workshopId="w1")).value
        assert booked["objects"]["Workshop#1"]["seatsLeft"] == 1
        held = first.object("Workshop#1")
    async with await open_session(schema, store=store, key="k", mutations=True) as resumed:
        again = resumed.object("Workshop#1")
        assert again is not None and held is not None
        assert again.preview == held.preview and again.preview["seatsLeft"] == 1
        assert again.handle == held.handle
