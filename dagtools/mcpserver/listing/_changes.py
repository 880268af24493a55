"""Tool-list changes a client is told of: those its own calls make, and those other workers make.

In dynamic mode a session's tool list grows as the model selects tools. A change made by a call here is
told at once: a `tools/list_changed` notification on the handshake-era connection, or an event on the
session's listen stream (2026-07-28). With a store, calls that other workers serve change the same
session; while a listen stream is open here, `watch_store` polls the store for them (the store keeps
only versions; the session's catch-up reads what moved) and tells the stream the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..sessions import ClientState

__all__ = ["WATCH_SECONDS", "tell_tools_changed", "watch_store"]

WATCH_SECONDS = 1.0  #: how often a session with a listen stream open looks for other workers' tool-list changes


async def tell_tools_changed(ctx: Any, state: ClientState, types: Any) -> None:
    """Tell the client of the request `ctx` that its session's tool list changed (`types`: the SDK's)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if state.bus is not None:
            from mcp.server.subscriptions import ToolsListChanged

            await state.bus.publish(ToolsListChanged())
        return
    await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)


async def watch_store(state: ClientState, seconds: float = WATCH_SECONDS) -> None:
    """While a listen stream is open on this worker, calls on other workers may change the session's
    tools: every `seconds` the session (`state`) catches up with the store (one small read when nothing
    moved), and a change of its tool list is published to the stream."""
    import anyio
    from mcp.server.subscriptions import ToolsListChanged

    from ..._errors import DagtoolsError

    while True:
        await anyio.sleep(seconds)
        async with state.lock:
            before = state.session.toolset.version()
            try:
                await state.session.catch_up()
            except DagtoolsError:  # the store failed or the session went: the next call says so
                continue
            changed = state.session.toolset.version() != before
        if changed and state.bus is not None:
            await state.bus.publish(ToolsListChanged())
