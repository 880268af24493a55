"""What a session costs in each store, in process on the kitchen. Prints `figure: value` lines.

    python bench/store.py

Figures, per store (none, memory, sqlite, redis):
- `store_bytes_{seed,fries}_session`: what the store keeps for the kitchen's seed session, and for it
  after the seed transcript's calls (peel, rinse, slice, bake, plate, save);
- `{store}_calls_per_second`: sequential calls in one session (each one loaded, run, saved);
- `{store}_calls_per_second_20_sessions`: 20 sessions calling at once;
- `{store}_resume_10000_objects_seconds`: `open_session(store=..., key=...)` on a session holding
  10,000 objects, and `{store}_call_at_10000_objects_ms`: one call in it (its save included).
- `{store}_bytes_per_call_{10,10000}_objects`: what one call writes (the mean over 40 calls that mint an
  object and use an old one again) in a session of 10 and of 10,000 objects, and
  `{store}_bytes_per_call_ratio`, the second over the first (target <= 1.5: a call saves what it changed);
  `{store}_resume_{10,10000}_objects_after_calls_seconds`: reopening such a session after those calls.
Redis is a real redis-server started on a free loopback port; its figures are left out (with a note)
where redis-server or redis-py is missing.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from bench._figures import exit_status  # noqa: E402
from bench._figures import figure as checked  # noqa: E402
from dagtools import Handle, Step, ToolCall  # noqa: E402
from dagtools.session._persistence import encode_state  # noqa: E402
from tests.kitchen import kitchen_session  # noqa: E402
from tests.redis_cluster import start_redis_server  # noqa: E402

FRIES = [
    ("selectTools", {"tools": ["Potato_*", "Oven_bake", "Fries_plate"]}),
    ("Potato_peel", {}),
    ("Potato_rinse", {"sink": "Sink#1"}),
    ("Potato_slice", {"shape": "STICKS"}),
    ("Oven_bake", {"item": "Potato#4", "settings": {"temperature": 200, "minutes": 20}}),
    ("Fries_plate", {"plate": "Plate#1"}),
    ("save", {"fries": "Plate#2"}),
]


def figure(name: str, value: Any) -> None:
    print(f"{name}: {value:.3f}" if isinstance(value, float) else f"{name}: {value}", flush=True)


async def size_figures() -> None:
    async with await kitchen_session() as session:
        figure("store_bytes_seed_session", len(encode_state(session.state())))
        for name, arguments in FRIES:
            result = await session.call_tool(ToolCall(name=name, arguments=arguments))
            if result.is_error:
                print(f"# fries transcript: {name} said {result.content}", flush=True)
        figure("store_bytes_fries_session", len(encode_state(session.state())))
        figure("store_bytes_per_object", round(len(encode_state(session.state())) / len(session.registry)))


async def calls_per_second(label: str, store: str | None, calls: int = 300, sessions: int = 20) -> None:
    extra = {"store": store} if store else {}
    async with await kitchen_session(**extra) as session:
        await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}))
        peel = ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"})
        start = time.perf_counter()
        for _ in range(calls):
            await session.call_tool(peel)
        figure(f"{label}_calls_per_second", calls / (time.perf_counter() - start))

    async def one(per: int) -> None:
        async with await kitchen_session(**extra) as session:
            await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}))
            for _ in range(per):
                await session.call_tool(peel)

    per = max(1, calls // sessions)
    start = time.perf_counter()
    await asyncio.gather(*(one(per) for _ in range(sessions)))
    figure(f"{label}_calls_per_second_{sessions}_sessions", sessions * per / (time.perf_counter() - start))


async def resume_figures(label: str, store: str, objects: int = 10_000) -> None:
    key = f"big-{time.time_ns()}"
    async with await kitchen_session(store=store, key=key) as session:
        potato = session.registry.get("Potato#1")
        assert potato is not None
        for n in range(objects - len(session.registry)):  # distinct re-rooted handles, as identity gives them
            handle = Handle((Step.of("loadPotatoFromID", {"id": f"potato-{n}"}),))
            session.registry.mint("Potato", handle, expression=f"Potato#1.slice(n: {n})", preview={"describe": "a raw potato"})
        await session.checkpoint()
        figure(f"{label}_store_bytes_10000_objects", len(encode_state(session.state())))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        async with await kitchen_session(store=store, key=key) as resumed:
            times.append(time.perf_counter() - start)
            assert len(resumed.registry) >= objects
            await resumed.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}))
            start = time.perf_counter()
            await resumed.call_tool(ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}))
            call_ms = (time.perf_counter() - start) * 1000
    figure(f"{label}_resume_{objects}_objects_seconds", median(times))
    figure(f"{label}_call_at_{objects}_objects_ms", call_ms)


async def per_call_figures(label: str, store: str, calls: int = 40) -> None:
    """Bytes one call writes, and the time to resume, at 10 and at 10,000 objects."""
    means: list[float] = []
    for objects in (10, 10_000):
        key = f"calls-{objects}-{time.time_ns()}"
        async with await kitchen_session(store=store, key=key) as session:
            for n in range(objects - len(session.registry)):
                handle = Handle((Step.of("loadPotatoFromID", {"id": f"potato-{n}"}),))
                session.registry.mint("Potato", handle, expression=f"Potato#1.slice(n: {n})", preview={"describe": "a raw potato"})
            await session.checkpoint()
            await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel", "Query_potato"]}))
            written = []
            for n in range(calls):
                await session.call_tool(ToolCall(name="Query_potato", arguments={"variety": f"Variety {n}"}))
                written.append(session.keeper.last_written if session.keeper else 0)
                await session.call_tool(ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}))
                written.append(session.keeper.last_written if session.keeper else 0)
        means.append(sum(written) / len(written))
        figure(f"{label}_bytes_per_call_{objects}_objects", round(means[-1]))
        times = []
        for _ in range(3):
            start = time.perf_counter()
            async with await kitchen_session(store=store, key=key) as resumed:
                times.append(time.perf_counter() - start)
                assert len(resumed.registry) >= objects
        figure(f"{label}_resume_{objects}_objects_after_calls_seconds", median(times))
    checked(f"{label}_bytes_per_call_ratio", means[1] / means[0], "<= 1.5")


def start_redis() -> tuple[subprocess.Popen | None, str | None]:
    try:
        import redis  # noqa: F401
    except ImportError:
        started = None
    else:
        started = start_redis_server()
    if started is None:
        print("# redis-server or redis-py is missing: no Redis figures", flush=True)
        return None, None
    url, server = started
    return server, url


async def main() -> None:
    await size_figures()
    server, redis_url = start_redis()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            stores: list[tuple[str, str | None]] = [("none", None), ("memory", "memory:bench"), ("sqlite", f"sqlite:///{tmp}/s.db")]
            if redis_url:
                stores.append(("redis", redis_url))
            for label, url in stores:
                await calls_per_second(label, url)
            for label, url in stores[1:]:
                assert url is not None
                await resume_figures(label, url)
                await per_call_figures(label, url)
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(exit_status())
