"""A session's tools as one list that never changes during a run, for warm prompt caches.

Dynamic mode grows the tool list after each `selectTools`, and the list is the first part of the
cached prompt prefix. `DeferredTools` freezes the list when it is first asked for:

- shown: the meta-tools (selectTools with its description as of then, save, readResult, and
  describeTools when any listed schema points to it), the host's tools, and catalogue tools already active;
- deferred: the catalogue's other tools, flagged so the model does not see them until revealed.
  The catalogue's types are ordered breadth-first from what the model can reach (root types, then
  the objects held, then the types their tools return), so if the list must be cut to `max_bytes`
  the tools the model is most likely to select stay in it;
- late: anything the session shows later that the frozen list lacks (a host tool added mid-run, a
  selected tool beyond the cut), appended so the list before it stays a cached prefix.

Which catalogue tools to list: all of them, up to `max_bytes` of rendered JSON (default 4 MB). Deferred
definitions cost bytes on the wire but no context tokens. Measured on GitHub's public schema by
bench/prefix.py: about 4,200 tools without mutations are 2.1 MB in Anthropic's format, about 5,000
with them 2.6 MB (built in 1 to 2 s), so the whole catalogue is listed and the list stays byte-identical. The alternative, tools of held
types only, changes the list whenever a new type is held, which is what this exists to avoid.

selectTools' description is frozen with the list: the objects held then (the host's inputs) and the
tools the model can select. Objects made later are named in the results that made them.
`reveals(call, result)` tells which deferred tools a selectTools call revealed, and `answer(...)`
renders the provider's reveal for it (see dagtools.catalogue._deferred_formats for the wire formats).

A model adapter that keeps the cache warm, per request of a run:

    listed = session.deferred_tools()
    tools = listed.render("anthropic")             # Messages `tools`; the same bytes every turn
    results = await session.call_tools(calls)      # the model's tool_use blocks, as ToolCalls
    for call, result in zip(calls, results):
        if listed.selects(call.name):              # a selectTools call: its answer reveals
            blocks += listed.answer(call, result, "anthropic")
        else:                                      # any other call: its result as usual
            blocks.append({"type": "tool_result", "tool_use_id": call.id, "content": result.content})
    blocks.sort(key=lambda block: block["type"] != "tool_result")  # Anthropic: tool results first, notes after

On the Responses API, `render("openai-responses")` gives `tools` (selectTools as a client-run
`tool_search`); the model's `tool_search_call` items are selectTools calls (their `arguments` are
selectTools' arguments), and `answer(call, result, "openai-responses")` gives the input items that
follow them. Elsewhere, `render` raises: use fixed mode's tools there.
"""

from __future__ import annotations

import json
import weakref
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._tools import Tool, ToolCall, ToolResult
from ..calls._chain_calls import CALL_CHAIN
from ..catalogue._deferred_formats import deferred_format, render_deferred, reveal_anthropic, reveal_openai_responses
from ..catalogue._describe import DESCRIBE_TOOLS, points_to_describe
from ..catalogue._render import render_tool
from ._metatools import SELECT_TOOLS, reachable_types, read_result_tool, selectable_types

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["DEFAULT_MAX_BYTES", "DeferredTools", "deferred_tools"]

DEFAULT_MAX_BYTES = 4_000_000

_FROZEN_NOTE = (
    "Objects you make later are named in the results of the calls that make them. "
    "A selected tool becomes callable right after this call returns."
)


_LISTS: weakref.WeakKeyDictionary[Session, DeferredTools] = weakref.WeakKeyDictionary()


def deferred_tools(session: Session, **options: Any) -> DeferredTools:
    """The session's constant tool list: made when first asked for (with `options`, such as
    `max_bytes`), then the same one all run long."""
    found = _LISTS.get(session)
    if found is None:
        found = _LISTS[session] = DeferredTools(session, **options)
    return found


