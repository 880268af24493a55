"""A write's refresh of a held object is saved with the call, so another worker (or a restart) that
resumes the session from its store holds the values the write returned, not those from before it.

A call saves what it changed rather than the whole session (session/_persistence); an object the call
did not make but refreshed is part of that change.
"""

from __future__ import annotations

from pathlib import Path

import strawberry

from dagtools import open_session
from tests.kitchen import call
from tests.previews import rows


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
        assert rows((await call(first, "Query_sessions")).value)["Workshop#1"]["seatsLeft"] == 2
        await call(first, "Query_session", id="w2")  # a call after the listing: the listing is a base the next save adds to
        booked = (await call(first, "Mutation_book", workshopId="w1")).value
        assert rows(booked, "objects")["Workshop#1"]["seatsLeft"] == 1
        held = first.object("Workshop#1")
    async with await open_session(schema, store=store, key="k", mutations=True) as resumed:
        again = resumed.object("Workshop#1")
        assert again is not None and held is not None
        assert again.preview == held.preview and again.preview["seatsLeft"] == 1
        assert again.handle == held.handle


async def test_a_save_that_fails_after_a_write_says_the_write_ran():
    """The store failing after the call ran is not "nothing was created": the write happened and its
    result is not kept. The host gets the store's error marked so, and what a model is told (as an MCP
    server tells it) says to look before writing again; the API is not blamed."""
    import pytest

    from dagtools import StoreError
    from dagtools.stores._store import MemoryStore

    class Failing(MemoryStore):
        down = False

        async def save(self, key: str, data: bytes, *, version: int, change: bool = False) -> int:
            if self.down:
                raise StoreError("The session store test-store failed: disk full.")
            return await super().save(key, data, version=version, change=change)

    store = Failing()
    async with await open_session(make_schema(), store=store, key="k", mutations=True) as session:
        session.select(session.catalogue.names())
        assert (await call(session, "Query_session", id="w1")).value["preview"]["seatsLeft"] == 2
        store.down = True
        with pytest.raises(StoreError) as failed:
            await call(session, "Mutation_book", workshopId="w1")
        assert failed.value.ran
        said = failed.value.failed_call("Mutation_book")
        assert said.startswith("Mutation_book ran, but the session could not be saved: The session store test-store failed")
        assert "check what the API holds before doing it again" in said and "could not be reached" not in said
        store.down = False
        # the next call starts again from what the store kept, and the API shows the write happened
        assert (await call(session, "Query_session", id="w1")).value["preview"]["seatsLeft"] == 1
