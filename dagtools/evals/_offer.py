"""A session offered to a model through another toolset: the fixed tools or the query baseline.

The agent loop runs on anything that looks like a session. This view offers `toolset`'s tools in
place of the session's own and keeps the conversation in a context of its own; the session still
runs and records the API calls those tools make (the fixed tools' inner calls, each query), so the
attempt's trace draws what happened on the API whichever tools the model saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._errors import ToolCallError
from .._tools import Tool, ToolCall, ToolResult
from ..catalogue._render import render_tools
from ..session._context import Context, Message
from ..session._metatools import SAVE
from ..session._session import Session
from ..session._toolsets import CombinedToolset, FunctionToolset, Toolset
from ..session._turn import run_turn

__all__ = ["OfferedSession", "save_toolset"]


def save_toolset(session: Session) -> FunctionToolset:
    """The session's save tool (when outputs are declared), run through the session."""
    toolset = FunctionToolset()
    tool = session.meta.get(SAVE)  # None when the task declares no outputs
    if tool is not None:
        toolset.add(tool.name, tool, _through(session, tool))
    return toolset


def _through(session: Session, tool: Tool) -> Any:
    async def run(arguments: dict[str, Any]) -> Any:
        result = await session.call_tool(ToolCall(name=tool.name, arguments=arguments))
        if result.is_error:
            raise ToolCallError(result.value["error"])
        return result.value

    return run


class OfferedSession:
    """What the agent loop needs of a session, with `toolset`'s tools offered. With `record`, each
    call and its result are also written to the session's own context (for tools that do not run
    through the session, such as the query tool)."""

    def __init__(self, session: Session, toolset: Toolset, *, system: str | None = None, record: bool = False) -> None:
        self.session = session
        self.toolset = CombinedToolset([toolset])
        self.context = Context()
        self.record = record
        if system:
            self.context.messages.append(Message(role="system", content=system))

    # What the agent reads of a session.
    @property
    def registry(self) -> Any:
        return self.session.registry

    @property
    def values(self) -> Any:
        return self.session.values

    @property
    def outputs(self) -> Any:
        return self.session.outputs

    @property
    def saved(self) -> dict[str, Any]:
        return self.session.saved

    @property
    def done(self) -> bool:
        return self.session.done

    @property
    def missing_outputs(self) -> list[str]:
        return self.session.missing_outputs

    def render_tools(self, format: str = "openai") -> list[dict[str, Any]]:
        return render_tools(self.toolset.list_tools(), format)

    async def call_tools(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        results = await run_turn(self.toolset, list(calls))
        for result in results:
            self.context.add_result(result)
        if self.record:
            self.session.context.add_assistant(tool_calls=tuple(calls))
            for result in results:
                self.session.context.add_result(result)
        return results

    def tool_call_result(self, call_id: str, result: ToolResult) -> ToolResult:
        self.context.add_result(result)
        return result
