"""Two workers on one stored session: the one that did not make the last call catches up on the
changes saved since, applying only them to the session it holds, and ends up holding exactly what a
full restore of the store gives (the state, and the registry's indexes: by key, the type counters, the
order of use). When another worker wrote a new snapshot, or anything else does not fit, it restores
the whole, as before.

The API: `items` (objects with an id: one `Item#N` however they are reached), `item(id:)` (one of
them read again), `tags(count:)` (objects without identity, one per list position, their labels changing with
every write: a position read again after one holds another object), `crates` and `newestCrate`
(objects with an id but no field to fetch one by: one crate is reached by two chains, so the way to
it moves) and the write `rename(id:, name:)`, whose answer replaces what the session holds of that
item. Hypothesis draws
which worker makes each call, whether the other catches up at once (a tool list read between calls)
or only at its next call, and how soon the log outgrows the snapshot: never (every catch-up must be
incremental), at every save (every catch-up must be a full restore) or now and then (both mixed).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any
from unittest import mock

import strawberry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagtools import Session, ToolCall, open_session
from dagtools.registry._handles import Handle
from dagtools.registry._registry import ObjectEntry, Registry
from dagtools.session._persistence import _keeper
from dagtools.session._state import SessionState
from dagtools.stores._store import MemoryStore
from tests.conftest import examples


@strawberry.type
class Item:
    id: strawberry.ID
    name: str


@strawberry.type
class Tag:
    label: str


@strawberry.type
class Crate:
    id: strawberry.ID
    size: int


def make_schema() -> strawberry.Schema:
    names = {f"i{n}": f"item {n}" for n in range(6)}
    edits = [0]

    @strawberry.type
    class Query:
        @strawberry.field
        def items(self) -> list[Item]:
            return [Item(id=strawberry.ID(i), name=name) for i, name in names.items()]

        @strawberry.field
        def item(self, id: strawberry.ID) -> Item | None:
            return Item(id=id, name=names[id]) if id in names else None

        @strawberry.field
        def tags(self, count: int) -> list[Tag]:
            return [Tag(label=f"tag {n} v{edits[0]}") for n in range(count)]

        @strawberry.field
        def crates(self) -> list[Crate]:
            return [Crate(id=strawberry.ID(f"c{n}"), size=n + edits[0]) for n in range(3)]

        @strawberry.field
        def newest_crate(self) -> Crate:
            return Crate(id=strawberry.ID("c2"), size=2 + edits[0])

    @strawberry.type
    class Mutation:
        @strawberry.mutation
        def rename(self, id: strawberry.ID, name: str) -> Item:
            names[id] = name
            edits[0] += 1
            return Item(id=id, name=name)

    return strawberry.Schema(query=Query, mutation=Mutation)


TOOLS = ["Query_items", "Query_item", "Query_tags", "Query_crates", "Query_newestCrate", "Mutation_rename"]

calls = st.one_of(
    st.just(("Query_items", {})),
    st.builds(lambda n: ("Query_item", {"id": f"i{n}"}), st.integers(0, 5)),
    st.builds(lambda n: ("Query_tags", {"count": n}), st.integers(0, 12)),
    st.just(("Query_crates", {})),
    st.just(("Query_newestCrate", {})),
    st.builds(lambda n, v: ("Mutation_rename", {"id": f"i{n}", "name": f"renamed {v}"}), st.integers(0, 5), st.integers(0, 3)),
    st.builds(lambda names: ("selectTools", {"tools": names}), st.lists(st.sampled_from(TOOLS), min_size=1, max_size=2)),
)
#: Who calls, what, whether the other catches up at once, whether the host gave the other a prompt
#: before (a message not stored yet, kept after the stored ones across a catch-up and saved by its next call).
steps = st.tuples(st.integers(0, 1), calls, st.booleans(), st.booleans())
#: (`_LOG_PER_SNAPSHOT`, `_LOG_FLOOR`): never a new snapshot, one at every save, one now and then.
SNAPSHOTS = {"never": (10**6, 10**9), "always": (0, 0), "sometimes": (1, 400)}
#: What a catch-up behind the store does, as (whole states decoded, logs applied to the live session).
PATHS = {"never": (0, 1), "always": (1, 0)}


def held(session: Session, prompts: Sequence[str] = ()) -> str:
    """The session's state, with prompts the host added after what the store holds."""
    state = SessionState.of(session).to_json()
    state["context"] += [{"role": "user", "content": text} for text in prompts]
    return json.dumps(state, sort_keys=True)


def indexes(session: Session) -> tuple[Any, ...]:
    r = session.registry
    return list(r._by_id.items()), r._by_key, r._counts, r._latest, list(r._order)


