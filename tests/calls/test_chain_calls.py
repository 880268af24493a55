"""Chains: several field tools in one call and ONE request, each step on what the step before
returned (calls/_chain_calls.py). Measured on the multi-hop SWAPI task ("the homeworlds of a
starship's pilots") over real HTTP on swapi-graphql, through a recording proxy that counts the
requests reaching the server: the fixed toolset through the official `mcp` client, and a session."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from dagtools import ToolCall, open_session
from tests.previews import rows  # noqa: E402
from tests.servers import Recorder, forwarding, serve_asgi

CHAIN = [
    {"tool": "Query_starship", "arguments": {"starshipID": "10"}},
    {"tool": "Starship_pilotConnection"},
    {"tool": "Person_homeworld"},
]
#: The Millennium Falcon's pilots and where each comes from, as swapi-graphql's data says.
HOMEWORLDS = {"Chewbacca": "Kashyyyk", "Han Solo": "Corellia", "Lando Calrissian": "Socorro", "Nien Nunb": "Sullust"}


@pytest.fixture
def counted_swapi(swapi_url: str) -> Iterator[tuple[str, Recorder]]:  # noqa: F811
    recorder = Recorder(forwarding(swapi_url))
    with serve_asgi(recorder) as base:
        yield f"{base}/graphql", recorder


def _reads(recorder: Recorder) -> list[Any]:
    return [r.json() for r in recorder.requests if not r.is_introspection]


def _check_homeworlds(answer: dict[str, Any]) -> None:
    """The chain's answer says which pilot comes from which planet, by IDs and names."""
    (starship, pilots), *_ = answer["result"].items()
    assert answer["objects"][starship] == "Millennium Falcon"
    found = {answer["objects"][pilot]: rows(answer)[planet]["name"] for pilot, planet in pilots.items()}
    assert found == HOMEWORLDS


async def test_swapi_homeworlds_of_a_starships_pilots_in_one_dynamic_call(counted_swapi: tuple[str, Recorder]) -> None:
    url, recorder = counted_swapi
    async with await open_session(url, cache=False) as session:
        before = len(_reads(recorder))
        result = await session.call_tool(ToolCall(name="callChain", arguments={"steps": CHAIN}))
        assert not result.is_error, result.value
        sent = _reads(recorder)[before:]
        assert len(sent) == 1 and "pilotConnection" in sent[0]["query"] and "homeworld" in sent[0]["query"]
        _check_homeworlds(result.value)
        assert result.value["note"].endswith(" Every list read on the way is whole.")  # the pilots: no next page to ask for
        # every object on the way is minted as usual: a pilot's own tool reads that pilot, from its identity
        pilot = next(k for k, v in result.value["objects"].items() if v == "Han Solo")
        session.select(["Person_birthYear"])
        born = await session.call_tool(ToolCall(name="Person_birthYear", arguments={"Person": pilot}))
        assert born.value == {"result": "29BBY"}
        # and a chain may start from one: its handle is `node(id:)`, the Node interface, read as a Person
        again = await session.call_tool(
            ToolCall(
                name="callChain",
                arguments={"steps": [{"tool": "Person_homeworld", "arguments": {"Person": pilot}}, {"tool": "Planet_name"}]},
            )
        )
        assert not again.is_error, again.value
        ((planet, name),) = again.value["result"].items()
        assert name == "Corellia" and planet.startswith("Planet#")
        print(f"SWAPI multi-hop task in dynamic mode: 1 call, {len(result.content.encode())} bytes read")


async def test_a_bad_argument_in_step_three_is_refused_before_anything_is_sent(counted_swapi: tuple[str, Recorder]) -> None:
    url, recorder = counted_swapi
    async with await open_session(url, cache=False) as session:
        before, objects = len(recorder.requests), len(session.registry)
        steps = [*CHAIN[:2], {"tool": "Person_filmConnection", "arguments": {"first": "lots"}}]
        result = await session.call_tool(ToolCall(name="callChain", arguments={"steps": steps}))
        assert result.is_error
        message = result.value["error"]
        assert message.startswith("Step 3 of the chain: Bad argument for Person_filmConnection: first:") and "Nothing was sent" in message
        wrong = await session.call_tool(ToolCall(name="callChain", arguments={"steps": [CHAIN[0], {"tool": "Person_homeworld"}]}))
        assert "Person_homeworld is a field of Person, but step 1 (Query_starship) gives Starship objects" in wrong.value["error"]
        named = await session.call_tool(
            ToolCall(name="callChain", arguments={"steps": [CHAIN[0], {"tool": "Starship_name", "arguments": {"Starship": "Starship#1"}}]})
        )
        assert "leave out Starship" in named.value["error"]
        assert len(recorder.requests) == before and len(session.registry) == objects  # nothing reached the server, nothing minted


