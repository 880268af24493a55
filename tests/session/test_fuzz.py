"""Whatever a model sends, a session answers with a result and never raises; a failed call changes nothing.

The calls are drawn wide: any Unicode (lone surrogates included), IDs whose digits are not ASCII or
too many for `int`, integers of thousands of digits, NaN and infinities, lists nested thousands deep,
and argument text that is not JSON or nests past the recursion limit. Each example runs in process
and over real HTTP on loopback (the `kitchens` fixture); examples are derandomized, so a run in
CI draws the same calls as a run here. A full run draws 1,000 examples (enough to meet every kind of
value below many times over), the fast subset (`-m "not e2e and not slow"`) 100: tests/conftest.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagtools import HttpExecutor, LocalExecutor, Session, ToolCall
from tests.kitchen import SEED_OUTPUTS, kitchen_session, state

any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=24)  # surrogates included
unicode_digits = st.text(st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=6)
TYPES = ["Potato", "Sink", "Oven", "Plate", "Fries", "Food", "potato", "Nope", ""]


def _deep(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


def _as_text(value: Any) -> str:
    """JSON text of a drawn value; Python's own repr where JSON cannot print it (huge or deep)."""
    try:
        return json.dumps(value)
    except (ValueError, RecursionError):
        return '{"settings": {"minutes": 1' + "0" * 5000 + "}}"


object_ids = st.one_of(
    st.sampled_from(["Potato#1", "Potato#2", "Sink#1", "Plate#1", "Fries#1", "Oven#1", "3", "#1", "potato#1", "Potato# 1"]),
    st.builds(lambda t, d: f"{t}#{d}", st.sampled_from(TYPES), unicode_digits),
    st.builds(lambda d: d, unicode_digits),
    st.builds(
        lambda t, n, hashes: f"{t}{hashes}{'1' * n}", st.sampled_from(TYPES), st.integers(14, 5000), st.sampled_from(["#", "", "##"])
    ),
    st.builds(lambda t, s: f"{t}#{s}", st.sampled_from(TYPES), any_text),
)
huge_numbers = st.one_of(
    st.integers(),
    st.integers(300, 5000).map(lambda digits: 10**digits),
    st.integers(300, 5000).map(lambda digits: -(10**digits) + 7),
    st.floats(),  # NaN and infinities included
    st.sampled_from([2**31, -(2**31) - 1, 2**63, 1e308, 5e-324]),
)
leaves = st.one_of(
    st.none(),
    st.booleans(),
    huge_numbers,
    any_text,
    object_ids,
    st.sampled_from(["STICKS", "SLICES", "Russet", "", " "]),
    st.integers(60, 1500).map(_deep),
)
json_values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3) | st.lists(st.tuples(any_text | st.sampled_from(["minutes", "fan"]), inner), max_size=3).map(dict)
    ),
    max_leaves=4,
)

NAMES = ["selectTools", "save", "readResult", "Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake", "Oven_manual", "Sink_rinse"]
NAMES += ["Fries_plate", "Plate_fries", "Query_potato", "Query_potatoes", "Mutation_tip", "Potato_wash", "Nope_nothing", ""]
PARAMS = ["Potato", "Oven", "Sink", "Fries", "Plate", "sink", "item", "shape", "plate", "settings", "variety", "tools", "fries"]
PARAMS += ["ref", "offset", "minutes", "x"]

argument_text = st.one_of(
    any_text,
    st.builds(lambda n: "[" * n + "]" * n, st.integers(500, 5000)),
    st.builds(lambda n: '{"a": ' * n + "1" + "}" * n, st.integers(500, 3000)),
    st.builds(lambda n: '{"Potato": ' + "1" * n + "}", st.integers(4000, 6000)),
    st.sampled_from(
        ['{"settings": {"minutes": NaN}}', '{"settings": {"minutes": -Infinity}}', '{"Potato": "\\udc80"}', "[]", "null", '"x"']
    ),
    st.builds(_as_text, st.lists(st.tuples(st.sampled_from(PARAMS), json_values), max_size=3).map(dict)),
)
arguments = st.lists(st.tuples(st.sampled_from(PARAMS) | any_text, json_values), max_size=3).map(dict)
calls = st.builds(
    lambda name, arguments, raw: ToolCall(name=name, arguments=raw if raw is not None else arguments),
    st.sampled_from(NAMES) | any_text,
    arguments,
    st.none() | argument_text,
)
SELECTED = ["Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake", "Sink_rinse", "Fries_plate", "Oven_manual", "Query_potato"]


class Kitchen:
    """Fresh kitchen sessions on one executor, cheap enough for a thousand examples: the seed's
    inputs are loaded once, and each new session starts with copies of their entries."""

    def __init__(self, name: str, executor: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.name = name
        self.executor = executor
        self.template = loop.run_until_complete(kitchen_session(executor=executor))

    def session(self) -> Session:
        session = Session(self.template.catalogue, self.executor, outputs=SEED_OUTPUTS)
        for entry in self.template.registry:
            session.registry.mint(
                entry.type_name,
                entry.handle,
                expression=entry.expression,
                description=entry.description,
                identity=entry.identity,
                preview=entry.preview,
            )
        session.select(SELECTED)
        return session


@pytest.fixture
def kitchens(loopback):
    """The kitchen API in process and over real HTTP on loopback, and the one event loop that runs both."""
    from examples.kitchen.api import schema

    loop = asyncio.new_event_loop()
    http = HttpExecutor(loopback.mount(schema).url, retries=0, timeout=10.0)
    made = [Kitchen("local", LocalExecutor(schema), loop), Kitchen("http", http, loop)]
    yield loop, made
    loop.run_until_complete(http.aclose())
    loop.close()


@settings(  # examples per transport: the hypothesis profile's (tests/conftest.py), 1,000 in a full run
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(turn=st.lists(calls, min_size=1, max_size=3))
def test_any_calls_give_results_and_failed_ones_change_nothing(kitchens, turn):
    loop, made = kitchens
    for kitchen in made:  # every example runs in process and over HTTP
        loop.run_until_complete(_run(kitchen.session(), turn))


async def _run(session: Session, turn: list[ToolCall]) -> None:
    for call in turn:  # one by one: every failed call leaves the session as it was
        before = state(session)
        result = await session.execute(call)
        _check(result, call)
        if result.is_error:
            assert state(session) == before, result.value
    before = state(session)
    results = await session.call_tools(turn)  # as one turn: reads share one request
    assert [r.name for r in results] == [c.name for c in turn]
    for result, call in zip(results, turn):
        _check(result, call)
    if all(r.is_error for r in results):
        assert state(session) == before


def _check(result, call) -> None:
    assert result.name == call.name
    if result.is_error:
        message = result.value["error"]
        assert isinstance(message, str) and message
        message.encode("utf-8")  # an error text can always be sent on, whatever the call held
