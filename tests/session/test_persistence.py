"""A kept session's standing moves along the drawing in dagtools/session/_persistence: opened and saved it
is in step with the store; a turn holds the lease; a saved call appends a change, or compacts the log
into a snapshot once it outgrew the last one; another process's save leaves it stale until a load
catches it up on the log; a call that fails leaves it adrift, nothing saved, until a load restores it
whole. In process, on the memory store."""

from __future__ import annotations

from unittest import mock

import pytest

from dagtools import ConfigError
from dagtools.session._persistence import Phase, _keeper
from dagtools.stores._store import MemoryStore
from tests.kitchen import call, kitchen_session


async def test_a_turn_holds_the_lease_and_its_save_appends_one_change():
    store = MemoryStore()
    async with await kitchen_session(store=store, key="k") as session:
        keeper = session.keeper
        assert keeper is not None
        opened = keeper.standing
        assert (opened.phase, opened.version, opened.log) == (Phase.IN_STEP, 1, ())  # the first save: a snapshot
        during = []

        async def turn() -> None:
            during.append(keeper.standing.phase)

        await keeper.run(session, turn)
        assert during == [Phase.LEASED]
        after = keeper.standing
        assert (after.phase, after.version, after.snapshot, len(after.log)) == (Phase.IN_STEP, 2, opened.snapshot, 1)
        stored = await store.load("k")
        assert stored is not None and (stored.data, stored.log) == (after.snapshot, after.log)


async def test_a_log_that_outgrew_its_snapshot_is_compacted_by_the_next_save():
    store = MemoryStore()
    async with await kitchen_session(store=store, key="k") as session:
        await call(session, "selectTools", tools=["Potato_peel"])
        assert session.keeper is not None and session.keeper.standing.log
        with mock.patch.multiple(_keeper, _LOG_PER_SNAPSHOT=0, _LOG_FLOOR=0):
            await call(session, "Potato_peel")
        standing = session.keeper.standing
        stored = await store.load("k")
        assert stored is not None and standing.log == stored.log == () and standing.snapshot == stored.data


async def test_another_process_s_save_is_caught_up_on_the_log_alone():
    store = MemoryStore()
    async with await kitchen_session(store=store, key="k") as first, await kitchen_session(store=store, key="k") as second:
        assert first.keeper is not None and second.keeper is not None
        await call(second, "selectTools", tools=["Potato_peel"])
        behind = first.keeper.standing
        with mock.patch.object(_keeper, "decode_state", wraps=_keeper.decode_state) as decoded:
            await first.catch_up()
        assert not decoded.called  # not restored whole
        caught = first.keeper.standing
        assert caught.version == second.keeper.version > behind.version
        assert caught.snapshot == behind.snapshot and caught.log[: len(behind.log)] == behind.log  # the snapshot kept
        assert first.active_tools == second.active_tools


async def test_a_failed_call_leaves_the_session_adrift_and_nothing_saved_until_a_load_restores_it():
    store = MemoryStore()
    async with await kitchen_session(store=store, key="k") as session:
        keeper = session.keeper
        assert keeper is not None
        saved = await store.load("k")

        async def fails() -> None:
            session.select(["Oven_bake"])
            raise RuntimeError("the call failed")

        with pytest.raises(RuntimeError):
            await keeper.run(session, fails)
        assert keeper.standing.phase is Phase.ADRIFT and keeper.version is None
        assert await store.load("k") == saved  # nothing of the failed call stored
        with pytest.raises(ConfigError, match="must be reloaded before it is saved"):
            await session.checkpoint()
        assert "Oven_bake" in session.active_tools  # held in memory only

        async def nothing() -> None:
            pass

        await keeper.run(session, nothing)  # its load restores whole: the failed call's change is gone
        assert "Oven_bake" not in session.active_tools
        assert keeper.standing.phase is Phase.IN_STEP and keeper.version == saved.version + 1