async def test_a_chain_through_values_without_identity_mints_items_that_read_their_own_object() -> None:
    """Ariadne's time slots have no id: each is reached again through its place in the list, key checked."""
    from tests.pyservers.booking import app as booking_app

    recorder = Recorder(booking_app())
    with serve_asgi(recorder) as base:
        async with await open_session(f"{base}/graphql", cache=False) as session:
            before = len(recorder.requests)
            steps = [{"tool": "Query_slots", "arguments": {"day": "2030-01-01"}}, {"tool": "Slot_room"}]
            result = await session.call_tool(ToolCall(name="callChain", arguments={"steps": steps}))
            assert not result.is_error, result.value
            assert len(recorder.requests) == before + 1
            slots = result.value["result"]
            assert len(slots) >= 2 and all(room.startswith("Room#") for room in slots.values())
            second = list(slots)[1]
            session.select(["Slot_price", "Slot_startsAt"])
            price = await session.call_tool(ToolCall(name="Slot_price", arguments={"Slot": second, "currency": "EUR"}))
            assert price.value == {"result": 25.0}  # the second slot's own price, read through its place in the list
            starts = await session.call_tool(ToolCall(name="Slot_startsAt", arguments={"Slot": second}))
            assert starts.value["result"] == result.value["objects"][second]


async def _fixed_bytes(client: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], int]:
    answers, read = [], 0
    for name, arguments in calls:
        answer = await client.call_tool(name, arguments)
        assert not answer.is_error, answer.content[0].text
        read += len(answer.content[0].text.encode())
        answers.append(json.loads(answer.content[0].text))
    return answers, read


async def test_swapi_multi_hop_task_in_fixed_mode_reads_less_in_fewer_calls(counted_swapi: tuple[str, Recorder]) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from dagtools.mcpserver import McpConfig, McpToolServer

    url, recorder = counted_swapi
    server = McpToolServer(McpConfig(source=url, tools="fixed", cache=False))
    async with Client(server.server, mode="legacy") as client:
        before = len(_reads(recorder))
        (chained,), after_bytes = await _fixed_bytes(client, [("callChain", {"steps": CHAIN})])
        assert len(_reads(recorder)) - before == 1
        _check_homeworlds(chained)
    # the same task one hop a call, as it ran before chains: starship, pilots, then each pilot's homeworld
    async with Client(McpToolServer(McpConfig(source=url, tools="fixed", cache=False)).server, mode="legacy") as client:
        hops = [
            ("callTool", {"tool": "Query_starship", "arguments": {"starshipID": "10"}}),
            ("callTool", {"tool": "Starship_pilotConnection", "arguments": {}}),
        ]
        answers, hop_bytes = await _fixed_bytes(client, hops)
        pilots = answers[1]["result"]
        homes = [("callTool", {"tool": "Person_homeworld", "arguments": {"Person": p}}) for p in pilots]
        answers, more = await _fixed_bytes(client, homes)
        hop_bytes += more
        assert {a["preview"]["name"] for a in answers} == set(HOMEWORLDS.values())
    print(
        f"SWAPI multi-hop task in fixed mode: 1 call, {after_bytes} bytes read; one hop a call: {2 + len(pilots)} calls, {hop_bytes} bytes"
    )
    assert after_bytes <= hop_bytes


async def test_a_chain_from_a_value_that_moved_is_refused_not_answered_about_another() -> None:
    """A chain may start from an object reached by a chain; the request checks it still sits there."""
    from tests.pyservers.booking import app as booking_app

    recorder = Recorder(booking_app())
    with serve_asgi(recorder) as base:
        async with await open_session(f"{base}/graphql", cache=False, mutations=True) as session:
            session.select(["Query_slots", "Mutation_book"])
            await session.call_tool(ToolCall(name="Query_slots", arguments={"day": "2030-01-01"}))
            steps = [{"tool": "Slot_room", "arguments": {"Slot": "Slot#2"}}]
            room = await session.call_tool(ToolCall(name="callChain", arguments={"steps": steps}))
            assert not room.is_error, room.value
            assert room.value["result"].startswith("Room#")
            booked = await session.call_tool(
                ToolCall(name="Mutation_book", arguments={"day": "2030-01-01", "startsAt": "09:00", "name": "Eve"})
            )
            assert not booked.is_error, booked.value  # 09:00 moves to the end: Slot#2's place now holds 10:00
            objects = len(session.registry)
            moved = await session.call_tool(ToolCall(name="callChain", arguments={"steps": steps}))
            assert moved.is_error and "Slot#2 is no longer where it was found" in moved.value["error"]
            assert len(session.registry) == objects


async def test_deferred_mode_lists_call_chain_from_the_start_and_runs_it(counted_swapi: tuple[str, Recorder]) -> None:
    from dagtools.session._deferred_tools import deferred_tools

    url, recorder = counted_swapi
    async with await open_session(url, cache=False) as session:
        listed = deferred_tools(session)
        chain = next(t for t in listed.shown if t.name == "callChain")
        assert '"tool": "Query_' in chain.description  # an example built from the served API
        before = len(_reads(recorder))
        result = await session.call_tools([ToolCall(name="callChain", arguments={"steps": CHAIN})])
        assert not result[0].is_error, result[0].value
        _check_homeworlds(result[0].value)
        assert len(_reads(recorder)) - before == 1


