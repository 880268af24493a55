"""The session's tools in LangChain's agent (a LangGraph graph), refreshed at every model call.

`create_agent` registers its tools once, but a session's tools grow. `DagtoolsMiddleware` adds the
tools the session offers now to each model request (`wrap_model_call`), and runs the calls of the
tools it added, or of any name no registered tool has, through the session (`wrap_tool_call`), so
the session answers a name it does not know with the tools that are close. Each call is recorded in
the session's context; a mistake comes back as a ToolMessage with status "error".

The session is async: run the agent with `ainvoke` or `astream`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..._errors import ConfigError
from ..._tools import Tool, ToolResult
from .._shared import SerialCalls, require

require("langchain.agents", "langchain")

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse  # noqa: E402
from langchain_core.messages import SystemMessage, ToolMessage  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langgraph.prebuilt.tool_node import ToolCallRequest  # noqa: E402
from langgraph.types import Command  # noqa: E402

if TYPE_CHECKING:
    from ...session._session import Session

__all__ = ["DagtoolsMiddleware", "langchain_tools"]


def langchain_tools(session: Session) -> list[StructuredTool]:
    """The tools the session offers now, as LangChain tools that run through the session. Call it
    again after `selectTools` to bind the grown set."""
    calls = SerialCalls(session)
    return [_structured_tool(tool, calls) for tool in session.tools()]


def _structured_tool(tool: Tool, calls: SerialCalls) -> StructuredTool:
    async def run(**arguments: Any) -> str:
        result = await calls.call(tool.name, arguments)
        if result.is_error:
            raise ToolException(result.content)
        return _content(result)

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.parameters,
        coroutine=run,
        handle_tool_error=True,
    )


class DagtoolsMiddleware(AgentMiddleware):
    """Offers the session's current tools at every model call and runs their calls.

    `instructions` appends dagtools' rules and the session's inputs and outputs to the system prompt.
    """

    def __init__(self, session: Session, *, instructions: bool = True) -> None:
        super().__init__()
        self.session = session
        self._instructions = instructions
        self._calls = SerialCalls(session)
        self._made: dict[str, tuple[Tool, StructuredTool]] = {}

    @property
    def name(self) -> str:
        return "DagtoolsMiddleware"

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        return handler(self._request(request))

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelResponse:
        return await handler(self._request(request))

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command]
    ) -> ToolMessage | Command:
        if request.tool is not None:
            return handler(request)
        raise ConfigError("dagtools sessions run their tools asynchronously: run the agent with ainvoke() or astream().")

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]]
    ) -> ToolMessage | Command:
        if request.tool is not None:  # a tool the agent was created with: not the session's
            return await handler(request)
        call = request.tool_call
        result = await self._calls.call(call["name"], call.get("args") or {}, call.get("id") or "")
        return ToolMessage(
            content=_content(result),
            tool_call_id=call.get("id") or result.call_id,
            name=call["name"],
            status="error" if result.is_error else "success",
        )

    def _request(self, request: ModelRequest) -> ModelRequest:
        tools = [*request.tools, *(self._tool(tool) for tool in self.session.tools())]
        if not self._instructions:
            return request.override(tools=tools)
        from ...agent._agent import system_prompt

        text = system_prompt(self.session)
        if request.system_message is not None:
            text = f"{request.system_message.text}\n\n{text}"
        return request.override(tools=tools, system_message=SystemMessage(content=text))

    def _tool(self, tool: Tool) -> StructuredTool:
        made = self._made.get(tool.name)
        if made is None or made[0] is not tool:
            made = (tool, _structured_tool(tool, self._calls))
            self._made[tool.name] = made
        return made[1]


def _content(result: ToolResult) -> str:
    if result.pending:
        return f"{result.name} is run by the application; its result will be reported to you when it is ready."
    return result.content