class Counted:
    """Counts the calls of a function of a module while patched in."""

    def __init__(self, module: Any, name: str) -> None:
        self.function, self.count = getattr(module, name), 0
        self.patch = mock.patch.object(module, name, self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.count += 1
        return self.function(*args, **kwargs)


async def check_program(store: Any, program: list[tuple[int, tuple[str, dict[str, Any]], bool, bool]], snapshots: str) -> None:
    schema = make_schema()
    decoded, applied = Counted(_keeper, "decode_state"), Counted(_keeper, "apply_changes")
    with mock.patch.multiple(_keeper, _LOG_PER_SNAPSHOT=SNAPSHOTS[snapshots][0], _LOG_FLOOR=SNAPSHOTS[snapshots][1]):
        async with AsyncExitStack() as stack:
            first = await stack.enter_async_context(await open_session(schema, store=store, key="k", mutations=True))
            first.select(["Query_items"])
            await first.checkpoint()
            second = await stack.enter_async_context(await open_session(schema, store=store, key="k", mutations=True))
            observer = await stack.enter_async_context(await open_session(schema, store=store, key="k", mutations=True))
            workers = (first, second)
            prompts: dict[Session, list[str]] = {first: [], second: [], observer: []}
            with decoded.patch, applied.patch:
                for step, (who, (name, arguments), other_now, prompt) in enumerate(program):
                    caller, other = workers[who], workers[1 - who]
                    if prompt:
                        other.context.add_user(f"prompt {step}")
                        prompts[other].append(f"prompt {step}")
                    prompts[caller] = []
                    assert caller.keeper is not None
                    latest = await caller.keeper.store.load("k", known=-1)
                    assert latest is not None
                    behind = caller.keeper.version != latest.version
                    decoded.count = applied.count = 0
                    await caller.call_tool(ToolCall(name=name, arguments=arguments), select=True)
                    if behind and snapshots in PATHS:  # the call caught up first
                        assert (decoded.count, applied.count) == PATHS[snapshots]
                    for session in [other] if other_now else []:
                        decoded.count = applied.count = 0
                        await session.catch_up()
                        if snapshots in PATHS:
                            assert (decoded.count, applied.count) == PATHS[snapshots]
                    await observer.catch_up()
                    async with await open_session(schema, store=store, key="k", mutations=True) as fresh:
                        for session in [caller, observer, *([other] if other_now else [])]:
                            assert held(session) == held(fresh, prompts[session])
                            assert indexes(session) == indexes(fresh)
                            assert all(session.registry._by_handle.get(at) == i for at, i in fresh.registry._by_handle.items())
                        # A session that only ever caught up holds no way to an object that a restore would not.
                        assert observer.registry._by_handle == fresh.registry._by_handle


@settings(deadline=None, max_examples=examples(200, fast=40), suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(steps, min_size=1, max_size=12), snapshots=st.sampled_from(sorted(SNAPSHOTS)))
def test_a_worker_that_catches_up_holds_what_a_full_restore_gives(program, snapshots):
    asyncio.run(check_program(MemoryStore(), program, snapshots))


@settings(deadline=None, max_examples=examples(60, fast=15), suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(steps, min_size=1, max_size=10), snapshots=st.sampled_from(sorted(SNAPSHOTS)))
def test_the_same_on_sqlite(program, snapshots):
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(check_program(f"sqlite:///{folder}/sessions.db", program, snapshots))


async def call(session: Session, tool: str, **arguments: Any) -> Any:
    return await session.call_tool(ToolCall(name=tool, arguments=arguments), select=True)


async def two_workers(store: MemoryStore) -> tuple[Session, Session]:
    schema = make_schema()
    first = await open_session(schema, store=store, key="k", mutations=True)
    await call(first, "Query_items")
    return first, await open_session(schema, store=store, key="k", mutations=True)


async def test_a_change_made_by_another_worker_is_applied_alone():
    store = MemoryStore()
    first, second = await two_workers(store)
    await call(second, "Mutation_rename", id="i1", name="renamed")
    decoded, applied = Counted(_keeper, "decode_state"), Counted(_keeper, "apply_changes")
    with decoded.patch, applied.patch:
        await call(first, "Query_item", id="i1")  # catches up first, on the log alone
    assert (decoded.count, applied.count) == (0, 1)
    assert first.object("Item#2").preview["name"] == "renamed"
    async with await open_session(make_schema(), store=store, key="k", mutations=True) as fresh:
        assert held(first) == held(fresh) and indexes(first) == indexes(fresh)


async def test_a_snapshot_written_by_another_worker_is_restored_whole():
    store = MemoryStore()
    first, second = await two_workers(store)
    with mock.patch.multiple(_keeper, _LOG_PER_SNAPSHOT=0, _LOG_FLOOR=0):  # the log has outgrown the snapshot
        await call(second, "Mutation_rename", id="i1", name="renamed")
    assert (await store.load("k", known=-1)).log == ()
    decoded, applied = Counted(_keeper, "decode_state"), Counted(_keeper, "apply_changes")
    with decoded.patch, applied.patch:
        await first.catch_up()
    assert (decoded.count, applied.count) == (1, 0)
    assert first.object("Item#2").preview["name"] == "renamed"


async def test_a_fault_in_the_catch_up_is_logged_once_and_the_call_restores_whole(caplog):
    """A catch-up that fails on a session the store holds whole is a bug, not damage: it is logged once
    with its traceback (not swallowed as a silent slowdown), and the call goes on with a full restore."""
    store = MemoryStore()
    first, second = await two_workers(store)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a fault in applying changes")

    with mock.patch.object(_keeper, "apply_changes", broken), caplog.at_level("ERROR", logger="dagtools"):
        for name in ("once", "twice"):
            await call(second, "Mutation_rename", id="i1", name=name)
            result = await call(first, "Query_item", id="i1")  # catches up: the fault, then a full restore
            assert not result.is_error and first.object("Item#2").preview["name"] == name
    faults = [r for r in caplog.records if "fault in dagtools" in r.getMessage()]
    assert len(faults) == 1, caplog.text  # the same fault twice: said once
    assert faults[0].exc_info is not None and "a fault in applying changes" in caplog.text


async def test_a_damaged_change_in_the_store_is_not_taken_for_a_fault():
    """What a damaged stored session raises is the store's problem: the catch-up leaves it to the full
    restore, which says the session is damaged and what to do, and nothing is logged as a fault."""
    store = MemoryStore()
    first, second = await two_workers(store)
    await call(second, "Mutation_rename", id="i1", name="renamed")
    store._logs["k"][-1] = b'{"objects": 7}'  # a change of the wrong shape
    with mock.patch.object(_keeper, "_catch_up_failed") as reported:
        try:
            await first.catch_up()
        except Exception as error:
            assert "could not be read" in str(error) and "delete it from the store" in str(error)
        else:
            raise AssertionError("a damaged stored session was read without a word")
    assert not reported.called


def place(n: int) -> Handle:
    return Handle.from_json({"steps": [{"field": f"place{n}"}]})


def entry(type_name: str, number: int, at: int, key: int, identified: bool) -> ObjectEntry:
    return ObjectEntry(
        id=f"{type_name}#{number}",
        type_name=type_name,
        number=number,
        handle=place(at),
        expression="",
        key=(("id", key),),
        identified=identified,
    )


#: Objects drawn from very few places and keys, so that several share a way there or an identity
#: (the case a registry's indexes must settle as `restore` does: the last object in the list wins).
drawn = st.tuples(st.sampled_from("AB"), st.integers(0, 2), st.integers(0, 2), st.booleans())


@settings(deadline=None, max_examples=300)
@given(
    held=st.lists(drawn, max_size=8),
    changes=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 20)), drawn), max_size=8),
    used=st.lists(st.integers(0, 20), max_size=6),
)
def test_applying_objects_to_a_registry_leaves_what_restoring_them_all_does(held, changes, used):
    """A change's objects (new ones, or held ones again with a new way there or a new identity) and
    the IDs it used, applied to a restored registry, leave what restoring the resulting list does."""
    numbers: dict[str, int] = {}

    def mint(type_name: str, at: int, key: int, identified: bool) -> ObjectEntry:
        numbers[type_name] = numbers.get(type_name, 0) + 1
        return entry(type_name, numbers[type_name], at, key, identified)

    stored = [mint(*item) for item in held]
    order = [e.id for e in reversed(stored)]
    applied: list[ObjectEntry] = []
    for again, (type_name, at, key, identified) in changes:
        if again is not None and again < len(stored) + len(applied):  # a held object read again: same ID and type
            old = (stored + applied)[again]
            applied.append(entry(old.type_name, old.number, at, key, identified))
        else:
            applied.append(mint(type_name, at, key, identified))
    recent = [e.id for e in applied] + [order[n] for n in used if n < len(order)]
    registry = Registry()
    registry.restore(stored, order)
    assert registry.apply(applied, recent)

    merged = {e.id: e for e in stored}
    merged.update((e.id, e) for e in applied)
    final = dict.fromkeys(order)
    for object_id in recent:
        final.pop(object_id, None)
        final[object_id] = None
    whole = Registry()
    whole.restore(list(merged.values()), list(final))
    assert indexes_of(registry) == indexes_of(whole)


def indexes_of(r: Registry) -> tuple[Any, ...]:
    return list(r._by_id.items()), r._by_handle, r._by_key, r._counts, r._latest, list(r._order)


def test_objects_that_do_not_fit_leave_the_registry_as_it_was():
    """An object made but not among the IDs used, or an unknown ID used: a full restore is due."""
    registry = Registry()
    registry.restore([entry("A", 1, 0, 0, True)], ["A#1"])
    before = indexes_of(registry)
    assert not registry.apply([entry("A", 2, 1, 1, True)], [])
    assert not registry.apply([], ["A#7"])
    assert not registry.apply([entry("B", 1, 1, 1, True)], ["A#1"])
    assert indexes_of(registry) == before
