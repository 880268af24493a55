"""The catalogue's tools as a toolset: every schema field is known, the active ones are listed, and a
call runs as field calls against the session's registry and executor; a turn's reads run together,
as one request (`call_batch`).

Which tools are active is the `ActiveSet`, grown by `selectTools`. It is capped (providers take at
most 128 tools, and fewer read better); when a selection would pass the cap, the least recently used
tools make room and the model is told which.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from itertools import count
from typing import Any

from .._errors import ConfigError, ToolCallError
from .._tools import Tool
from ..calls._batch import needs_earlier, run_reads
from ..calls._each import EACH_REQUEST, each_key, merge_each, only_by
from ..calls._field import FieldCalls, PreparedCall
from ..catalogue._catalogue import Catalogue
from ..catalogue._search import suggest_tools
from ..executors._base import Executor
from ..registry._long_values import LongValues
from ..registry._registry import Registry
from ._toolsets import BatchingToolset

__all__ = ["MAX_NAMES", "ActiveSet", "FieldToolset"]

#: Distinct names one selection may give (after repeats are dropped): a bound on the work and the answer.
MAX_NAMES = 256
#: Unknown names spelled out in one answer, each with its suggestions; the rest are counted.
_UNKNOWN_SHOWN = 10
#: Versions for every active set: a version names one set of names, even across a copy put back.
_VERSIONS = count(1)


class ActiveSet:
    """The names of the active tools, in the order they were selected, with when each was last used.

    Not a toolset: it lists and runs nothing. `FieldToolset` lists and runs the tools it names."""

    def __init__(self, catalogue: Catalogue, cap: int = 64) -> None:
        if cap < 1:
            raise ConfigError("max_active_tools must be at least 1.")
        self.catalogue = catalogue
        self.cap = cap
        self._last_used: dict[str, int] = {}
        self._clock = 0
        #: Changes whenever the names (or their order) change: what an MCP client is told about.
        self.version = 0

    def __contains__(self, name: object) -> bool:
        return name in self._last_used

    def __iter__(self) -> Iterator[str]:
        return iter(self._last_used)

    def __len__(self) -> int:
        return len(self._last_used)

    def __copy__(self) -> ActiveSet:
        """An independent copy: what to put back when a call that selected a tool fails."""
        copied = ActiveSet(self.catalogue, self.cap)
        copied._last_used = dict(self._last_used)
        copied._clock = self._clock
        copied.version = self.version
        return copied

    def touch(self, name: str) -> None:
        """Note a use, so eviction spares the tools the model works with."""
        self._clock += 1
        self._last_used[name] = self._clock

    def uses(self) -> dict[str, int]:
        """Each active tool with when it was last used, in selection order: what a store keeps."""
        return dict(self._last_used)

    def restore(self, uses: dict[str, int]) -> None:
        """Hold exactly the tools of `uses` (those the catalogue still has), as `uses()` gave them."""
        self._last_used = {name: int(used) for name, used in uses.items() if name in self.catalogue}
        self._clock = max(self._last_used.values(), default=0)
        self.version = next(_VERSIONS)

    def select(self, names: Iterable[str], *, ignore: Iterable[str] = (), partial: bool = False) -> str:
        """Activate `names` (`Type_*` for every tool of a type). Returns the model's answer.

        With `partial` (the model's selectTools), the good names are selected and the bad ones named,
        so one typo costs no second call; otherwise (the host) it is all or none. A call that selects
        nothing raises and changes nothing.
        """
        skip = set(ignore)
        given = list(dict.fromkeys(n.strip() for n in names if isinstance(n, str)))  # each name, and glob, once
        if len(given) > MAX_NAMES:
            raise ToolCallError(
                f"That is {len(given)} different names; one selectTools call takes at most {MAX_NAMES}. "
                f"Nothing was selected; select at most {self.cap} tools you need next."
            )
        wanted: list[str] = []
        unknown: list[str] = []
        for name in given:
            if name in skip:
                continue
            if name.endswith("_*") and self.catalogue.tools_for_type(name[:-2]):
                wanted += self.catalogue.tools_for_type(name[:-2])
            elif name in self.catalogue:
                wanted.append(name)
            else:
                unknown.append(name)
        problems = self._problems(unknown)
        if unknown and (not partial or not wanted):
            raise ToolCallError(f"{problems}. Nothing was selected; call selectTools again with names from its description.")
        wanted = list(dict.fromkeys(wanted))
        if len(wanted) > self.cap:
            raise ToolCallError(f"That is {len(wanted)} tools; at most {self.cap} can be active at once. Select the ones you need next.")
        overflow = len(self._last_used) + len([n for n in wanted if n not in self]) - self.cap
        dropped: list[str] = []
        if overflow > 0:
            candidates = sorted((used, n) for n, used in self._last_used.items() if n not in wanted)
            dropped = [n for _, n in candidates[:overflow]]
            for name in dropped:
                del self._last_used[name]
        if dropped or any(name not in self for name in wanted):
            self.version = next(_VERSIONS)
        for name in wanted:
            self.touch(name)
        parts = [f"Selected {', '.join(wanted)}. Not selected: {problems}."] if unknown else ["ok."]
        if dropped:
            parts.append(
                f"To stay within {self.cap} active tools, these were dropped: {', '.join(dropped)}. Select them again when you need them."
            )
        return "ok" if parts == ["ok."] else " ".join(parts)

    def _problems(self, unknown: list[str]) -> str:
        """What is wrong with each name, in one line: a disallowed mutation, a field no object reaches, a typo."""
        typos: list[str] = []
        reasons: list[str] = []
        more = len(unknown) - _UNKNOWN_SHOWN
        for name in unknown[:_UNKNOWN_SHOWN]:
            name = name if len(name) <= 80 else name[:77] + "..."
            reason = self.catalogue.unavailable(name)
            if reason is not None:
                reasons.append(reason.rstrip("."))
                continue
            close = suggest_tools(self.catalogue, name)
            typos.append(f"{name} (did you mean {', '.join(close)}?)" if close else name)
        counted = [f"{more} more unknown names"] if more > 0 else []
        return "; ".join(([f"No tool named {'; '.join(typos)}"] if typos else []) + reasons + counted)


class FieldToolset(BatchingToolset):
    """Schema fields as tools: listed once selected, each call bound, sent and read into `Type#N` IDs."""

    def __init__(self, catalogue: Catalogue, registry: Registry, executor: Executor, long_values: LongValues, *, cap: int) -> None:
        self.catalogue = catalogue
        self.active = ActiveSet(catalogue, cap)
        self.calls = FieldCalls(catalogue, registry, executor, long_values)

    def list_tools(self) -> list[Tool]:
        return self.catalogue.tools(self.active)

    def get(self, name: str) -> Tool | None:
        return self.catalogue.tool(name) if name in self.catalogue else None

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
        each = each_key(self.catalogue, tool, arguments)
        if each is not None:
            return await self._call_each(tool, arguments, *each)
        return await self.calls.run(self.prepare(tool, arguments))

    async def _call_each(self, tool: Tool, arguments: dict[str, Any], name: str, values: list[Any]) -> Any:
        """A root read given several values of one argument: each value's call, EACH_REQUEST to a
        request (calls/_each.py)."""
        answers: list[Any] = [None] * len(values)
        reads: list[tuple[int, PreparedCall]] = []
        for index, value in enumerate(values):
            try:
                prepared = self.prepare(tool, {**arguments, name: value})
            except ToolCallError as error:
                answers[index] = error
                continue
            if prepared.answer is not None:
                answers[index] = prepared.answer
            else:
                reads.append((index, prepared))
        for start in range(0, len(reads), EACH_REQUEST):
            part = reads[start : start + EACH_REQUEST]
            for (index, _), value in zip(part, await run_reads(self.calls, [prepared for _, prepared in part])):
                answers[index] = value
        if all(isinstance(a, ToolCallError) for a in answers):
            raise answers[0]
        return merge_each(name, values, answers, only_by(self.catalogue, tool.name, name))

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
            try:
                each = each_key(self.catalogue, tool, arguments)
            except ToolCallError as error:
                out[index] = error
                continue
            if each is not None:  # its own request, after what came before it
                await flush()
                try:
                    out[index] = await self._call_each(tool, arguments, *each)
                except ToolCallError as error:
                    out[index] = error
                continue
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
        return suggest_tools(self.catalogue, name)
