"""Whatever the lists do between calls, and however alike their objects look, no handle ever answers
another object's value.

The API: `items`, value objects with no id (a `label` and a `size`, drawn from so few values that
look-alikes are the rule); `tags`, with an `id` and no root field to fetch one by; `page(skip:, take:)`,
a skip/take page type without id (`{items, total, hasMore}`: two pages of one list look alike); and
writes: `addItem` (an item, as a snapshot), `cloneItem` (a payload listing the item and its copy, two
equal values) and `relabelTag` (the tag the session may hold, with its new label). Every object also
has a hidden serial, which only the test knows, and `echo(salt:)`, which answers `serial:salt`, a field
no preview reads, so reading it goes through the chain that found the object.

Hypothesis draws a world full of look-alikes and a program of changes made behind the session's back
(insert, remove, move, relabel to equal values, duplicate) and calls (list, page, a page's items, echo,
a held field, the three writes, a payload's list, and a save and restore of the session through its
JSON state). The test knows which object every `Type#N` was minted as: a tag by its serial; an object
without identity by its place (the list position, the page and position, the write, the payload's
position) and the values read there, which is all that tells it apart. Whatever happens, one ID names
one such object, and every answer about it is about that object: an echo answers the serial of what
sits at its place now only when that still shows its values, else the call is refused; a held field
answers the value it was found with, or for a tag one at least as new as the last write that returned
it. Once in process (graphql-core executing the strawberry schema) and once over HTTP (on loopback).

Examples: the hypothesis profile's count (tests/conftest.py: 1,000 with `--hypothesis-profile=full`,
as CI runs it), and never fewer than 200, the fast subset's floor here.

Mutation check (each guard removed, the test fails on every run; `test_each_guard_is_needed` below
replaces each rule of the identity entry point, registry/_identity.py's `Identity`, which every session
asks, and asserts that hypothesis finds a program that gets a wrong answer, 5 runs each):
- the key check off: `Identity.holds` answers True, so a chain answers whatever sits at its end;
- merging by values: `Identity.identifies` answers True for every key, so equal values found at two
  places (or in a write's payload) become one `Type#N`;
- a snapshot served after a write: `Identity.newer` keeps the old handle when a write's snapshot
  reaches a held object, so a held field answers its value from before the write.
Shown by: `python -m pytest -q -p no:cacheprovider tests/calls/test_handles_property.py -m slow`
(the fast subset leaves that check out); to see one failure by hand, make one of those edits and run
`python -m pytest -q -p no:cacheprovider tests/calls/test_handles_property.py -k in_process`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import strawberry
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dagtools import Handle, HttpExecutor, LocalExecutor, Session, ToolCall, compile_catalogue
from dagtools.registry._identity import Identity, Key
from dagtools.session._state import SessionState
from tests.conftest import examples
from tests.servers import serve_schema

LABELS = ("a", "b")
SIZES = (0, 1)


@dataclass
class Row:
    serial: int
    label: str
    size: int = 0


@dataclass
class World:
    items: list[Row] = field(default_factory=list)
    tags: list[Row] = field(default_factory=list)
    serials: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def reset(self, items: list[tuple[str, int]], tags: list[str]) -> None:
        self.serials = itertools.count(1)
        self.items = [Row(next(self.serials), label, size) for label, size in items]
        self.tags = [Row(next(self.serials), label) for label in tags]


WORLD = World()


@strawberry.type
class Item:
    """A value: no id, told apart only by what it holds."""

    label: str
    size: int
    serial: strawberry.Private[int]

    @strawberry.field
    def echo(self, salt: int) -> str:
        return f"{self.serial}:{salt}"


@strawberry.type
class Tag:
    id: strawberry.ID
    label: str
    serial: strawberry.Private[int]

    @strawberry.field
    def echo(self, salt: int) -> str:
        return f"{self.serial}:{salt}"


@strawberry.type
class ItemPage:
    """A skip/take page: no id, so two pages with as many items left look alike."""

    items: list[Item]
    total: int
    has_more: bool


@strawberry.type
class CloneResult:
    """A write's payload: the item and its copy, equal values."""

    items: list[Item]
    count: int


