"""What every integration does the same way: find its framework, and run calls one at a time."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._errors import install_command
from .._tools import ToolCall, ToolResult

if TYPE_CHECKING:
    from ..session._session import Session

__all__ = ["SerialCalls", "require"]


def require(module: str, extra: str) -> ModuleType:
    """Import a framework, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"This integration needs {module}: {install_command(extra)} ({error}).") from error


class SerialCalls:
    """The session's calls, one turn at a time.

    Frameworks run the calls of one model turn concurrently, but a turn's calls take effect in the
    order the model made them (a `selectTools` before the call that needs it; a tool whose object
    parameter defaults to the object an earlier call made). The calls reach this lock in the order
    the framework started them, so they run as the model wrote them, each recorded in the session's
    context.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self._lock: asyncio.Lock | None = None

    async def call(self, name: str, arguments: dict[str, Any] | str, call_id: str = "") -> ToolResult:
        return (await self.turn([ToolCall(name=name, arguments=arguments, id=call_id)]))[0]

    async def turn(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """A whole turn at once, where the framework hands one over: reads share one request."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            return await self.session.call_tools(calls)
