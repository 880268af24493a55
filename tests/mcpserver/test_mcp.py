"""`dagtools mcp` driven by the MCP SDK's own client: in memory, over stdio and over streamable HTTP,
in both protocol eras, in dynamic and fixed mode."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp_types import ToolListChangedNotification  # noqa: E402

from dagtools._errors import ConfigError  # noqa: E402
from dagtools.cli._mcp import add_mcp_command, mcp_config_from_args  # noqa: E402
from dagtools.mcpserver import (  # noqa: E402
    McpConfig,
    McpToolServer,  # noqa: E402
    load_mcp_config,
)
from dagtools.mcpserver.sessions import SESSION_HEADER  # noqa: E402
from tests.clients import measured  # noqa: E402
from tests.servers import free_port, wait_for_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KITCHEN = f"{ROOT / 'examples' / 'kitchen' / 'api.py'}:schema"
FRIES = yaml.safe_load((ROOT / "examples" / "kitchen" / "fries.yaml").read_text())
DAGTOOLS = str(Path(sys.executable).with_name("dagtools"))
ERAS = ["legacy", "auto"]  # the initialize handshake; server/discover, which picks 2026-07-28


def expected_version(era: str) -> str:
    return "2025-11-25" if era == "legacy" else "2026-07-28"


def kitchen(tools: str = "dynamic", **options: Any) -> McpToolServer:
    config = McpConfig(source=KITCHEN, tools=tools, inputs=FRIES["inputs"], outputs=FRIES["outputs"])  # type: ignore[arg-type]
    return McpToolServer(config.with_options(**options))


def names(listing: Any) -> list[str]:
    return [t.name for t in listing.tools]


def value(result: Any) -> Any:
    text = result.content[0].text
    try:
        return json.loads(text)
    except ValueError:
        return text


class Changes:
    """Tool-list changes as a client sees them: notifications (handshake era) or a listen stream (2026)."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self.event.set()

    async def wait(self) -> None:
        with anyio.fail_after(5):
            await self.event.wait()
        self.event = anyio.Event()


@asynccontextmanager
async def listening(client: Client, changes: Changes) -> AsyncIterator[None]:
    """In the 2026-07-28 era, follow tool-list changes through subscriptions/listen."""
    if client.protocol_version != "2026-07-28":
        yield
        return
    async with client.listen(tools_list_changed=True) as subscription, anyio.create_task_group() as tg:

        async def follow() -> None:
            async for _ in subscription:
                changes.event.set()

        tg.start_soon(follow)
        yield
        tg.cancel_scope.cancel()


async def fries_dynamic(client: Client, changes: Changes) -> dict[str, Any]:
    """The fries task by a client that only calls tools it has listed, and re-lists when told."""
    listed = names(await client.list_tools())
    assert listed[:2] == ["selectTools", "save"]
    async with listening(client, changes):
        for call in FRIES["calls"]:
            assert call["tool"] in listed, f"{call['tool']} was not listed: {listed}"
            result = await client.call_tool(call["tool"], call["arguments"])
            assert not result.is_error, result.content[0].text
            if "expect" in call:
                assert value(result) == call["expect"]
            if call["tool"] == "selectTools":
                await changes.wait()
                listed = names(await client.list_tools())
    return value(result)


async def fries_fixed(client: Client) -> Any:
    """The fries task by a client that reads the tool list once and never again."""
    listed = names(await client.list_tools())
    assert listed == ["selectTools", "callTool", "callChain", "save"]
    learned: dict[str, Any] = {}
    for call in FRIES["calls"]:
        if call["tool"] == "selectTools":
            result = await client.call_tool("selectTools", call["arguments"])
            assert value(result)["result"] == "ok"
            learned.update({t["name"]: t for t in value(result)["tools"]})
            continue
        elif call["tool"] == "save":
            result = await client.call_tool("save", call["arguments"])
        else:
            assert call["tool"] in learned
            result = await client.call_tool("callTool", {"tool": call["tool"], "arguments": call["arguments"]})
        assert not result.is_error, result.content[0].text
        if "expect" in call:
            assert value(result) == call["expect"]
    assert names(await client.list_tools()) == listed
    return value(result)