def _item(row: Row) -> Item:
    return Item(label=row.label, size=row.size, serial=row.serial)


def _tag(row: Row) -> Tag:
    return Tag(id=strawberry.ID(f"t{row.serial}"), label=row.label, serial=row.serial)


@strawberry.type
class Query:
    @strawberry.field
    def items(self) -> list[Item]:
        return [_item(r) for r in WORLD.items]

    @strawberry.field
    def tags(self) -> list[Tag]:
        return [_tag(r) for r in WORLD.tags]

    @strawberry.field
    def page(self, skip: int, take: int) -> ItemPage:
        rows = WORLD.items[skip : skip + take]
        return ItemPage(items=[_item(r) for r in rows], total=len(WORLD.items), has_more=skip + take < len(WORLD.items))


@strawberry.type
class Mutation:
    @strawberry.mutation
    def add_item(self, label: str, size: int) -> Item:
        row = Row(next(WORLD.serials), label, size)
        WORLD.items.append(row)
        return _item(row)

    @strawberry.mutation
    def clone_item(self, index: int) -> CloneResult:
        row = WORLD.items[index % len(WORLD.items)]
        copy = Row(next(WORLD.serials), row.label, row.size)
        WORLD.items.insert(WORLD.items.index(row) + 1, copy)
        return CloneResult(items=[_item(row), _item(copy)], count=len(WORLD.items))

    @strawberry.mutation
    def relabel_tag(self, index: int, label: str) -> Tag:
        row = WORLD.tags[index % len(WORLD.tags)]
        row.label = label
        return _tag(row)


SCHEMA = strawberry.Schema(query=Query, mutation=Mutation)
CATALOGUE = compile_catalogue(SCHEMA._schema, mutations=True)

values = st.tuples(st.sampled_from(LABELS), st.sampled_from(SIZES))
worlds = st.tuples(st.lists(values, min_size=2, max_size=6), st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=4))
# One step of a program: a change to a list behind the session's back, or a call. Numbers pick a row
# or an ID modulo how many there are, so most steps do something; reads and writes are drawn more often
# than the rest, and every program starts as a model would, by listing both lists.
picks = st.integers(0, 9)
kinds = st.sampled_from(["items", "tags"])
types = st.sampled_from(["Item", "Tag"])
echo = st.tuples(st.just("echo"), types, picks, st.integers(1, 9))
label = st.tuples(st.just("label"), types, picks)
write_tag = st.tuples(st.just("write tag"), picks, st.booleans())  # then read the label back, or not
steps = st.one_of(
    st.tuples(st.just("insert"), kinds, picks, values),
    st.tuples(st.just("remove"), kinds, picks),
    st.tuples(st.just("move"), kinds, picks, picks),
    st.tuples(st.just("relabel"), kinds, picks, values),
    st.tuples(st.just("duplicate"), picks, picks),
    st.tuples(st.just("list"), kinds),
    st.tuples(st.just("page"), st.integers(0, 4), st.integers(1, 3)),
    st.tuples(st.just("page items"), picks),
    st.tuples(st.just("clone items"), picks),
    st.tuples(st.just("add"), values),
    st.tuples(st.just("clone"), picks),
    st.tuples(st.just("restore")),
    *[echo] * 3,
    *[label] * 2,
    *[write_tag] * 2,
)
programs = st.lists(steps, min_size=4, max_size=24).map(lambda drawn: [("list", "items"), ("list", "tags"), *drawn])

FLOOR = 200  # examples at the least, whatever the profile

GONE = ("no longer where it was found", "could not be read")


