"""The catalogue's tools as a toolset: every schema field is known, the active ones are listed, and a
call runs as a field call against the session's registry and executor."""

from __future__ import annotations

from typing import Any

from .._errors import ToolCallError
from .._tools import Tool
from ..calls._field import FieldCalls, PreparedCall
from ..catalogue._catalogue import Catalogue
from ..executors._base import Executor
from ..registry._long_values import LongValues
from ..registry._registry import Registry
from ._active import ActiveToolset
from ._toolsets import Toolset

__all__ = ["FieldToolset"]


class FieldToolset(Toolset):
    """Schema fields as tools: listed once selected, each call bound, sent and read into `Type#N` IDs."""

    def __init__(self, catalogue: Catalogue, registry: Registry, executor: Executor, long_values: LongValues, *, cap: int) -> None:
        self.catalogue = catalogue
        self.active = ActiveToolset(catalogue, cap)
        self.calls = FieldCalls(catalogue, registry, executor, long_values)

    def list_tools(self) -> list[Tool]:
        return self.catalogue.tools(self.active)

    def get(self, name: str) -> Tool | None:
        return self.catalogue.tool(name) if name in self.catalogue else None

    def batchable(self, tool: Tool) -> bool:
        """Whether a call of `tool` may share a request with other reads of the same turn."""
        return tool.read_only and tool.name in self.active

    def prepare(self, tool: Tool, arguments: dict[str, Any]) -> PreparedCall:
        """Every check before anything is sent; a call that fails here changes nothing."""
        if tool.name not in self.active:
            raise ToolCallError(
                f'{tool.name} is not selected yet. Call selectTools(tools: ["{tool.name}"]) first; it is available from then on.'
            )
        prepared = self.calls.prepare(tool, arguments)
        self.active.touch(tool.name)
        return prepared

    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        return await self.calls.run(self.prepare(tool, arguments))

    def unknown(self, name: str) -> str | None:
        """A name that is no tool but names a field: a mutation not allowed, or plumbing read for the model."""
        return self.catalogue.unavailable(name)

    def suggest(self, name: str) -> list[str]:
        return self.catalogue.suggest(name)
