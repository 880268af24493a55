"""Whatever a model sends, a session answers with a result and never raises; a failed call changes nothing."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagtools import ToolCall

from .kitchen import kitchen_session, state

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 10**12)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["Potato#1", "Potato#2", "Sink#1", "Plate#1", "Fries#1", "3", "#1", "potato#1", "STICKS"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)

NAMES = [
    "selectTools",
    "save",
    "readResult",
    "Potato_rinse",
    "Potato_peel",
    "Potato_slice",
    "Oven_bake",
    "Oven_manual",
    "Sink_rinse",
    "Fries_plate",
    "Plate_fries",
    "Query_potato",
    "Query_potatoes",
    "Mutation_tip",
    "Potato_wash",
    "Nope_nothing",
    "",
]
PARAMS = [
    "Potato",
    "Oven",
    "Sink",
    "Fries",
    "Plate",
    "sink",
    "item",
    "shape",
    "plate",
    "settings",
    "variety",
    "tools",
    "fries",
    "ref",
    "offset",
    "minutes",
    "x",
]

calls = st.builds(
    lambda name, arguments, raw: ToolCall(name=name, arguments=raw if raw is not None else arguments),
    st.sampled_from(NAMES) | st.text(max_size=20),
    st.dictionaries(st.sampled_from(PARAMS), json_values, max_size=4),
    st.none() | st.text(max_size=30),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.lists(st.lists(calls, min_size=1, max_size=3), min_size=1, max_size=4))
def test_any_calls_give_results_and_failed_ones_change_nothing(turns):
    async def run():
        session = await kitchen_session()
        session.select(["Potato_rinse", "Potato_peel", "Oven_bake", "Sink_rinse", "Fries_plate", "Oven_manual"])
        for turn in turns:
            for call in turn:
                before = state(session)
                result = await session.execute(call)
                assert result.name == call.name
                if result.is_error:
                    assert isinstance(result.value["error"], str) and result.value["error"]
                    assert state(session) == before
            results = await session.execute_tools(turn)
            assert len(results) == len(turn)

    asyncio.run(run())