# -- in memory ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_dynamic_client_follows_list_changes_to_finish_fries(era: str) -> None:
    server = kitchen("dynamic")
    changes = Changes()
    async with Client(server.server, mode=era, message_handler=changes.on_message) as client:
        assert client.protocol_version == expected_version(era)
        assert client.server_capabilities.tools.list_changed is True
        result = await fries_dynamic(client, changes)
        assert "Saved fries = Plate#2" in result


@pytest.mark.parametrize("era", ERAS)
async def test_fixed_client_that_never_relists_finishes_fries(era: str) -> None:
    async with Client(kitchen("fixed").server, mode=era) as client:
        assert "callTool" in (client.instructions or "")
        assert "Saved fries = Plate#2" in await fries_fixed(client)


@pytest.mark.parametrize("era", ERAS)
async def test_errors_come_back_as_error_results(era: str) -> None:
    async with Client(kitchen("dynamic").server, mode=era) as client:
        unknown = await client.call_tool("Potato_peal", {})
        assert unknown.is_error and "Did you mean Potato_peel" in unknown.content[0].text
        unselected = await client.call_tool("Potato_peel", {"Potato": "Potato#1"})
        assert unselected.is_error and "selectTools" in unselected.content[0].text
        await client.call_tool("selectTools", {"tools": ["Potato_peel"]})
        bad_id = await client.call_tool("Potato_peel", {"Potato": "Potato#9"})
        assert bad_id.is_error and "Potato#9" in bad_id.content[0].text
        early_save = await client.call_tool("save", {})
        assert early_save.is_error
    async with Client(kitchen("fixed").server, mode=era) as client:
        for name, arguments in [
            ("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#9"}}),
            ("callTool", {}),
            ("describeTools", {"tools": ["Nope_nope"]}),
            ("selectTools", {"tools": ["Nope"]}),
        ]:
            result = await client.call_tool(name, arguments)
            assert result.is_error, (name, arguments)


@pytest.mark.parametrize("tools", ["fixed", "dynamic"])
async def test_save_without_declared_outputs_says_why_and_how_to_declare_them(tools: str) -> None:
    config = McpConfig(source=KITCHEN, tools=tools, inputs=FRIES["inputs"])  # type: ignore[arg-type]
    async with Client(McpToolServer(config).server) as client:
        assert "save" not in names(await client.list_tools())
        said = await client.call_tool("save", {"fries": "Plate#1"})
        text = said.content[0].text
        assert said.is_error and "no outputs were asked for" in text and "--output NAME:TYPE" in text, text
        assert "There is no tool save" not in text


async def test_a_call_learns_whether_the_tool_list_changed_without_listing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from dagtools.session._fields import FieldToolset
    from dagtools.session._toolsets import CombinedToolset

    calling: ContextVar[bool] = ContextVar("calling", default=False)
    handler = McpToolServer._call_tool

    async def call_tool(self: McpToolServer, ctx: Any, params: Any) -> Any:
        calling.set(True)  # this task serves one tools/call (the client lists tools on its own, too)
        return await handler(self, ctx, params)

    monkeypatch.setattr(McpToolServer, "_call_tool", call_tool)
    listed: list[str] = []
    for toolset in (CombinedToolset, FieldToolset):
        real = toolset.list_tools

        def spied(self: Any, real: Any = real) -> Any:
            if calling.get():
                listed.append(type(self).__name__)
            return real(self)

        monkeypatch.setattr(toolset, "list_tools", spied)
    changes = Changes()
    async with Client(kitchen("dynamic").server, mode="legacy", message_handler=changes.on_message) as client:
        await client.list_tools()
        listed.clear()
        assert not (await client.call_tool("selectTools", {"tools": ["Potato_peel"]})).is_error
        await changes.wait()  # a call that changed the list still says so
        assert value(await client.call_tool("Potato_peel", {"Potato": "Potato#1"})) == {"result": "Potato#2"}
        await anyio.sleep(0.05)
        assert not changes.event.is_set()  # one that did not, does not
        assert listed == []  # and neither call listed the session's tools to find out
        assert "Potato_peel" in names(await client.list_tools())


