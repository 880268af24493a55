"""The kitchen session every core test starts from: the seed's four objects and its one output."""

from __future__ import annotations

from typing import Any

from dagtools import Session, ToolCall, open_session

SEED_INPUTS = {
    "oven": {"field": "oven", "description": "An oven you can use for cooking."},
    "potato": {"field": "potato", "description": "The raw potato to turn into french fries."},
    "sink": {"field": "sink", "description": "A sink for cleaning food."},
    "plate": {"field": "plate", "description": "A plate for serving food."},
}
SEED_OUTPUTS = {"fries": {"type": "Plate", "description": "The baked french fries, on a plate."}}


async def kitchen_session(**options: Any) -> Session:
    from examples.kitchen.api import schema

    options.setdefault("inputs", SEED_INPUTS)
    options.setdefault("outputs", SEED_OUTPUTS)
    return await open_session(schema, **options)


async def call(session: Session, name: str, **arguments: Any):
    return await session.call_tool(ToolCall(name=name, arguments=arguments))


def state(session: Session) -> tuple:
    """Everything a failed call must leave as it was."""
    return (
        [(e.id, e.handle, e.expression) for e in session.registry],
        [e.id for e in session.registry.recent()],
        list(session.active_tools),
        dict(session.saved),
        session.done,
    )
