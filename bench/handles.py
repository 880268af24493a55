"""What reading one field of one object costs on a page of 25 objects without identity, over real HTTP.

    python bench/handles.py

An object without identity (a time slot: a value with no id) is reached through the list that
returned it. Reading one of the fields read when it was minted (its preview) answers from the values
kept then; reading any other field sends the one request that field needs: the list's chain, with the
object's key read beside the field so a moved object is refused, not mistaken for its neighbour.

Figures, counted at the server (requests, and bytes of request and response bodies):
- `handles_page_read_*`: listing the page once, the baseline;
- `handles_held_field_read_requests`: target 0, the value is kept;
- `handles_other_field_read_requests`: target <= 1, the one request the field needs;
- `handles_other_field_read_vs_page_read_bytes_ratio`: target <= 1. GraphQL cannot select one item
  of a list, so the read goes through the whole page; what it reads of each item must stay smaller
  than what listing the page reads (the key and the field, not every preview field again).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "bench") not in sys.path:
    sys.path.append(str(ROOT / "bench"))  # last: bench/mcp.py must not hide the MCP SDK from whoever imports this

import strawberry  # noqa: E402
from _figures import exit_status, figure, unmeasured  # noqa: E402

from dagtools import HttpExecutor, Session, ToolCall, compile_catalogue  # noqa: E402

__all__ = ["run_handles_bench"]

PAGE = 25


@strawberry.type
class Room:
    name: str
    floor: int


@strawberry.type
class Slot:
    """A bookable half hour: a value, with no id."""

    starts_at: str
    free: bool
    capacity: int

    @strawberry.field
    def room(self) -> Room:
        return Room(name=f"Room {self.capacity}", floor=self.capacity % 4)

    @strawberry.field
    def price(self, currency: str = "EUR") -> float:
        return 20.0 + self.capacity


@strawberry.type
class Query:
    @strawberry.field
    def slots(self) -> list[Slot]:
        return [Slot(starts_at=f"2030-01-01T{8 + i // 2:02d}:{30 * (i % 2):02d}", free=i % 3 != 0, capacity=i) for i in range(PAGE)]


class Counted:
    """ASGI middleware counting requests and the bytes of their bodies and of the answers."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests = 0
        self.bytes = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        self.requests += 1

        async def counted_receive() -> dict[str, Any]:
            message = await receive()
            self.bytes += len(message.get("body", b""))
            return dict(message)

        async def counted_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                self.bytes += len(message.get("body", b""))
            await send(message)

        await self.app(scope, counted_receive, counted_send)

    def mark(self) -> tuple[int, int]:
        return self.requests, self.bytes


async def _measure(url: str, counted: Counted) -> dict[str, int]:
    schema = strawberry.Schema(query=Query)
    catalogue = compile_catalogue(schema._schema)
    executor = HttpExecutor(url)
    session = Session(catalogue, executor)
    session.select(["Query_slots", "Slot_startsAt", "Slot_price", "Slot_room"])
    figures: dict[str, int] = {}

    async def cost(name: str, tool: str, **arguments: Any) -> None:
        requests, sent = counted.mark()
        result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
        assert not result.is_error, result.value
        figures[f"{name}_requests"] = counted.requests - requests
        figures[f"{name}_bytes"] = counted.bytes - sent

    try:
        await cost("page_read", "Query_slots")
        await cost("held_field_read", "Slot_startsAt", Slot="Slot#7")
        await cost("other_field_read", "Slot_price", Slot="Slot#7", currency="USD")
        await cost("object_field_read", "Slot_room", Slot="Slot#7")
    finally:
        await executor.aclose()
    return figures


def run_handles_bench() -> None:
    try:
        from strawberry.asgi import GraphQL

        from tests.servers import serve_asgi
    except ImportError as error:
        unmeasured("handles_other_field_read_requests", f"no loopback server: {error}")
        return
    counted = Counted(GraphQL(strawberry.Schema(query=Query)))
    with serve_asgi(counted) as base:
        got = asyncio.run(_measure(f"{base}/graphql", counted))
    figure("handles_page_objects", PAGE)
    figure("handles_page_read_requests", got["page_read_requests"])
    figure("handles_page_read_bytes", got["page_read_bytes"])
    figure("handles_held_field_read_requests", got["held_field_read_requests"], "<= 0")
    figure("handles_held_field_read_bytes", got["held_field_read_bytes"], "<= 0")
    figure("handles_other_field_read_requests", got["other_field_read_requests"], "<= 1")
    figure("handles_other_field_read_bytes", got["other_field_read_bytes"])
    figure("handles_other_field_read_vs_page_read_bytes_ratio", got["other_field_read_bytes"] / got["page_read_bytes"], "<= 1")
    figure("handles_object_field_read_requests", got["object_field_read_requests"], "<= 1")
    figure("handles_object_field_read_bytes", got["object_field_read_bytes"])


if __name__ == "__main__":
    run_handles_bench()
    sys.exit(exit_status())