async def test_two_clients_in_memory_never_share_objects_or_tools() -> None:
    server = kitchen("dynamic")
    async with Client(server.server, mode="legacy") as first, Client(server.server, mode="legacy") as second:
        await first.call_tool("selectTools", {"tools": ["Potato_peel"]})
        assert value(await first.call_tool("Potato_peel", {"Potato": "Potato#1"})) == {"result": "Potato#2"}
        assert "Potato_peel" in names(await first.list_tools())
        assert "Potato_peel" not in names(await second.list_tools())
        refused = await second.call_tool("Potato_peel", {"Potato": "Potato#2"})
        assert refused.is_error
        await second.call_tool("selectTools", {"tools": ["Potato_peel"]})
        missing = await second.call_tool("Potato_peel", {"Potato": "Potato#2"})
        assert missing.is_error and "Potato#2" in missing.content[0].text


async def test_stateless_era_keeps_a_clients_objects_across_requests() -> None:
    server = kitchen("fixed")
    async with Client(server.server, mode="auto") as client:
        await client.call_tool("selectTools", {"tools": ["Potato_peel"]})
    async with Client(server.server, mode="auto") as again:  # same process, no key: the same session
        peeled = await again.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#1"}})
        assert value(peeled) == {"result": "Potato#2"}
        other = await again.call_tool(
            "callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Potato#2"}}, meta={"dagtools/session": "someone-else"}
        )  # type: ignore[arg-type]
        assert other.is_error


async def test_tool_listing_keeps_schemas_and_annotations() -> None:
    server = kitchen("dynamic", mutations=True)
    async with Client(server.server, mode="legacy") as client:
        await client.call_tool("selectTools", {"tools": ["Potato_slice", "Mutation_tip", "Oven_bake"]})
        tools = {t.name: t for t in (await client.list_tools()).tools}
    catalogue = server.catalogue
    for name in ("Potato_slice", "Mutation_tip", "Oven_bake"):
        assert tools[name].input_schema == catalogue.tool(name).parameters
    shape = tools["Potato_slice"].input_schema["properties"]["shape"]
    assert "enum" in shape or "$ref" in shape
    assert tools["Potato_slice"].annotations.read_only_hint is True
    assert tools["Mutation_tip"].annotations.read_only_hint is False
    assert tools["Mutation_tip"].annotations.destructive_hint is True
    assert tools["selectTools"].annotations.read_only_hint is True


async def test_fixed_select_tools_returns_full_schemas_and_describe_does_not_select() -> None:
    server = kitchen("fixed")
    async with Client(server.server, mode="legacy") as client:
        described = value(await client.call_tool("describeTools", {"tools": ["Potato_*"]}))
        assert {t["name"] for t in described["tools"]} >= {"Potato_peel", "Potato_slice"}
        refused = await client.call_tool("callTool", {"tool": "Potato_peel", "arguments": {"Potato": "Sink#1"}})
        assert refused.is_error
        listing = value(await client.call_tool("selectTools", {}))
        assert "Potato#1" in listing and "Query_potato" in listing
        selected = value(await client.call_tool("selectTools", {"tools": ["Potato_slice"]}))
        schema = selected["tools"][0]["inputSchema"]
        assert schema == server.catalogue.tool("Potato_slice").parameters


# -- configuration --------------------------------------------------------------------------------------


def test_config_file_and_command_line(tmp_path: Path) -> None:
    import argparse

    path = tmp_path / "mcp.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "source": KITCHEN,
                "tools": "dynamic",
                "headers": {"X-Key": "${DAGTOOLS_TEST_KEY}"},
                "forward-headers": ["Authorization"],
                "mutations": ["tip"],
                "inputs": FRIES["inputs"],
                "outputs": FRIES["outputs"],
            }
        )
    )
    os.environ["DAGTOOLS_TEST_KEY"] = "secret"
    config = load_mcp_config(path)
    assert config.headers == {"X-Key": "secret"} and config.forward_headers == ("Authorization",)
    assert config.mutations == ("tip",) and config.tools == "dynamic"
    parser = argparse.ArgumentParser()
    add_mcp_command(parser.add_subparsers())
    args = parser.parse_args(
        [
            "mcp",
            "--config",
            str(path),
            "--tools",
            "fixed",
            "--header",
            "X-Other: 1",
            "--forward-header",
            "X-Trace",
            "--input",
            "p=potato # A potato",
            "--output",
            "n=Int # A number",
            "--port",
            "9",
        ]
    )
    merged = mcp_config_from_args(args)
    assert merged.tools == "fixed" and merged.port == 9 and merged.source == KITCHEN
    assert merged.headers == {"X-Key": "secret", "X-Other": "1"}
    assert merged.forward_headers == ("Authorization", "X-Trace")
    assert merged.inputs["p"] == {"field": "potato", "description": "A potato"}
    assert merged.outputs["n"] == {"type": "Int", "description": "A number"}
    with pytest.raises(ConfigError):
        load_mcp_config(data={"sauce": "x"})
    with pytest.raises(ConfigError):
        load_mcp_config(data={"tools": "sometimes"})


