"""The catalogue's tools as a toolset: every schema field is known, the active ones are listed, and a
call runs as a field call against the session's registry and executor. A turn's reads run together,
as one request (`call_batch`)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from .._errors import ToolCallError
from .._tools import Tool
from ..calls._batch import needs_earlier, run_reads
from ..calls._field import FieldCalls, PreparedCall
from ..catalogue._catalogue import Catalogue
from ..executors._base import Executor
from ._active import ActiveToolset
from ._long_values import LongValues
from ._registry import Registry
from ._toolsets import BatchingToolset, OwnedTool

__all__ = ["FieldToolset"]


class FieldToolset(BatchingToolset):
    """Schema fields as tools: listed once selected, each call bound, sent and read into `Type#N` IDs."""

    def __init__(self, catalogue: Catalogue, registry: Registry, executor: Executor, long_values: LongValues, *, cap: int) -> None:
        self.catalogue = catalogue
        self.active = ActiveToolset(catalogue, cap)
        self.calls = FieldCalls(catalogue, registry, executor, long_values)

    def list_tools(self) -> list[Tool]:
        return self.catalogue.tools(self.active)

    def get(self, name: str) -> Tool | None:
        return self.catalogue.tool(name) if name in self.catalogue else None

    def find(self, name: str) -> OwnedTool | None:
        return OwnedTool(self.catalogue.tool(name), self) if name in self.catalogue else None

    def version(self) -> Hashable:
        return self.active.version

    def batchable(self, tool: Tool) -> bool:
        """Reads of selected tools may share a request; a mutation runs alone, exactly once."""
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

    async def call_batch(self, calls: Sequence[tuple[Tool, dict[str, Any]]]) -> list[Any]:
        """The reads as one document where they can share it. A read that needs an object an earlier
        one is about to make (it names an ID not minted yet, or defaults to the most recent object of
        a type an earlier read returns) waits for the request before it, so every result is what
        running the reads one by one would have given."""
        out: list[Any] = [None] * len(calls)
        batch: list[tuple[int, PreparedCall]] = []

        async def flush() -> None:
            if batch:
                values = await run_reads(self.calls, [prepared for _, prepared in batch])
                for (index, _), value in zip(batch, values):
                    out[index] = value
                batch.clear()

        for index, (tool, arguments) in enumerate(calls):
            if batch and needs_earlier(self.catalogue, tool, arguments, [prepared for _, prepared in batch]):
                await flush()
            try:
                prepared = self.prepare(tool, arguments)
            except ToolCallError as error:
                if not batch:
                    out[index] = error
                    continue
                await flush()  # it may name an object the batch was about to make
                try:
                    prepared = self.prepare(tool, arguments)
                except ToolCallError as again:
                    out[index] = again
                    continue
            if prepared.answer is not None:
                out[index] = prepared.answer
                continue
            batch.append((index, prepared))
        await flush()
        return out

    def unknown(self, name: str) -> str | None:
        """A name that is no tool but names a field: a mutation not allowed, or plumbing read for the model."""
        return self.catalogue.unavailable(name)

    def suggest(self, name: str) -> list[str]:
        return self.catalogue.suggest(name)
