"""The fries task as every framework test runs it: seed 000's calls, one per model turn, and what the
tools offered at each turn must show (they grow after each selectTools)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

FRIES = Path(__file__).resolve().parents[1] / "examples" / "kitchen" / "fries.yaml"
#: (call id, tool, arguments, what the model reads back or None where it is not JSON) per turn.
CALLS: list[tuple[str, str, dict[str, Any], Any]] = [
    (c["id"], c["tool"], c["arguments"], None if c.get("expect", "ok") == "ok" else c["expect"])
    for c in yaml.safe_load(FRIES.read_text())["calls"]
]
PROMPT = "Bake me some french fries."


def check_offered(offered: list[list[str]]) -> None:
    """`offered[i]`: the tool names the model was offered at turn i (turn 8 is its closing message)."""
    assert len(offered) == len(CALLS) + 1, offered
    assert "selectTools" in offered[0] and "save" in offered[0]
    assert "Potato_rinse" not in offered[0]
    assert {"Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake"} <= set(offered[1])
    assert "Fries_plate" not in offered[5] and "Fries_plate" in offered[6]
    assert all(len(a) <= len(b) for a, b in zip(offered, offered[1:]))


def check_results(texts: list[str]) -> None:
    """What the model read back for each call, in order."""
    assert len(texts) == len(CALLS), texts
    for (call_id, tool, _, expect), text in zip(CALLS, texts):
        if expect is not None:
            assert json.loads(text) == expect, (call_id, text)
    assert texts[-1].startswith("Saved fries = Plate#2")


#: One model turn of three calls, each on the object the one before it made: the later two name no
#: Potato, so they take the most recent one. Run one by one, in order, they give Potato#2, #3, #4.
CHAIN = [
    ("rinse", "Potato_rinse", {"Potato": "Potato#1", "sink": "Sink#1"}),
    ("peel", "Potato_peel", {}),
    ("slice", "Potato_slice", {"shape": "STICKS"}),
]
CHAIN_TOOLS = ["Potato_rinse", "Potato_peel", "Potato_slice"]


async def chain_session(transport):
    """A kitchen session whose executor is in process or over HTTP (where calls run concurrently
    would interleave), with the chain's tools selected."""
    from examples.kitchen.api import schema
    from tests.kitchen import kitchen_session

    session = await kitchen_session(executor=transport.executor(schema))
    session.select(CHAIN_TOOLS)
    return session


def check_chain(session, texts: list[str]) -> None:
    assert [json.loads(t) for t in texts] == [{"result": "Potato#2"}, {"result": "Potato#3"}, {"result": "Potato#4"}]
    assert session.object("Potato#3").expression == "Potato#2.peel"