#: The `dagtools mcp` options whose `dest` is not the `McpConfig` field they set: `mcp_config_from_args`
#: translates them (or adds them to the file's value), or they are not the server's options at all.
TRANSLATED = {"help", "config", "verbose_here", "header", "forward_header", "allow_mutations", "mutation", "strict"}
TRANSLATED |= {"no_cache", "refresh_schema", "input", "value", "output"}


def test_every_mcp_option_sets_the_config_field_its_dest_names() -> None:
    """An option is a field of `McpConfig` and an `add_argument` whose `dest` names it: one spelled
    otherwise would be read by nothing, so it must be one of the few translated on purpose."""
    import argparse
    import dataclasses

    commands = argparse.ArgumentParser().add_subparsers()
    add_mcp_command(commands)
    dests = {action.dest for action in commands.choices["mcp"]._actions}
    assert dests - TRANSLATED - {f.name for f in dataclasses.fields(McpConfig)} == set()
    assert TRANSLATED <= dests, "a translated option that no longer exists"
    args = commands.choices["mcp"].parse_args(
        ["s.graphql", "--allowed-host", "a.example", "--allowed-host", "b.example:8", "--allowed-origin", "https://a.example"]
        + ["--relay-ids", "--operations", "ops", "--oauth-introspection-env", "RS", "--path", "/m", "--port", "0"]
    )
    config = mcp_config_from_args(args)
    assert config.allowed_hosts == ("a.example", "b.example:8") and config.allowed_origins == ("https://a.example",)
    assert config.relay_ids is True and config.operations == "ops" and config.oauth_introspection_env == "RS"
    assert (config.source, config.path, config.port, config.tools, config.lenient) == ("s.graphql", "/m", 0, "fixed", True)


# -- over stdio -----------------------------------------------------------------------------------------


def stdio(*extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=DAGTOOLS, args=["mcp", KITCHEN, *extra], cwd=str(ROOT), env=measured({}))


@pytest.mark.parametrize("era", ERAS)
async def test_stdio_subprocess_fixed_mode(era: str) -> None:
    async with Client(stdio("--config", str(ROOT / "examples" / "kitchen" / "mcp.yaml")), mode=era) as client:
        assert "Saved fries = Plate#2" in await fries_fixed(client)


async def test_stdio_subprocess_dynamic_mode_both_eras() -> None:
    for era in ERAS:
        changes = Changes()
        params = stdio("--tools", "dynamic", "--config", str(ROOT / "examples" / "kitchen" / "mcp.yaml"))
        async with Client(params, mode=era, message_handler=changes.on_message) as client:
            assert "Saved fries = Plate#2" in await fries_dynamic(client, changes)