def change(step: tuple[Any, ...]) -> None:
    if step[0] == "duplicate":  # a look-alike of one item, somewhere else in the list
        rows = WORLD.items
        if rows:
            row = rows[step[1] % len(rows)]
            rows.insert(step[2] % (len(rows) + 1), Row(next(WORLD.serials), row.label, row.size))
        return
    rows = getattr(WORLD, step[1])
    if step[0] == "insert":
        label, size = step[3] if step[1] == "items" else (f"x{step[2] % 2}", 0)
        rows.insert(step[2] % (len(rows) + 1), Row(next(WORLD.serials), label, size))
    elif rows and step[0] == "remove":
        rows.pop(step[2] % len(rows))
    elif rows and step[0] == "move":
        rows.insert(step[3] % len(rows), rows.pop(step[2] % len(rows)))
    elif rows and step[0] == "relabel":
        row = rows[step[2] % len(rows)]
        if step[1] == "items":
            row.label, row.size = step[3]
        else:
            row.label = "y" if row.label == "x" else "x"


@dataclass
class Truth:
    """What the test knows of every ID the session gave."""

    minted: dict[str, Any] = field(default_factory=dict)  # Type#N -> what it was minted as
    tag_labels: dict[int, set[str]] = field(default_factory=dict)  # serial -> labels it may answer now
    clones: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # CloneResult#N -> its items' values
    writes: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    latest: dict[str, str] = field(default_factory=dict)  # type -> the ID the session gave last

    def names(self, object_id: str | None, what: Any) -> None:
        assert object_id is not None
        known = self.minted.setdefault(object_id, what)
        assert known == what, f"{object_id} was minted as {known} and now names {what}"
        self.latest[object_id.split("#")[0]] = object_id

    def of(self, type_name: str, pick: int) -> str | None:
        """An ID of the type: the last one given for half the picks (as a model goes on with what it
        just got), any other for the rest."""
        held = sorted((i for i in self.minted if i.startswith(f"{type_name}#")), key=lambda i: int(i.split("#")[1]))
        if not held:
            return None
        return self.latest[type_name] if pick < 5 else held[pick % len(held)]


def at(place: tuple[Any, ...], row: Row) -> tuple[Any, ...]:
    """An object without identity as the test knows it: where it was found, with what it showed."""
    return ("at", place, (row.label, row.size))


def now_at(place: tuple[Any, ...]) -> Row | None:
    """What sits at a query place now (None for a write's place, which is never read again)."""
    if place[0] == "items":
        return WORLD.items[place[1]] if place[1] < len(WORLD.items) else None
    if place[0] == "page":
        rows = WORLD.items[place[1] : place[1] + place[2]]
        return rows[place[3]] if place[3] < len(rows) else None
    return None


