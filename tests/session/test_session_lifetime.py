"""A session is an async context manager: it closes what was opened for it, and nothing it was given."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from dagtools import ConfigError, FunctionToolset, LocalExecutor, Session, SessionOptions, Tool, ToolCall, compile_catalogue, open_session
from examples.kitchen.api import schema as kitchen_schema
from tests.conftest import ROOT

KITCHEN = str(ROOT / "examples" / "kitchen" / "api.py") + ":schema"


class _Tracked(LocalExecutor):
    closed = 0

    async def aclose(self) -> None:
        type(self).closed += 1
        await super().aclose()


async def test_async_with_closes_the_executor_open_session_made(kitchen_url):
    async with await open_session(kitchen_url, inputs={"potato": {"field": "potato"}}) as session:
        executor = session.executor
        result = await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}))
        assert result.value == "ok"
    assert session.closed
    assert executor._client is None  # type: ignore[attr-defined]  # its connections are gone


async def test_a_given_executor_is_left_open():
    executor = _Tracked(kitchen_schema)
    before = _Tracked.closed
    async with await open_session(KITCHEN, executor=executor) as session:
        pass
    assert session.closed and _Tracked.closed == before
    await session.aclose()  # closing twice is harmless
    assert _Tracked.closed == before


async def test_a_closed_session_says_so():
    session = await open_session(KITCHEN)
    await session.aclose()
    with pytest.raises(ConfigError, match="closed"):
        await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Query_potato"]}))
    with pytest.raises(ConfigError, match="closed"):
        async with session:
            pass


def test_no_open_sockets_under_dev_mode(kitchen_url):
    script = textwrap.dedent(
        f"""
        import anyio
        from dagtools import ConfigError, ToolCall, open_session

        async def main():
            async with await open_session({kitchen_url!r}, inputs={{"potato": {{"field": "potato"}}}}, cache=False) as session:
                await session.call_tool(ToolCall(name="selectTools", arguments={{"tools": ["Potato_peel"]}}))
                result = await session.call_tool(ToolCall(name="Potato_peel", arguments={{}}))
                assert result.value["result"] == "Potato#2", result.value
            try:  # an input that fails: the session never reaches the caller, and closes itself
                await open_session({kitchen_url!r}, inputs={{"x": {{"field": "potato(variety: 3)"}}}}, cache=False)
            except ConfigError:
                pass
            else:
                raise AssertionError("a bad input opened a session")

        anyio.run(main)
        """
    )
    done = subprocess.run([sys.executable, "-X", "dev", "-W", "error", "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "ResourceWarning" not in done.stderr and "unclosed" not in done.stderr.lower(), done.stderr


async def test_options_are_one_typed_value():
    options = SessionOptions.of(max_active_tools=2, mutations=True)
    assert options.max_active_tools == 2 and options.catalogue.mutations is True
    with pytest.raises(TypeError, match="max_tools"):
        SessionOptions.of(max_tools=3)
    with pytest.raises(ConfigError, match="max_active_tools"):
        SessionOptions(max_active_tools=0)
    async with await open_session(KITCHEN, options=options) as session:
        assert session.catalogue.mutation_type is None or session.catalogue.mutations is not False
        session.select(["Query_potato", "Query_oven"])
        session.select(["Query_sink"])
        assert len(session.active_tools) == 2


async def test_host_toolsets_join_the_session():
    catalogue = compile_catalogue(kitchen_schema._schema)
    session = Session(catalogue, LocalExecutor(kitchen_schema))
    weather = FunctionToolset()
    tool = Tool(name="weather", description="Today's weather.", parameters={"type": "object", "properties": {}}, kind="local")
    weather.add("weather", tool, lambda arguments: "sunny")
    session.add_toolset(weather)
    assert "weather" in [t.name for t in session.tools()]
    result = await session.call_tool(ToolCall(name="weather", arguments={}))
    assert result.value == "sunny" and not result.is_error
    with pytest.raises(ConfigError, match="weather"):
        session.add_toolset(weather)
    # selecting a host tool's name is not an error: it is simply there already
    assert (await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["weather", "Query_potato"]}))).value == "ok"


async def test_state_is_plain_data():
    async with await open_session(KITCHEN, inputs={"potato": {"field": "potato", "description": "A potato."}}) as session:
        await session.call_tool(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}))
        await session.call_tool(ToolCall(name="Potato_peel", arguments={}))
        state = session.state().to_json()
    text = json.dumps(state)
    assert [o["id"] for o in state["objects"]] == ["Potato#1", "Potato#2"]
    assert state["active_tools"] == ["Potato_peel"]
    assert state["objects"][0]["description"] == "A potato."
    assert [m["role"] for m in state["context"]] == ["assistant", "tool", "assistant", "tool"]
    assert "Potato_peel" in text
