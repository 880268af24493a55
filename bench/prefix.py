"""How much of each model request's cached prefix a run throws away, per tool mode and provider.

    python bench/prefix.py

Providers cache the prompt prefix: a request whose start repeats the previous request's bytes is
served from the cache up to the first byte that differs. This bench replays the fries task
(examples/kitchen/fries.yaml, one call per model turn, as the scripted model does) in three modes:

- dynamic: the session's tools, growing after each selectTools;
- fixed: the MCP server's constant tools (selectTools, callTool, describeTools, save);
- deferred: every tool listed once with `defer_loading`, selected tools revealed in place
  (`session.deferred_tools()`); on Chat Completions, which cannot defer a tool, deferred mode falls
  back to fixed mode's list.

For each turn it builds the request each provider would get, and serialises it in the order the
provider caches it: Anthropic documents tools, then system, then messages; OpenAI (Chat Completions
and Responses) renders the instructions first, then the tool definitions, then the conversation. The
system prompt is made once, when the run starts, as an agent loop does.

Figures, summed over the run's consecutive request pairs:
- `prefix_bytes_changed[mode, provider]`: bytes of the previous request that are not a prefix of the
  next one (what the cache loses);
- `tools_bytes_changed[mode, provider]`: the same for the tool list alone.

The same figures are measured on the wire too (`wire_prefix_bytes_changed`, `wire_tools_bytes_changed`):
an agent run on the real adapters (the official SDKs) against the loopback fakes of Anthropic Messages
and the Responses API (tests/fake_models.py), from the request bodies as the fakes received them.

Targets: deferred changes 0 bytes of the whole prefix on Anthropic and on OpenAI Responses (the two
formats that reveal in place), and 0 bytes of the tools part wherever it defers. Fixed mode's tools
are constant but selectTools' description follows the objects held, so its figure is printed beside
the target that it be no more than dynamic's. Also printed: the deferred list of GitHub's public
schema, in tools and bytes, with the target that it leaves no tool out (it fits the 4 MB default).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the kitchen's example API and test helpers
    sys.path.insert(0, str(ROOT))
if str(ROOT / "bench") not in sys.path:  # last: bench/mcp.py must not hide the mcp package
    sys.path.append(str(ROOT / "bench"))

from _figures import exit_status, figure, schema_path  # noqa: E402

from dagtools import Session, ToolCall, ToolResult  # noqa: E402
from dagtools.agent._agent import system_prompt  # noqa: E402
from dagtools.catalogue._render import render_tools  # noqa: E402
from dagtools.mcpserver.sessions import FixedToolset  # noqa: E402

__all__ = ["measure"]

MODES = ("dynamic", "fixed", "deferred")
PROVIDERS = ("anthropic", "openai", "openai-responses")
FRIES = ROOT / "examples" / "kitchen" / "fries.yaml"
PROMPT = "Bake me some french fries."


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- one run: what the model called, what it read, and the tool list before each turn --------------


class Turn:
    """One model turn: the tool list it was offered, then its call and what answered it."""

    def __init__(self, tools: dict[str, list[dict[str, Any]]]) -> None:
        self.tools = tools
        self.call: ToolCall | None = None
        self.result: ToolResult | None = None
        self.answers: dict[str, list[dict[str, Any]]] = {}  # deferred mode: selectTools' reveal per provider


async def _session() -> Session:
    from tests.kitchen import kitchen_session

    return await kitchen_session()


async def run(mode: str) -> tuple[str, list[Turn]]:
    """The fries task in `mode`; the system prompt and every turn, the closing one included."""
    script = yaml.safe_load(FRIES.read_text())["calls"]
    async with await _session() as session:
        system = system_prompt(session)
        fixed = FixedToolset(session)
        listed = session.deferred_tools() if mode == "deferred" else None
        turns: list[Turn] = []
        for step in [*script, None]:
            turns.append(Turn(_tool_lists(mode, session, fixed)))
            if step is None:
                break
            call = ToolCall(name=step["tool"], arguments=step["arguments"], id=step["id"])
            if mode == "fixed" and step["tool"] not in ("selectTools", "save"):
                call = ToolCall(name="callTool", arguments={"tool": step["tool"], "arguments": step["arguments"]}, id=step["id"])
            turn = turns[-1]
            turn.call = call
            if mode == "fixed":
                turn.result = await _fixed_call(fixed, call)
            else:
                turn.result = (await session.call_tools([call]))[0]
            if listed is not None and listed.selects(call.name):
                turn.answers = {p: listed.answer(call, turn.result, p) for p in ("anthropic", "openai-responses")}
            assert not turn.result.is_error, turn.result.content
        assert session.saved == {"fries": "Plate#2"}, session.saved
    return system, turns


async def _fixed_call(fixed: FixedToolset, call: ToolCall) -> ToolResult:
    tool = fixed.get(call.name)
    assert tool is not None and isinstance(call.arguments, dict)
    value = await fixed.call_tool(tool, call.arguments)
    return ToolResult(call_id=call.id, name=call.name, value=value)


def _tool_lists(mode: str, session: Session, fixed: FixedToolset) -> dict[str, list[dict[str, Any]]]:
    if mode == "dynamic":
        return {p: render_tools(session.tools(), p) for p in PROVIDERS}
    fixed_lists = {p: render_tools(fixed.list_tools(), p) for p in PROVIDERS}
    if mode == "fixed":
        return fixed_lists
    listed = session.deferred_tools()
    return {"anthropic": listed.render("anthropic"), "openai-responses": listed.render("openai-responses")}


# -- requests, in each provider's order ---------------------------------------------------------------


def request_segments(provider: str, system: str, turns: list[Turn], upto: int) -> tuple[str, str]:
    """The request before turn `upto` as (tools part, whole request in cache order)."""
    tools = _dumps(turns[upto].tools[provider])
    if provider == "anthropic":
        messages = [{"role": "user", "content": PROMPT}] + [m for t in turns[:upto] for m in _anthropic(t)]
        return tools, tools + _dumps(system) + "".join(_dumps(m) for m in messages)
    if provider == "openai":
        messages = [{"role": "user", "content": PROMPT}] + [m for t in turns[:upto] for m in _openai_chat(t)]
        return tools, _dumps({"role": "system", "content": system}) + tools + "".join(_dumps(m) for m in messages)
    items = [{"role": "user", "content": PROMPT}] + [m for t in turns[:upto] for m in _responses(t)]
    return tools, _dumps(system) + tools + "".join(_dumps(m) for m in items)


def _arguments(call: ToolCall) -> dict[str, Any]:
    return call.arguments if isinstance(call.arguments, dict) else json.loads(call.arguments)


def _anthropic(turn: Turn) -> list[dict[str, Any]]:
    assert turn.call is not None and turn.result is not None
    use = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": turn.call.id, "name": turn.call.name, "input": _arguments(turn.call)}],
    }
    answer = turn.answers.get("anthropic") or [{"type": "tool_result", "tool_use_id": turn.call.id, "content": turn.result.content}]
    return [use, {"role": "user", "content": answer}]


def _openai_chat(turn: Turn) -> list[dict[str, Any]]:
    assert turn.call is not None and turn.result is not None
    call = {"id": turn.call.id, "type": "function", "function": {"name": turn.call.name, "arguments": _dumps(_arguments(turn.call))}}
    return [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": turn.call.id, "content": turn.result.content},
    ]


def _responses(turn: Turn) -> list[dict[str, Any]]:
    assert turn.call is not None and turn.result is not None
    if "openai-responses" in turn.answers:  # selectTools is the client-run tool_search
        search = {"type": "tool_search_call", "call_id": turn.call.id, "execution": "client", "arguments": _arguments(turn.call)}
        return [search, *turn.answers["openai-responses"]]
    call = {"type": "function_call", "call_id": turn.call.id, "name": turn.call.name, "arguments": _dumps(_arguments(turn.call))}
    return [call, {"type": "function_call_output", "call_id": turn.call.id, "output": turn.result.content}]


def changed_bytes(before: str, after: str) -> int:
    """Bytes of `before` that are not a prefix of `after`: what a prefix cache loses between them."""
    a, b = before.encode(), after.encode()
    same = 0
    for x, y in zip(a, b):
        if x != y:
            break
        same += 1
    return len(a) - same


async def measure() -> dict[tuple[str, str], tuple[int, int]]:
    """(prefix bytes changed, tools bytes changed) per (mode, provider), summed over the run."""
    figures: dict[tuple[str, str], tuple[int, int]] = {}
    runs = {mode: await run(mode) for mode in MODES}
    for mode in MODES:
        for provider in PROVIDERS:
            # Chat Completions cannot defer a tool: there the deferred mode is fixed mode, calls included.
            system, turns = runs["fixed" if (mode, provider) == ("deferred", "openai") else mode]
            requests = [request_segments(provider, system, turns, k) for k in range(len(turns))]
            whole = sum(changed_bytes(a[1], b[1]) for a, b in zip(requests, requests[1:]))
            tools = sum(changed_bytes(a[0], b[0]) for a, b in zip(requests, requests[1:]))
            figures[mode, provider] = (whole, tools)
    return figures


# -- the same, from the bodies the real adapters sent ---------------------------------------------------

#: Each wire's request members in the order its provider caches them.
WIRE_ORDER = {"anthropic": ("tools", "system", "messages"), "openai-responses": ("instructions", "tools", "input")}


async def measure_wire() -> dict[tuple[str, str], tuple[int, int]]:
    """(prefix bytes changed, tools bytes changed) per (mode, provider) of an agent run on the real
    adapters against the loopback fakes, from the raw request bodies."""
    from dagtools.agent._agent import Agent
    from tests.fake_models import FakeServer, raw_member
    from tests.models.test_models import make_model

    figures: dict[tuple[str, str], tuple[int, int]] = {}
    for provider, order in WIRE_ORDER.items():
        for mode in ("dynamic", "deferred"):
            server = FakeServer("anthropic" if provider == "anthropic" else "responses")
            server.start()
            try:
                model = make_model(server)
                async with await _session() as session:
                    result = await Agent(session, model, tools=mode).run(PROMPT)  # type: ignore[arg-type]
                await model.aclose()
            finally:
                server.stop()
            assert result.reason == "saved" and server.problems == [], (result.message, server.problems)
            # The conversation is cached item by item: its closing bracket, which the next item moves, is left out.
            requests = [(raw_member(raw, "tools"), b"".join(raw_member(raw, key) for key in order)[:-1]) for raw in server.raw]
            whole = sum(changed_bytes(a[1].decode(), b[1].decode()) for a, b in zip(requests, requests[1:]))
            tools = sum(changed_bytes(a[0].decode(), b[0].decode()) for a, b in zip(requests, requests[1:]))
            figures[mode, provider] = (whole, tools)
    return figures


def github_deferred_list() -> None:
    """The deferred list of GitHub's public schema: how many tools and bytes, and how long it takes."""
    path = schema_path("github.schema.graphql")
    if path is None:
        figure("deferred_list_bytes[github, anthropic]", None)
        return
    from dagtools import compile_catalogue, load_schema
    from dagtools.executors._base import SchemaOnlyExecutor

    loaded = load_schema(path)
    for mutations in (False, True):
        catalogue = compile_catalogue(loaded.schema, mutations=mutations)
        session = Session(catalogue, SchemaOnlyExecutor(loaded.schema))
        started = time.perf_counter()
        listed = session.deferred_tools()
        rendered = len(_dumps(listed.render("anthropic")).encode())
        seconds = time.perf_counter() - started
        label = "with mutations" if mutations else "reads"
        figure(f"deferred_list_tools[github {label}]", len(listed.deferred))
        figure(f"deferred_list_tools_left_out[github {label}]", len(catalogue) - len(listed.deferred), "== 0")
        figure(f"deferred_list_bytes[github {label}, anthropic]", rendered)
        figure(f"deferred_list_seconds[github {label}]", seconds)


def main() -> int:
    figures = asyncio.run(measure())
    for (mode, provider), (whole, tools) in figures.items():
        defers = mode == "deferred" and provider != "openai"
        figure(f"prefix_bytes_changed[{mode}, {provider}]", whole, "== 0" if defers else None)
        target = "== 0" if defers else None
        if mode == "fixed":
            target = f"<= {figures['dynamic', provider][1]}"
        figure(f"tools_bytes_changed[{mode}, {provider}]", tools, target)
    for (mode, provider), (whole, tools) in asyncio.run(measure_wire()).items():
        figure(f"wire_prefix_bytes_changed[{mode}, {provider}]", whole, "== 0" if mode == "deferred" else None)
        figure(f"wire_tools_bytes_changed[{mode}, {provider}]", tools, "== 0" if mode == "deferred" else None)
    github_deferred_list()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