async def test_a_lookup_of_several_values_over_stdio_two_clients_at_once_on_one_cache(tmp_path: Path) -> None:
    """`dagtools mcp` as a client starts it, twice at once on one cache, fixed and dynamic mode: a root
    lookup given a list reads each value in one call, keyed by the value asked."""
    asked = ["Russet", "Yukon Gold", "Maris Piper"]

    async def one(mode: str) -> None:
        params = StdioServerParameters(
            command=DAGTOOLS, args=["mcp", KITCHEN, "--tools", mode], cwd=str(ROOT), env=measured({"DAGTOOLS_CACHE_DIR": str(tmp_path)})
        )
        async with Client(params) as client:
            if mode == "fixed":
                answer = await client.call_tool("callTool", {"tool": "Query_potato", "arguments": {"variety": asked}})
            else:
                await client.call_tool("selectTools", {"tools": ["Query_potato"]})
                answer = await client.call_tool("Query_potato", {"variety": asked})
            assert not answer.is_error, answer.content[0].text
            value = json.loads(answer.content[0].text)
            assert list(value["result"]) == asked and len(set(value["result"].values())) == len(asked)
            for variety, potato in value["result"].items():  # each handle is the object its value read
                read = await client.call_tool("callChain", {"steps": [{"tool": "Potato_variety", "arguments": {"Potato": potato}}]})
                assert json.loads(read.content[0].text)["result"] == variety, read.content[0].text

    async with anyio.create_task_group() as group:
        group.start_soon(one, "fixed")
        group.start_soon(one, "dynamic")


# -- over streamable HTTP -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            DAGTOOLS,
            "mcp",
            "--config",
            str(ROOT / "examples" / "kitchen" / "mcp.yaml"),
            "--tools",
            "dynamic",
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, timeout=30, alive=lambda: process.poll() is None)
    except (RuntimeError, TimeoutError):
        process.kill()
        raise RuntimeError(f"dagtools mcp did not start: {process.stderr.read().decode() if process.stderr else ''}") from None
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def strong_key(name: str) -> str:
    """A session key an unauthenticated HTTP caller may use: the name, then 128 random bits."""
    return f"{name}-{secrets.token_hex(16)}"


def http_client(url: str, era: str, key: str | None = None, message_handler: Any = None, **headers: str) -> Client:
    """An SDK client over streamable HTTP; `key` names its session (made unguessable), `headers` go with every request."""
    if key:
        headers[SESSION_HEADER] = strong_key(key)
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers or None))
    return Client(transport, mode=era, message_handler=message_handler)


@pytest.mark.parametrize("era", ERAS)
async def test_http_dynamic_fries(http_url: str, era: str) -> None:
    changes = Changes()
    async with http_client(http_url, era, key=f"fries-{era}", message_handler=changes.on_message) as client:
        assert "Saved fries = Plate#2" in await fries_dynamic(client, changes)


@pytest.mark.parametrize("era", ERAS)
async def test_http_concurrent_clients_are_isolated(http_url: str, era: str) -> None:
    async def peel_twice(client: Client) -> list[Any]:
        await client.call_tool("selectTools", {"tools": ["Potato_peel", "Potato_slice"]})
        return [value(await client.call_tool("Potato_peel", {})), value(await client.call_tool("Potato_slice", {"shape": "STICKS"}))]

    async with http_client(http_url, era, key=f"a-{era}") as a, http_client(http_url, era, key=f"b-{era}") as b:
        results: dict[str, Any] = {}

        async def run(name: str, client: Client) -> None:
            results[name] = await peel_twice(client)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a", a)
            tg.start_soon(run, "b", b)
        # Each client minted its own Potato#2 and Potato#3 from its own Potato#1.
        assert results["a"] == results["b"] == [{"result": "Potato#2"}, {"result": "Potato#3"}]
    async with http_client(http_url, era, key=f"c-{era}") as c:
        assert "Potato_peel" not in names(await c.list_tools())
        assert (await c.call_tool("Potato_peel", {"Potato": "Potato#3"})).is_error


def test_an_unset_variable_in_a_header_is_an_error_at_start(monkeypatch):
    from dagtools._errors import ConfigError
    from dagtools.mcpserver._config import parse_headers

    monkeypatch.delenv("DAGTOOLS_TEST_UNSET", raising=False)
    monkeypatch.setenv("DAGTOOLS_TEST_SET", "s3cret")
    with pytest.raises(ConfigError, match=r"\$\{DAGTOOLS_TEST_UNSET\}, which is not set"):
        parse_headers(["Authorization: Bearer ${DAGTOOLS_TEST_UNSET}"])
    assert parse_headers({"X-Key": "${DAGTOOLS_TEST_SET}", "X-Other": "a$DAGTOOLS_TEST_UNSET"}) == {
        "X-Key": "s3cret",
        "X-Other": "a$DAGTOOLS_TEST_UNSET",  # a bare $word that names nothing is part of the value
    }
