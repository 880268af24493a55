"""A session is an async context manager: it closes what was opened for it, and nothing it was given."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from dagtools import (
    ClosedError,
    ConfigError,
    FunctionToolset,
    LocalExecutor,
    Session,
    SessionOptions,
    Tool,
    ToolCall,
    compile_catalogue,
    open_session,
)
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


async def test_a_closer_that_raises_does_not_skip_the_others():
    session = await open_session(KITCHEN)
    closed: list[str] = []

    async def close(name: str) -> None:
        closed.append(name)
        if name == "broken":
            raise OSError("the socket was already gone")

    for name in ("first", "broken", "last"):
        session.close_with(lambda name=name: close(name))
    with pytest.raises(OSError, match="already gone"):
        await session.aclose()
    assert closed == ["last", "broken", "first"]  # the last opened closes first, and every closer ran
    assert session.closed
    await session.aclose()  # once: the closers do not run again
    assert closed == ["last", "broken", "first"]


async def test_a_closed_session_refuses_every_use_and_keeps_what_it_holds():
    session = await open_session(KITCHEN, inputs={"potato": {"field": "potato"}})
    session.select(["Potato_peel"])
    await session.call_tool(ToolCall(name="Potato_peel", arguments={}))
    await session.aclose()
    tool = Tool(name="now", description="The time.", parameters={"type": "object", "properties": {}}, kind="local")
    refused = {
        "select": lambda: session.select(["Query_potato"]),
        "tools": session.tools,
        "render_tools": session.render_tools,
        "add_tool": lambda: session.add_tool(tool, lambda arguments: "noon"),
        "add_toolset": lambda: session.add_toolset(FunctionToolset()),
        "tool_call_result": lambda: session.tool_call_result("call_1", "x"),
        "close_with": lambda: session.close_with(session.aclose),
        "restore": lambda: session.restore(session.state()),
    }
    for name, use in refused.items():
        with pytest.raises(ClosedError, match="This session is closed; open a new one with open_session"):
            use()
            raise AssertionError(f"{name} worked on a closed session")
    call = ToolCall(name="Potato_peel", arguments={})
    for use_async in (
        lambda: session.call_tool(call),
        lambda: session.call_tools([call]),
        lambda: session.execute(call),
        lambda: session.execute_tools([call]),
        lambda: session.add_input("oven", field="oven"),
        session.catch_up,
        session.checkpoint,
    ):
        with pytest.raises(ClosedError, match="closed"):
            await use_async()
    assert isinstance(ClosedError("x"), ConfigError)  # hosts that caught ConfigError still do
    assert [o.id for o in session.registry] == ["Potato#1", "Potato#2"]  # what it holds stays readable
    assert list(session.state().active_tools) == ["Potato_peel"] and session.missing_outputs == []


async def test_executors_stores_and_models_close_under_async_with(tmp_path, kitchen_url):
    from dagtools import FunctionModel, HttpExecutor, NoServerError, ScriptedModel
    from dagtools.executors._base import SchemaOnlyExecutor
    from dagtools.stores._open import open_store

    async with HttpExecutor(kitchen_url) as http:
        answer = await http.execute("{ potato { variety } }")
        assert answer.data is not None and http._client is not None
    assert http._client is None  # the pool it made is closed on the way out
    with pytest.raises(ClosedError, match="This HttpExecutor is closed; make a new HttpExecutor"):
        await http.execute("{ potato { variety } }")  # refused, not quietly opened again

    async with LocalExecutor(kitchen_schema) as local:
        assert (await local.execute("{ potato { variety } }")).data is not None
    with pytest.raises(ClosedError, match="LocalExecutor is closed"):
        await local.execute("{ potato { variety } }")

    async with SchemaOnlyExecutor("kitchen.graphql") as schema_only:
        with pytest.raises(NoServerError, match="only a schema"):
            await schema_only.execute("{ potato { variety } }")

    async with open_store(f"sqlite:///{tmp_path / 'sessions.db'}") as store:
        version = await store.save("k", b"{}", version=0)
        assert version == 1 and store._db is not None  # type: ignore[attr-defined]
    assert store._db is None  # type: ignore[attr-defined]  # its connection is closed

    async with ScriptedModel([{"text": "done"}]) as scripted:
        assert (await scripted.complete([], [])).text == "done"
    with pytest.raises(ClosedError, match="ScriptedModel is closed"):
        await scripted.complete([], [])
    with pytest.raises(ClosedError, match="closed"):
        async with scripted:
            pass
    async with FunctionModel(lambda messages, tools: {"text": "hi"}) as function:
        assert (await function.complete([], [])).text == "hi"


async def test_an_sdk_model_closes_its_client_under_async_with(kitchen_url):
    pytest.importorskip("openai", reason="the openai extra is not installed")
    from dagtools import OpenAIModel

    async with OpenAIModel("gpt-test", api_key="sk-test", base_url=kitchen_url) as model:
        client = model.openai_client()
        assert model.client is client  # type: ignore[attr-defined]
    assert model.client is None  # type: ignore[attr-defined]  # the SDK client (and its connections) closed
    with pytest.raises(ClosedError, match="OpenAIModel is closed"):
        await model.complete([], [])