async def test_swapi_multi_hop_task_in_dynamic_mode_reads_less_than_one_hop_a_call(counted_swapi: tuple[str, Recorder]) -> None:
    url, _ = counted_swapi
    async with await open_session(url, cache=False) as session:
        chained = await session.call_tool(ToolCall(name="callChain", arguments={"steps": CHAIN}))
        after = len(chained.content.encode())
    async with await open_session(url, cache=False) as session:  # the same task one hop a call, as before chains
        read = 0

        async def hop(name: str, **arguments: Any) -> Any:
            nonlocal read
            result = await session.call_tool(ToolCall(name=name, arguments=arguments))
            assert not result.is_error, result.value
            read += len(result.content.encode())
            return result.value

        await hop("selectTools", tools=["Query_starship", "Starship_pilotConnection", "Person_homeworld"])
        await hop("Query_starship", starshipID="10")
        pilots = (await hop("Starship_pilotConnection"))["result"]
        homes = [await hop("Person_homeworld", Person=pilot) for pilot in pilots]
        assert {home["preview"]["name"] for home in homes} == set(HOMEWORLDS.values())
    print(f"SWAPI multi-hop task in dynamic mode: 1 call, {after} bytes read; one hop a call: {3 + len(pilots)} calls, {read} bytes")
    assert after <= read


async def test_a_chain_through_an_interface_to_a_value(counted_swapi: tuple[str, Recorder]) -> None:
    """`node(id:)` answers the Node interface: the next step reads its Person fields in a fragment,
    and a last step that reads a value answers the value."""
    url, recorder = counted_swapi
    async with await open_session(url, cache=False) as session:
        han = "cGVvcGxlOjE0"  # swapi's global id of people/14, Han Solo
        steps = [{"tool": "Query_node", "arguments": {"id": han}}, {"tool": "Person_homeworld"}, {"tool": "Planet_name"}]
        before = len(_reads(recorder))
        result = await session.call_tool(ToolCall(name="callChain", arguments={"steps": steps}))
        assert not result.is_error, result.value
        assert len(_reads(recorder)) - before == 1
        ((person, homes),) = result.value["result"].items()
        assert result.value["objects"][person] == "Han Solo"
        assert list(homes.values()) == ["Corellia"]


async def test_a_chain_past_its_object_bound_mints_nothing(counted_swapi: tuple[str, Recorder], monkeypatch: pytest.MonkeyPatch) -> None:
    from dagtools.calls import _chain_calls

    monkeypatch.setattr(_chain_calls, "MAX_OBJECTS", 5)  # the task mints 9: a starship, 4 pilots, 4 planets
    url, _ = counted_swapi
    async with await open_session(url, cache=False) as session:
        result = await session.call_tool(ToolCall(name="callChain", arguments={"steps": CHAIN}))
        assert result.is_error and "answered 9 objects, more than the 5 a chain takes" in result.value["error"]
        assert len(session.registry) == 0


async def test_a_chain_cut_by_a_page_never_says_its_lists_are_whole(counted_swapi: tuple[str, Recorder]) -> None:
    url, _ = counted_swapi
    async with await open_session(url, cache=False) as session:
        steps = [{"tool": "Query_allFilms", "arguments": {"first": 1}}, {"tool": "Film_characterConnection", "arguments": {"first": 2}}]
        result = await session.call_tool(ToolCall(name="callChain", arguments={"steps": steps}))
        assert not result.is_error, result.value
        assert "characterConnection has more pages" in result.value["note"] and "whole" not in result.value["note"]


def test_a_chain_reads_only_key_and_name_of_the_objects_on_its_way():
    """Each step on the way adds its object's key and name to the document, not its preview, so a chain
    of the longest length stays within the read budget (DESIGN.md: 4 KB, chains too); the last step's
    objects, whose previews the model reads, are read in full."""
    from graphql import build_schema

    from dagtools import Handle, Step, compile_catalogue
    from dagtools.calls._chain_calls import MAX_STEPS, prepare_chain
    from dagtools.executors._base import SchemaOnlyExecutor
    from dagtools.session._session import Session

    wide = " ".join(f"detail{n}: String" for n in range(20))
    catalogue = compile_catalogue(
        build_schema(f"type Query {{ part(id: ID!): Part }} type Part {{ id: ID! name: String {wide} next: Part parts: [Part!]! }}")
    )
    session = Session(catalogue, SchemaOnlyExecutor())
    held = session.registry.mint("Part", Handle((Step.of("part", {"id": "p1"}),)), expression="x", identity="p1").id

    def document(steps: int) -> str:
        chain = [{"tool": "Part_next", "arguments": {"Part": held}}] + [{"tool": "Part_next"}] * (steps - 1)
        return prepare_chain(session.fields.calls, chain).text

    full = session.fields.calls.queries.selection("Part")
    assert "detail9" in full and document(1).count("detail9") == 1  # the last step: its whole preview
    longest = document(MAX_STEPS)
    assert longest.count("detail9") == 1, longest
    per_step = (len(longest) - len(document(1))) / (MAX_STEPS - 1)
    assert per_step <= len("next { __typename id name }") + 2, longest