async def run(program: list[tuple[Any, ...]], session: Session, executor: Any) -> None:
    truth = Truth()
    for row in WORLD.tags:
        truth.tag_labels[row.serial] = {row.label}

    async def tool(name: str, **arguments: Any) -> Any:
        return await session.call_tool(ToolCall(name=name, arguments=arguments))

    async def ok(name: str, **arguments: Any) -> Any:
        result = await tool(name, **arguments)
        assert not result.is_error, result.value
        return result.value

    for step in program:
        kind = step[0]
        if kind in ("insert", "remove", "move", "relabel", "duplicate"):
            change(step)
            for row in WORLD.tags:
                truth.tag_labels.setdefault(row.serial, set()).add(row.label)
        elif kind == "list":
            ids = (await ok(f"Query_{step[1]}"))["result"]
            rows = getattr(WORLD, step[1])
            for index, (object_id, row) in enumerate(zip(ids, rows, strict=True)):
                truth.names(object_id, ("tag", row.serial) if step[1] == "tags" else at(("items", index), row))
        elif kind == "page":
            skip, take = step[1], step[2]
            page = (await ok("Query_page", skip=skip, take=take))["result"]
            total = len(WORLD.items)
            truth.names(page, ("page", skip, take, total, skip + take < total))
        elif kind == "page items":
            page = truth.of("ItemPage", step[1])
            if page is None:
                continue
            _, skip, take, total, more = truth.minted[page]
            result = await tool("ItemPage_items", ItemPage=page)
            if result.is_error:  # the page it was no longer shows as many items
                assert any(g in result.value["error"] for g in GONE), result.value
                assert (len(WORLD.items), skip + take < len(WORLD.items)) != (total, more)
                continue
            rows = WORLD.items[skip : skip + take]
            for index, (object_id, row) in enumerate(zip(result.value["result"], rows, strict=True)):
                truth.names(object_id, at(("page", skip, take, index), row))
        elif kind == "add":
            label, size = step[1]
            object_id = (await ok("Mutation_addItem", label=label, size=size))["result"]
            truth.names(object_id, at(("added", next(truth.writes)), WORLD.items[-1]))
        elif kind == "clone":
            if not WORLD.items:
                continue
            row = WORLD.items[step[1] % len(WORLD.items)]
            payload = (await ok("Mutation_cloneItem", index=step[1]))["result"]
            truth.names(payload, ("clone", next(truth.writes)))
            truth.clones[payload] = [(row.label, row.size)] * 2
        elif kind == "clone items":
            payload = truth.of("CloneResult", step[1])
            if payload is None:
                continue
            ids = (await ok("CloneResult_items", CloneResult=payload))["result"]
            for index, (object_id, shown) in enumerate(zip(ids, truth.clones[payload], strict=True)):
                truth.names(object_id, ("at", ("payload", payload, index), shown))
        elif kind == "write tag":
            if not WORLD.tags:
                continue
            row = WORLD.tags[step[1] % len(WORLD.tags)]
            label = f"w{next(truth.writes)}"
            object_id = (await ok("Mutation_relabelTag", index=step[1], label=label))["result"]
            truth.names(object_id, ("tag", row.serial))
            truth.tag_labels[row.serial] = {label}  # nothing older may be answered now
            if step[2]:
                await read("label", ("label", "Tag", 0), truth, tool)
        elif kind == "restore":  # as a store keeps it: the state's JSON, into a new session
            state = SessionState.from_json(json.loads(json.dumps(session.state().to_json())))
            session = Session(CATALOGUE, executor)
            session.restore(state)
        else:
            await read(kind, step, truth, tool)


async def read(kind: str, step: tuple[Any, ...], truth: Truth, tool: Any) -> None:
    """An echo (through the chain) or a label (held, or through the chain) of a minted object."""
    type_name = step[1]
    object_id = truth.of(type_name, step[2])
    if object_id is None:
        return
    known = truth.minted[object_id]
    if kind == "echo":
        salt = step[3]
        result = await tool(f"{type_name}_echo", **{type_name: object_id, "salt": salt})
        if known[0] == "tag":
            if not result.is_error:
                assert result.value["result"] == f"{known[1]}:{salt}", f"{object_id} answered another tag's echo"
            else:
                assert any(g in result.value["error"] for g in (*GONE, "came from a mutation")), result.value
            return
        row = now_at(known[1])
        if result.is_error:
            assert any(g in result.value["error"] for g in (*GONE, "came from a mutation")), result.value
            return
        assert row is not None and (row.label, row.size) == known[2], f"{object_id} answered for another item"
        assert result.value["result"] == f"{row.serial}:{salt}", f"{object_id} answered another item's echo"
        return
    result = await tool(f"{type_name}_label", **{type_name: object_id})
    if result.is_error:
        assert any(g in result.value["error"] for g in GONE), result.value
        return
    if known[0] == "tag":
        assert result.value["result"] in truth.tag_labels[known[1]], f"{object_id} answered a label older than a write"
    else:
        assert result.value["result"] == known[2][0], f"{object_id} answered another item's label"


@pytest.fixture(scope="module")
def loopback_url() -> Iterator[str]:
    with serve_schema(SCHEMA) as (url, _):
        yield url


