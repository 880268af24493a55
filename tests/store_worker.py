"""A process that works on one stored kitchen session, for the store tests that kill or race processes.

python -m tests.store_worker STORE_URL KEY hold         # makes Potato#2, says "ready", waits to be killed
python -m tests.store_worker STORE_URL KEY race NAME N  # N calls with IDs NAME-i; prints what each returned, as JSON
python -m tests.store_worker STORE_URL KEY lease        # takes KEY's lease, says "ready", waits to be killed holding it
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dagtools import ToolCall  # noqa: E402
from tests.kitchen import kitchen_session  # noqa: E402

#: Calls that mint different objects, so that two racing workers mint under the same counters.
RACE_CALLS = [
    ("Potato_peel", {"Potato": "Potato#1"}),
    ("Potato_slice", {"Potato": "Potato#1", "shape": "STICKS"}),
    ("Potato_slice", {"Potato": "Potato#1", "shape": "SLICES"}),
    ("Potato_dice", {"Potato": "Potato#1"}),
    ("Potato_rinse", {"Potato": "Potato#1", "sink": "Sink#1"}),
    ("Potato_wash", {"Potato": "Potato#1", "sink": "Sink#1"}),
]


async def hold(url: str, key: str) -> None:
    session = await kitchen_session(store=url, key=key)
    await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_*"]}))
    result = await session.call_tool(ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}))
    print("ready", result.content, flush=True)
    await asyncio.sleep(3600)


async def race(url: str, key: str, name: str, count: int) -> None:
    async with await kitchen_session(store=url, key=key) as session:
        await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_*"]}, id=f"{name}-select"))
        print("ready", flush=True)
        sys.stdin.readline()  # both workers start their calls together
        seen = {}
        for i in range(count):
            tool, arguments = RACE_CALLS[i % len(RACE_CALLS)]
            result = await session.call_tool(ToolCall(name=tool, arguments=arguments, id=f"{name}-{i}"))
            seen[result.call_id] = result.content
    print(json.dumps(seen), flush=True)


async def lease(url: str, key: str) -> None:
    from dagtools.session._persistence import hold
    from dagtools.stores._open import open_store

    store = open_store(url)
    async with hold(store, key):
        print("ready", flush=True)
        await asyncio.sleep(3600)


if __name__ == "__main__":
    url, key, mode = sys.argv[1:4]
    if mode == "hold":
        asyncio.run(hold(url, key))
    elif mode == "lease":
        asyncio.run(lease(url, key))
    else:
        asyncio.run(race(url, key, sys.argv[4], int(sys.argv[5])))
