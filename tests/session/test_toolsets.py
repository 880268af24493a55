"""One road for every call: a turn finds each call's owner once and runs the call through that owner's
`call_tool`, or through `call_batch` for the calls a batching toolset runs together, whichever toolset
it is (the catalogue's fields or a host's own)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from dagtools import BatchingToolset, ExecutorError, FunctionToolset, Tool, ToolCall, ToolCallError, TransportError
from tests.kitchen import kitchen_session


def spy(monkeypatch: pytest.MonkeyPatch, owner: Any, method: str) -> list[Any]:
    """Record each call of `owner.method` (the real method still runs)."""
    seen: list[Any] = []
    real = getattr(owner, method)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        seen.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, method, recorded)
    return seen


async def test_a_call_runs_through_its_owners_call_tool_and_a_turns_reads_through_call_batch(monkeypatch):
    session = await kitchen_session()
    session.select(["Potato_peel", "Potato_variety", "Oven_temperature"])
    fields = session.fields
    one_by_one, together = spy(monkeypatch, fields, "call_tool"), spy(monkeypatch, fields, "call_batch")
    sent = spy(monkeypatch, fields.calls.executor, "execute")
    looked_up = spy(monkeypatch, fields, "find")

    [peeled] = await session.call_tools([ToolCall(name="Potato_peel", arguments={})])
    assert peeled.value["result"] == "Potato#2"
    assert [tool.name for tool, _ in one_by_one] == ["Potato_peel"] and together == [] and len(sent) == 1
    assert len(looked_up) == 1  # the name is resolved once, not again to run it

    one_by_one.clear(), sent.clear(), looked_up.clear()
    turn = [ToolCall(name="Potato_variety", arguments={"Potato": "Potato#1"}), ToolCall(name="Oven_temperature", arguments={})]
    results = await session.call_tools(turn)
    assert not any(r.is_error for r in results)
    assert one_by_one == [] and [[tool.name for tool, _ in batch] for (batch,) in together] == [["Potato_variety", "Oven_temperature"]]
    assert len(sent) == 1 and len(looked_up) == 2  # one request for the turn's reads; each name resolved once


class Counters(BatchingToolset):
    """A host's toolset that can run several `add` calls as one (as a bulk endpoint would)."""

    def __init__(self) -> None:
        spec = {"type": "object", "properties": {"name": {"type": "string"}}}
        self.tools = {
            "add": Tool(name="add", description="Add one to a counter.", parameters=spec, kind="local"),
            "reset": Tool(name="reset", description="Reset every counter.", parameters=spec, kind="local", read_only=False),
        }
        self.counts: dict[str, int] = {}
        self.batches: list[list[str]] = []
        self.alone: list[str] = []

    def list_tools(self) -> list[Tool]:
        return list(self.tools.values())

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def batchable(self, tool: Tool) -> bool:
        return tool.name == "add"

    async def call_tool(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        self.alone.append(f"{tool.name} {arguments.get('name', '')}".strip())
        if tool.name == "reset":
            self.counts.clear()
            return "reset"
        return self._add(arguments)

    async def call_batch(self, calls: Sequence[tuple[Tool, dict[str, Any]]]) -> list[Any]:
        self.batches.append([arguments.get("name", "") for _, arguments in calls])
        out: list[Any] = []
        for _, arguments in calls:
            try:
                out.append(self._add(arguments))
            except ToolCallError as error:
                out.append(error)
        return out

    def _add(self, arguments: dict[str, Any]) -> int:
        name = arguments.get("name")
        if not name:
            raise ToolCallError("add needs the counter's name.")
        self.counts[name] = self.counts.get(name, 0) + 1
        return self.counts[name]


async def test_any_toolset_that_batches_gets_a_turns_consecutive_calls_together():
    session = await kitchen_session()
    session.select(["Potato_variety"])
    counters = Counters()
    session.add_toolset(counters)
    turn = [
        ToolCall(name="add", arguments={"name": "a"}),
        ToolCall(name="add", arguments={}),  # the model's mistake: an error result for this call alone
        ToolCall(name="add", arguments={"name": "a"}),
        ToolCall(name="reset", arguments={}),  # not batchable: a barrier, run alone after the batch before it
        ToolCall(name="add", arguments={"name": "a"}),
        ToolCall(name="Potato_variety", arguments={"Potato": "Potato#1"}),  # another owner ends the batch
        ToolCall(name="add", arguments={"name": "b"}),
        ToolCall(name="add", arguments={"name": "b"}),
    ]
    results = await session.call_tools(turn)
    assert [r.value for r in results] == [1, {"error": "add needs the counter's name."}, 2, "reset", 1, {"result": "Russet"}, 1, 2]
    assert [r.is_error for r in results] == [False, True, False, False, False, False, False, False]
    assert counters.batches == [["a", "", "a"], ["b", "b"]]
    assert counters.alone == ["reset", "add a"]  # a batch of one runs through call_tool
    assert [m.role for m in session.context.messages[-9:]] == ["assistant"] + ["tool"] * 8


async def test_an_api_that_is_down_behind_a_host_tool_is_an_error_the_model_reads(caplog):
    session = await kitchen_session()

    async def fetch(arguments: dict[str, Any]) -> Any:
        raise TransportError("The API at http://127.0.0.1:9/ could not be reached (connection refused).")

    tools = FunctionToolset()
    tools.add("fetch", Tool(name="fetch", description="Fetch.", parameters={"type": "object", "properties": {}}, kind="local"), fetch)
    session.add_toolset(tools)
    with caplog.at_level("ERROR", logger="dagtools"):
        [result] = await session.call_tools([ToolCall(name="fetch", arguments={})])
    assert result.is_error and "could not be reached" in result.value["error"] and "fetch" in result.value["error"]
    assert not caplog.records  # infrastructure the model can route around, not a bug
    assert issubclass(TransportError, ExecutorError)


async def test_a_bug_passed_on_through_a_tool_that_runs_another_is_logged_once(caplog):
    inner = await kitchen_session()
    spec = {"type": "object", "properties": {}}
    inner.add_tool(Tool(name="lookup", description="Looks up.", parameters=spec), lambda arguments: {}["missing"])
    outer = await kitchen_session()
    outer.add_tool(  # as the fixed MCP tools run the session's own: a tool that runs a tool
        Tool(name="run", description="Runs lookup.", parameters=spec),
        lambda arguments: inner.call_tool(ToolCall(name="lookup", arguments={})),
    )
    with caplog.at_level("ERROR", logger="dagtools"), pytest.raises(KeyError):
        await outer.call_tool(ToolCall(name="run", arguments={}))
    assert [r.getMessage() for r in caplog.records if r.name == "dagtools"] == [
        "The tool lookup raised; that is a bug in the code behind it, not a mistake of the model's."
    ]