def check(where: str, url: str, *, fresh: bool = False) -> None:
    """Run the property under the profile's example count (at least 200; over HTTP in the fast subset,
    50: the same program's logic runs its 200 in process). `fresh`, for the mutation check: exactly
    200, no example kept from an earlier run replayed, no shrinking."""
    extra: dict[str, Any] = {"database": None, "phases": [Phase.generate]} if fresh else {}
    count = max(FLOOR, settings.default.max_examples)

    @settings(
        max_examples=FLOOR if fresh else count if where == "in process" else examples(count, fast=50),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        **extra,
    )
    @given(world=worlds, program=programs)
    def property_(world: tuple[list[tuple[str, int]], list[str]], program: list[tuple[Any, ...]]) -> None:
        async def go() -> None:
            WORLD.reset(*world)
            executor = LocalExecutor(SCHEMA) if where == "in process" else HttpExecutor(url)
            session = Session(CATALOGUE, executor)
            session.select(CATALOGUE.names())
            try:
                await run(program, session, executor)
            finally:
                await executor.aclose()

        asyncio.run(go())

    property_()


@pytest.mark.parametrize("where", ["in process", "over HTTP"])
def test_no_handle_ever_answers_another_objects_value(where: str, loopback_url: str) -> None:
    check(where, loopback_url)


def no_key_check(self: Identity, found: Any, key: Key) -> bool:
    return True


def merging_by_values(self: Identity, type_name: str, key: Key) -> bool:
    return bool(key)


def snapshot_after_write(self: Identity, old: Handle, new: Handle, *, written: bool = False) -> Handle:
    return old if new.is_snapshot and not old.is_snapshot else new


#: Each guard, as the rule of the identity entry point it is and that rule with the guard removed.
GUARDS = {
    "the key check off": ("holds", no_key_check),
    "merging by values": ("identifies", merging_by_values),
    "a snapshot served after a write": ("newer", snapshot_after_write),
}
#: What the property says when an ID answers for the wrong object (not a call that merely failed, as a
#: replacement that no longer fits its rule's signature would make every call do).
WRONG_ANSWER = r"was minted as|answered another|answered for another|answered a label older"


@pytest.mark.slow
@pytest.mark.parametrize("guard", list(GUARDS))
def test_each_guard_is_needed(guard: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutation check: with the guard removed the property finds a wrong answer within 200
    examples, on each of five runs."""
    rule, replacement = GUARDS[guard]
    assert callable(getattr(Identity, rule))  # the rule still has this name: the replacement is what runs
    monkeypatch.setattr(Identity, rule, replacement)
    for _ in range(5):
        with pytest.raises(AssertionError, match=WRONG_ANSWER):
            check("in process", "", fresh=True)


def test_the_program_can_tell_a_wrong_answer() -> None:
    """The property is not vacuous: the same program, read by list position alone, does answer
    another object's value (as dagtools did before it checked keys)."""

    async def go() -> list[str]:
        WORLD.reset([("a", 0), ("b", 0), ("a", 1)], ["x"])
        session = Session(CATALOGUE, LocalExecutor(SCHEMA))
        session.select(CATALOGUE.names())
        await session.call_tool(ToolCall(name="Query_items", arguments={}))
        WORLD.items.insert(0, WORLD.items.pop())  # the last item moves to the top
        prepared = session.fields.calls.prepare(CATALOGUE.tool("Item_echo"), {"Item": "Item#1", "salt": 1})
        document = session.fields.calls.queries.build(prepared.steps)  # the chain without its key check
        answer = await session.executor.execute(document.text, document.variables)
        checked = await session.call_tool(ToolCall(name="Item_echo", arguments={"Item": "Item#1", "salt": 1}))
        return [answer.data["items"][0]["echo"], checked.value.get("error", "")]

    unchecked, checked = asyncio.run(go())
    assert unchecked == "3:1"  # Item#1 was serial 1; position 0 now holds serial 3
    assert "Item#1 is no longer where it was found" in checked
