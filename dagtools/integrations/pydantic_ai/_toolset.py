"""The session as a pydantic-ai toolset.

pydantic-ai asks each toolset for its tools at every step, so the tools offered are always the ones
the session lists now: `selectTools` and `save` first, then what `selectTools` activated. Arguments
reach the session as the model wrote them (the session checks them, not pydantic-ai), each call is
recorded in the session's context, and a mistake comes back to the model as a failed tool result
that names the next step.

With `deferred=True` the toolset lists the same tools all run long (see dagtools.session._deferred_tools):
the meta-tools, then every catalogue tool with pydantic-ai's `defer_loading`, and a selectTools call
reveals the tools it selected through `ToolReturn(tools=...)`. pydantic-ai then keeps the request's
tool list byte-identical where the provider can reveal in place (Anthropic's `tool_reference`, OpenAI
Responses' `tool_search_output`), and adds the revealed tools where it cannot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._tools import Tool, ToolCall
from .._shared import SerialCalls, require

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import RunContext  # noqa: E402
from pydantic_ai.exceptions import CallDeferred, ToolFailed  # noqa: E402
from pydantic_ai.messages import ToolReturn  # noqa: E402
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
    `deferred` lists every tool from the start, hidden until selectTools reveals it, so the tool
    list (and the provider's cached prompt prefix) stays the same all run long.
    """

    def __init__(self, session: Session, *, id: str | None = "dagtools", instructions: bool = True, deferred: bool = False) -> None:
        self.session = session
        self._id = id
        self._instructions = instructions
        self._calls = SerialCalls(session)
        self.deferred = deferred
        self._listed: dict[str, ToolsetTool[Any]] = {}

    @property
    def id(self) -> str | None:
        return self._id

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        if not self._instructions:
            return None
        from ...agent._agent import system_prompt

        return system_prompt(self.session)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        if not self.deferred:
            return {tool.name: self._toolset_tool(tool) for tool in self.session.tools()}
        listed = self.session.deferred_tools()
        if not self._listed:  # the same definitions every step: built once
            self._listed = {tool.name: self._toolset_tool(tool) for tool in [listed.search, *listed.shown]}
            self._listed.update((tool.name, self._toolset_tool(tool, deferred=True)) for tool in listed.deferred)
        late = [tool for tool in listed.late() if tool.name not in self._listed]
        self._listed.update((tool.name, self._toolset_tool(tool)) for tool in late)
        return dict(self._listed)

    def _toolset_tool(self, tool: Tool, *, deferred: bool = False) -> ToolsetTool[Any]:
        # sequential: the calls of one turn take effect in the order the model made them.
        definition = ToolDefinition(
            name=tool.name, description=tool.description, parameters_json_schema=tool.parameters, sequential=True, defer_loading=deferred
        )
        return ToolsetTool(toolset=self, tool_def=definition, max_retries=0, args_validator=_ANY_ARGUMENTS)

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        call = ToolCall(name=name, arguments=tool_args, id=ctx.tool_call_id or "")
        result = (await self._calls.turn([call]))[0]
        if result.pending:  # a tool the client runs: its result comes from outside the run
            raise CallDeferred()
        if result.is_error:
            raise ToolFailed(result.content)
        if self.deferred and (revealed := self.session.deferred_tools().reveals(call, result)):
            return ToolReturn(return_value=result.value, tools=revealed)
        return result.value