class DeferredTools:
    """One session's constant tool list, and how a selectTools result reveals tools in it."""

    def __init__(self, session: Session, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.session = session
        self.max_bytes = max_bytes
        select = session.meta.get(SELECT_TOOLS)
        assert select is not None  # every session has it
        #: selectTools with its description as of now: what the model reads to choose tools all run long.
        self.search = replace(select, description=f"{select.description}\n\n{_FROZEN_NOTE}")
        self.shown: list[Tool] = self._shown()
        taken = {self.search.name} | {tool.name for tool in self.shown}
        self.deferred: list[Tool] = self._deferred(taken)
        describe = session.meta.get(DESCRIBE_TOOLS)
        if describe is not None and describe.name not in taken and any(points_to_describe(t.parameters) for t in self.deferred):
            self.shown.append(describe)  # a revealed tool's schema may point to it: listed from the start, so the list stays put
            taken.add(describe.name)
        chain = session.meta.get(CALL_CHAIN)  # listed once tools are selected: here from the start, so the list stays put
        if chain is not None and chain.name not in taken:
            self.shown.append(chain)
            taken.add(chain.name)
        self._listed = taken | {tool.name for tool in self.deferred}
        self._deferred_names = {tool.name for tool in self.deferred}
        self._late: dict[str, Tool] = {}

    # -- the list ------------------------------------------------------------------------------------

    def _shown(self) -> list[Tool]:
        """The session's tools as of now but selectTools, and readResult, which appears with the first cut."""
        shown = [tool for tool in self.session.tools() if tool.name != self.search.name]
        read = read_result_tool()
        if all(tool.name != read.name for tool in shown):
            shown.append(read)
        return shown

    def _deferred(self, taken: set[str]) -> list[Tool]:
        catalogue = self.session.catalogue
        names = [name for name in self._ordered_names() if name not in taken]
        tools: list[Tool] = []
        size = 0
        for name in names:
            tool = catalogue.tool(name)
            size += len(json.dumps({**render_tool(tool, "anthropic"), "defer_loading": True}))
            if size > self.max_bytes:
                break
            tools.append(tool)
        return tools

    def _ordered_names(self) -> list[str]:
        """Every catalogue tool, its types breadth-first from what the model can reach now."""
        catalogue = self.session.catalogue
        start = selectable_types(catalogue, self.session.registry)
        seen = set(start)
        queue = deque(start)
        order: list[str] = []
        while queue:
            type_name = queue.popleft()
            order.append(type_name)
            for reached in reachable_types(catalogue, [type_name]):
                if reached not in seen:
                    seen.add(reached)
                    queue.append(reached)
        names = [name for type_name in order for name in catalogue.tools_for_type(type_name)]
        listed = set(names)
        return names + [name for name in catalogue.names() if name not in listed]

    def late(self) -> list[Tool]:
        """Tools the session shows now that the frozen list lacks, in the order they first appeared."""
        for tool in self.session.tools():
            if tool.name not in self._listed and tool.name not in self._late:
                self._late[tool.name] = tool
        return list(self._late.values())

    def render(self, format: str) -> list[dict[str, Any]]:
        """The tool list for `format` ("anthropic" or "openai-responses"): the same bytes all run long,
        unless a late tool was appended."""
        return render_deferred(self.search, self.shown, self.deferred, deferred_format(format), late=self.late())

    def is_deferred(self, name: str) -> bool:
        return name in self._deferred_names

    # -- reveals -------------------------------------------------------------------------------------

    def selects(self, name: str) -> bool:
        """Whether a call of `name` is a selectTools call, whose result reveals tools."""
        return name == self.search.name

    def reveals(self, call: ToolCall, result: ToolResult) -> list[str]:
        """The deferred tools `call` (a selectTools call that gave `result`) revealed: those it named
        that are active now. Nothing for another tool or a failed call."""
        if result.is_error or not self.selects(call.name):
            return []
        arguments = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                return []
        names = arguments.get("tools") if isinstance(arguments, dict) else None
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list):
            return []
        catalogue = self.session.catalogue
        wanted: list[str] = []
        for name in (str(n).strip() for n in names):
            wanted += catalogue.tools_for_type(name[:-2]) if name.endswith("_*") else [name]
        active = self.session.fields.active
        return [name for name in dict.fromkeys(wanted) if name in active and name in self._deferred_names]

    def answer(self, call: ToolCall, result: ToolResult, format: str) -> list[dict[str, Any]]:
        """What answers a selectTools call in `format`: Anthropic's user-turn blocks (a `tool_result`
        of `tool_reference` blocks, then any note as text), or the Responses API's input items (a
        `tool_search_output` with the revealed definitions, then any note as a user message)."""
        names = self.reveals(call, result)
        if deferred_format(format) == "anthropic":
            return reveal_anthropic(call.id, names, result.content, is_error=result.is_error)
        catalogue = self.session.catalogue
        return reveal_openai_responses(call.id, [catalogue.tool(n) for n in names], result.content)
