"""The session's tools for Mellea, and Mellea's tool calls run by the session (seed 001).

Seed 001 settles who owns a tool call: the session that keeps the context runs the call and records
it (`call_tool`), or records a result the client produced (`tool_call_result`). Here the dagtools
session is that owner: `call_tools(session, result)` runs every call of a Mellea result as one turn
(reads share one request, each call recorded in the session's context) and returns Mellea
`ToolMessage`s for the caller's own Mellea context. `mellea_tools(session)` is what the session
offers now; ask again after each turn, so tools selected with `selectTools` are offered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._errors import ConfigError
from ..._tools import Tool, ToolCall, ToolResult
from .._shared import require

require("mellea", "mellea")

from mellea.backends.tools import MelleaTool  # noqa: E402
from mellea.core import ModelOutputThunk, ModelToolCall  # noqa: E402
from mellea.stdlib.components import ToolMessage  # noqa: E402

if TYPE_CHECKING:
    from ...session._session import Session

__all__ = ["call_tools", "mellea_tools", "tool_call_result"]


def mellea_tools(session: Session) -> list[MelleaTool[..., Any]]:
    """The tools the session offers now, for `model_options={ModelOption.TOOLS: ...}`."""
    return [_mellea_tool(tool) for tool in session.tools()]


def _mellea_tool(tool: Tool) -> MelleaTool[..., Any]:
    def run(**arguments: Any) -> Any:
        raise ConfigError(
            f"{tool.name} runs through its dagtools session, which records the call: "
            "use `await dagtools.integrations.mellea.call_tools(session, result)` instead of Mellea's call_tools."
        )

    spec = {"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters}}
    return MelleaTool(tool.name, run, spec)


async def call_tools(session: Session, result: ModelOutputThunk[Any]) -> list[ToolMessage]:
    """Run the tool calls of a Mellea result through the session as one model turn; the messages to
    add to the Mellea context, in the order of the calls. A tool the client runs gets no message
    until its result is reported with `tool_call_result`."""
    model_calls: list[ModelToolCall] = list(result.tool_calls or [])
    calls = [ToolCall(name=c.name, arguments=dict(c.args), id=c.tool_call_id or "") for c in model_calls]
    results = await session.call_tools(calls)
    for model_call, done in zip(model_calls, results):
        model_call.tool_call_id = model_call.tool_call_id or done.call_id  # the id to report a client result under
    return [_message(model_call, done) for model_call, done in zip(model_calls, results) if not done.pending]


def tool_call_result(session: Session, call: ModelToolCall, value: Any) -> ToolMessage:
    """Report the result of a tool the client ran (seed 001's `tool_call_result`): the session
    records it, and the message returned goes into the Mellea context."""
    return _message(call, session.tool_call_result(call.tool_call_id or "", value))


def _message(call: ModelToolCall, result: ToolResult) -> ToolMessage:
    return ToolMessage(role="tool", content=result.content, tool_output=result.value, name=call.name, args=call.args, tool=call)
