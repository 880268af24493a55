"""The session as a pydantic-ai toolset.

pydantic-ai asks each toolset for its tools at every step, so the tools offered are always the ones
the session lists now: `selectTools` and `save` first, then what `selectTools` activated. Arguments
reach the session as the model wrote them (the session checks them, not pydantic-ai), each call is
recorded in the session's context, and a mistake comes back to the model as a failed tool result
that names the next step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._tools import Tool
from .._shared import SerialCalls, require

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import RunContext  # noqa: E402
from pydantic_ai.exceptions import CallDeferred, ToolFailed  # noqa: E402
from pydantic_ai.tools import ToolDefinition  # noqa: E402
from pydantic_ai.toolsets import AbstractToolset  # noqa: E402
from pydantic_ai.toolsets.abstract import ToolsetTool  # noqa: E402
from pydantic_core import SchemaValidator, core_schema  # noqa: E402

if TYPE_CHECKING:
    from ...session._session import Session

__all__ = ["DagtoolsToolset"]

#: The session checks arguments against the schema itself, with messages that name the next step.
_ANY_ARGUMENTS = SchemaValidator(core_schema.any_schema())


class DagtoolsToolset(AbstractToolset[Any]):
    """The tools a session offers now, run by the session.

    `instructions` adds dagtools' rules (immutable `Type#N` objects, `selectTools`, `save`) and the
    session's inputs and outputs to the agent's instructions; pass False to write your own.
    """

    def __init__(self, session: Session, *, id: str | None = "dagtools", instructions: bool = True) -> None:
        self.session = session
        self._id = id
        self._instructions = instructions
        self._calls = SerialCalls(session)

    @property
    def id(self) -> str | None:
        return self._id

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        if not self._instructions:
            return None
        from ...agent._agent import system_prompt

        return system_prompt(self.session)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {tool.name: self._toolset_tool(tool) for tool in self.session.tools()}

    def _toolset_tool(self, tool: Tool) -> ToolsetTool[Any]:
        # sequential: the calls of one turn take effect in the order the model made them.
        definition = ToolDefinition(name=tool.name, description=tool.description, parameters_json_schema=tool.parameters, sequential=True)
        return ToolsetTool(toolset=self, tool_def=definition, max_retries=0, args_validator=_ANY_ARGUMENTS)

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        result = await self._calls.call(name, tool_args, ctx.tool_call_id or "")
        if result.pending:  # a tool the client runs: its result comes from outside the run
            raise CallDeferred()
        if result.is_error:
            raise ToolFailed(result.content)
        return result.value
