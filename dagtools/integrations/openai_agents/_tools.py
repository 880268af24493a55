"""The session's tools as an OpenAI Agents SDK tool list.

The SDK reads an agent's `tools` at every turn. `DagtoolsTools` is that list, kept equal to what the
session offers now: it is brought up to date whenever it is read and after every call it runs, so
the tools `selectTools` activates are offered from the next turn on. The session checks arguments
(the schemas are not strict, since object parameters are optional), records each call in its
context, and a mistake comes back as the text the model reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..._tools import Tool
from .._shared import SerialCalls, require

require("agents", "openai-agents")

from agents import FunctionTool, RunContextWrapper  # noqa: E402
from agents.tool_context import ToolContext  # noqa: E402

if TYPE_CHECKING:
    from ...session._session import Session

__all__ = ["DagtoolsTools"]


class DagtoolsTools(list[FunctionTool]):
    """An agent's tool list that follows the session. Give one to one agent; add your own tools to
    the session (`session.add_tool`) rather than to this list, which is rebuilt from the session."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self._calls = SerialCalls(session)
        self._made: dict[str, tuple[Tool, FunctionTool]] = {}
        self.refresh()

    def refresh(self) -> None:
        """Make the list what the session offers now (the same FunctionTool for an unchanged tool)."""
        self[:] = [self._function_tool(tool) for tool in self.session.tools()]

    def __iter__(self) -> Iterator[FunctionTool]:
        self.refresh()
        return super().__iter__()

    def instructions(self, context: RunContextWrapper[Any] | None = None, agent: Any = None) -> str:
        """dagtools' rules and the session's inputs and outputs: `Agent(instructions=tools.instructions)`."""
        from ...agent._agent import system_prompt

        return system_prompt(self.session)

    def _function_tool(self, tool: Tool) -> FunctionTool:
        made = self._made.get(tool.name)
        if made is not None and made[0] is tool:
            return made[1]

        async def invoke(context: ToolContext[Any], arguments: str) -> str:
            result = await self._calls.call(tool.name, arguments or "{}", context.tool_call_id)
            self.refresh()
            if result.pending:
                return f"{tool.name} is run by the application; its result will be reported to you when it is ready."
            return result.content

        function_tool = FunctionTool(
            name=tool.name,
            description=tool.description,
            params_json_schema=tool.parameters,
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )
        self._made[tool.name] = (tool, function_tool)
        return function_tool
