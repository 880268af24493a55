"""A list that reorders, grows and shrinks between calls never makes a handle answer another object's value.

Two lists of objects with no root field to fetch one by: `items`, values with no id (a `label` and a
`size`), and `tags`, with an `id`. Every object also has a hidden serial, which only the test knows,
and `echo(salt:)`, which answers `serial:salt`, a field no preview reads, so reading it goes through
the list. Hypothesis runs random programs of list changes (insert, remove, move, relabel) and calls
(list again, read `echo`, read a field read when the object was found); whatever happens, every
answer about `Type#N` is about the object minted as `Type#N`, or an error result. Once in process
(graphql-core executing the strawberry schema) and once over HTTP (the schema served on loopback).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import strawberry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagtools import HttpExecutor, LocalExecutor, Session, ToolCall, compile_catalogue
from tests.servers import serve_schema


@dataclass
class Row:
    serial: int
    label: str
    size: int = 1


@dataclass
class World:
    items: list[Row] = field(default_factory=list)
    tags: list[Row] = field(default_factory=list)
    serials: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def reset(self) -> None:
        self.serials = itertools.count(1)
        self.items = [Row(next(self.serials), f"item{i}") for i in range(3)]
        self.tags = [Row(next(self.serials), f"tag{i}") for i in range(3)]


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
class Query:
    @strawberry.field
    def items(self) -> list[Item]:
        return [Item(label=r.label, size=r.size, serial=r.serial) for r in WORLD.items]

    @strawberry.field
    def tags(self) -> list[Tag]:
        return [Tag(id=strawberry.ID(f"t{r.serial}"), label=r.label, serial=r.serial) for r in WORLD.tags]


SCHEMA = strawberry.Schema(query=Query)
CATALOGUE = compile_catalogue(SCHEMA._schema)

# One step of a program: a change to a list, or a call.
steps = st.one_of(
    st.tuples(st.just("insert"), st.sampled_from(["items", "tags"]), st.integers(0, 6)),
    st.tuples(st.just("remove"), st.sampled_from(["items", "tags"]), st.integers(0, 6)),
    st.tuples(st.just("move"), st.sampled_from(["items", "tags"]), st.integers(0, 6), st.integers(0, 6)),
    st.tuples(st.just("relabel"), st.sampled_from(["items", "tags"]), st.integers(0, 6)),
    st.tuples(st.just("list"), st.sampled_from(["items", "tags"])),
    st.tuples(st.just("echo"), st.sampled_from(["Item", "Tag"]), st.integers(1, 8)),
    st.tuples(st.just("label"), st.sampled_from(["Item", "Tag"]), st.integers(1, 8)),
)
programs = st.lists(steps, min_size=4, max_size=14)


def change(step: tuple[Any, ...]) -> None:
    rows = getattr(WORLD, step[1])
    if step[0] == "insert":
        serial = next(WORLD.serials)
        rows.insert(min(step[2], len(rows)), Row(serial, f"{step[1][:-1]}{serial}"))
    elif rows and step[0] == "remove":
        rows.pop(step[2] % len(rows))
    elif rows and step[0] == "move":
        rows.insert(step[3] % len(rows), rows.pop(step[2] % len(rows)))
    elif rows and step[0] == "relabel":
        row = rows[step[2] % len(rows)]
        row.label, row.size = f"{row.label}+", row.size + 1


async def run(program: list[tuple[Any, ...]], session: Session) -> None:
    WORLD.reset()
    minted: dict[str, int] = {}  # Type#N -> the serial of the object it was minted as
    labels: dict[int, set[str]] = {}  # serial -> every label it has had
    for row in WORLD.items + WORLD.tags:
        labels[row.serial] = {row.label}

    async def tool(name: str, **arguments: Any) -> Any:
        return await session.call_tool(ToolCall(name=name, arguments=arguments))

    for step in program:
        if step[0] in ("insert", "remove", "move", "relabel"):
            change(step)
            for row in WORLD.items + WORLD.tags:
                labels.setdefault(row.serial, set()).add(row.label)
        elif step[0] == "list":
            result = await tool(f"Query_{step[1]}")
            assert not result.is_error, result.value
            rows = getattr(WORLD, step[1])
            for object_id, row in zip(result.value["result"], rows, strict=True):
                assert minted.setdefault(object_id, row.serial) == row.serial, f"{object_id} now names another object"
        else:
            type_name, number = step[1], step[2]
            object_id = f"{type_name}#{number}"
            if object_id not in minted:
                continue
            serial = minted[object_id]
            if step[0] == "echo":
                result = await tool(f"{type_name}_echo", **{type_name: object_id, "salt": number})
                if not result.is_error:
                    assert result.value["result"] == f"{serial}:{number}", f"{object_id} answered another object's echo"
                else:
                    assert "no longer where it was found" in result.value["error"], result.value
            else:
                result = await tool(f"{type_name}_label", **{type_name: object_id})
                assert not result.is_error, result.value
                assert result.value["result"] in labels[serial], f"{object_id} answered another object's label"


@pytest.fixture(scope="module")
def loopback_url() -> Iterator[str]:
    with serve_schema(SCHEMA) as (url, _):
        yield url


@pytest.mark.parametrize("where", ["in process", "over HTTP"])
def test_no_handle_ever_answers_another_objects_value(where: str, loopback_url: str) -> None:
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(program=programs)
    def check(program: list[tuple[Any, ...]]) -> None:
        async def go() -> None:
            executor = LocalExecutor(SCHEMA) if where == "in process" else HttpExecutor(loopback_url)
            session = Session(CATALOGUE, executor)
            session.select(CATALOGUE.names())
            try:
                await run(program, session)
            finally:
                await executor.aclose()

        asyncio.run(go())

    check()


def test_the_program_can_tell_a_wrong_answer() -> None:
    """The property is not vacuous: the same program, read by list position alone, does answer
    another object's value (as dagtools did before it checked keys)."""

    async def go() -> list[str]:
        WORLD.reset()
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
