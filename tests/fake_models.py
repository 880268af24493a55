"""Loopback model servers speaking the real wire formats: OpenAI Chat Completions, the OpenAI
Responses API, Anthropic Messages and Gemini's generateContent.

Each is a small starlette app served by uvicorn on 127.0.0.1 in a background thread. It answers from
the fries script (one turn per assistant turn already in the conversation) and records every
request and every problem it sees in the request's shape, so tests can assert there were none. The
official SDKs are pointed at it with their base URL option. It can also misbehave the way real
servers do: error statuses first, a status every time (with a chosen error text), a slow answer, and
llama-cpp-python's HTTP 500 for an assistant message whose content is null.

Deferred tools are checked as the real APIs take them: on Anthropic a tool with `defer_loading` is
callable only once a `tool_reference` block in a `tool_result` named it, and at least one tool must be
shown; on the Responses API deferred functions need a `tool_search` tool, a client-run tool search is
answered with a `tool_search_output` that carries the revealed definitions, and the server's turn for
selectTools is a `tool_search_call`. `raw` keeps each request body as sent, for byte comparisons.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.servers import QuickServer

# The seed's task, with one turn of two parallel calls.
FRIES_TURNS: list[list[tuple[str, dict[str, Any]]]] = [
    [("selectTools", {"tools": ["Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake", "Potato_description"]})],
    [("Potato_rinse", {"Potato": "Potato#1", "sink": "Sink#1"}), ("Potato_description", {"Potato": "Potato#1"})],
    [("Potato_peel", {"Potato": "Potato#2"})],
    [("Potato_slice", {"Potato": "Potato#3", "shape": "STICKS"})],
    [("Oven_bake", {"Oven": "Oven#1", "item": "Potato#4"})],
    [("selectTools", {"tools": ["Fries_plate"]})],
    [("Fries_plate", {"Fries": "Fries#1", "plate": "Plate#1"})],
    [("save", {"fries": "Plate#2"})],
]

# Tools that must be offered at a turn (re-rendered after selectTools).
EXPECTED_TOOLS = {0: {"selectTools", "save"}, 1: {"Potato_rinse", "Potato_description"}, 6: {"Fries_plate"}}


@dataclass
class FakeServer:
    """A model server on loopback. `statuses` are answered (with an error body) before the script goes on."""

    provider: str  # "openai", "responses", "anthropic" or "gemini"
    turns: list[list[tuple[str, dict[str, Any]]]] = field(default_factory=lambda: list(FRIES_TURNS))
    expected: dict[int, set[str]] = field(default_factory=lambda: dict(EXPECTED_TOOLS))  # tools each turn must offer
    statuses: list[int] = field(default_factory=list)
    always_status: int | None = None
    error_text: str = ""  # the message of the error answers, when it matters
    delay: float = 0.0  # seconds before each answer
    delay_from: int = 1  # the first request (counted from 1) that waits `delay`: the earlier ones answer at once
    null_content_500: bool = False  # answer `"content": null` as llama-cpp-python does
    requests: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)  # each request body, byte for byte
    headers: list[dict[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    url: str = ""

    # -- the app ------------------------------------------------------------------------------------

    def app(self) -> Starlette:
        paths = {
            "openai": "/v1/chat/completions",
            "responses": "/v1/responses",
            "anthropic": "/v1/messages",
            "gemini": "/{version}/models/{call:path}",
        }
        return Starlette(routes=[Route(paths[self.provider], self._handle, methods=["POST"])])

    def _error(self, status: int, default: str) -> JSONResponse:
        # retry-after-ms keeps the SDKs' backoff short in tests; real OpenAI servers send it too.
        body = {"error": {"message": self.error_text or default, "type": "server_error" if status >= 500 else "invalid_request_error"}}
        if self.provider == "gemini":
            body = {"error": {"code": status, "message": self.error_text or default, "status": "UNAVAILABLE"}}
        return JSONResponse(body, status_code=status, headers={"retry-after-ms": "10"})

    async def _handle(self, request: Request) -> JSONResponse:
        raw = await request.body()
        body = json.loads(raw)
        self.raw.append(raw)
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.delay and len(self.requests) >= self.delay_from:
            await anyio.sleep(self.delay)
        if self.always_status is not None:
            return self._error(self.always_status, "invalid api key" if self.always_status in (401, 403) else "overloaded")
        if self.statuses:
            return self._error(self.statuses.pop(0), "overloaded")
        if self.provider == "openai":
            if self.null_content_500 and any(m.get("role") == "assistant" and m.get("content", "") is None for m in body["messages"]):
                return JSONResponse(
                    {"error": {"message": 'can only concatenate str (not "NoneType") to str', "type": "internal_server_error"}}, 500
                )
            return JSONResponse(self._openai(body, request))
        if self.provider == "responses":
            return JSONResponse(self._responses(body, request))
        if self.provider == "gemini":
            return JSONResponse(self._gemini(body, request))
        return JSONResponse(self._anthropic(body, request))

    def _problem(self, text: str) -> None:
        self.problems.append(f"request {len(self.requests)}: {text}")

    def _check_tools(self, turn: int, names: list[str]) -> None:
        if not names:
            self._problem("no tools were sent")
        missing = self.expected.get(turn, set()) - set(names)
        if missing:
            self._problem(f"turn {turn} lacks tools {sorted(missing)}")

    def _turn(self, turn: int) -> list[tuple[str, dict[str, Any]]]:
        return self.turns[turn] if turn < len(self.turns) else []

    def _check_calls(self, turn: int, visible: list[str]) -> None:
        """The script's calls this turn must be of tools the model can see (shown, or revealed)."""
        for name, _ in self._turn(turn):
            if name not in visible:
                self._problem(f"turn {turn} calls {name}, which the model cannot see (deferred and never revealed)")

    # -- OpenAI Chat Completions ----------------------------------------------------------------------

    def _openai(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        if request.headers.get("authorization") != "Bearer test-key":
            self._problem(f"authorization header is {request.headers.get('authorization')!r}")
        messages = body.get("messages", [])
        if not messages or messages[0].get("role") != "system":
            self._problem("the first message is not the system prompt")
        names = [t["function"]["name"] for t in body.get("tools", []) if t.get("type") == "function"]
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        self._check_tools(turn, names)
        if names and body.get("tool_choice") != "auto":
            self._problem(f"tool_choice is {body.get('tool_choice')!r} beside tools, not 'auto'")
        pending: list[str] = []
        for m in messages:
            if m.get("role") == "assistant":
                if "content" in m and m["content"] is None:
                    self._problem("an assistant message has content null")
                if pending:
                    self._problem(f"calls {pending} have no tool message")
                pending = [c["id"] for c in m.get("tool_calls") or []]
                for c in m.get("tool_calls") or []:
                    if not isinstance(c["function"]["arguments"], str):
                        self._problem("tool call arguments are not a JSON string")
            elif m.get("role") == "tool":
                if m.get("tool_call_id") not in pending:
                    self._problem(f"tool message for unknown call {m.get('tool_call_id')!r}")
                else:
                    pending.remove(m["tool_call_id"])
        if pending:
            self._problem(f"calls {pending} have no tool message")
        calls = [
            {"id": f"call_{turn}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(self._turn(turn))
        ]
        message: dict[str, Any] = {"role": "assistant", "content": None if calls else "Done."}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": f"chatcmpl-{turn}",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 100 + turn, "completion_tokens": 10, "total_tokens": 110 + turn},
        }

    # -- Anthropic Messages ---------------------------------------------------------------------------

    def _anthropic(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        # The key travels as x-api-key (older SDKs) or as a bearer token (anthropic 2.x).
        if request.headers.get("x-api-key") != "test-key" and request.headers.get("authorization") != "Bearer test-key":
            self._problem(f"no key: x-api-key is {request.headers.get('x-api-key')!r}")
        if not request.headers.get("anthropic-version"):
            self._problem("no anthropic-version header")
        if not isinstance(body.get("system"), str) or "Type#N" not in body["system"]:
            self._problem("the system prompt is not a top-level string")
        if not isinstance(body.get("max_tokens"), int):
            self._problem("max_tokens is missing")
        messages = body.get("messages", [])
        roles = [m.get("role") for m in messages]
        if "system" in roles or not roles or roles[0] != "user" or any(a == b for a, b in zip(roles, roles[1:])):
            self._problem(f"roles do not alternate from user: {roles}")
        tools = body.get("tools", [])
        if any("input_schema" not in t for t in tools):
            self._problem("a tool has no input_schema")
        names = [t.get("name") for t in tools]
        deferred = {t.get("name") for t in tools if t.get("defer_loading")}
        if tools and len(deferred) == len(tools):
            self._problem("every tool has defer_loading; at least one must be shown")
        if deferred and len(set(json.dumps(t.get("defer_loading")) for t in tools if "defer_loading" in t)) != 1:
            self._problem("defer_loading is not true")
        turn = roles.count("assistant")
        revealed: list[str] = []
        pending: list[str] = []
        for m in messages:
            blocks = m.get("content")
            if not isinstance(blocks, list):
                continue
            if m["role"] == "assistant":
                pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            else:
                results = [b for b in blocks if b.get("type") == "tool_result"]
                for b in results:
                    if b.get("tool_use_id") not in pending:
                        self._problem(f"tool_result for unknown tool_use {b.get('tool_use_id')!r}")
                    revealed += self._anthropic_result(b.get("content"), names)
                if pending and {b.get("tool_use_id") for b in results} != set(pending):
                    self._problem(f"tool_use {pending} not all answered in the next user turn")
                kinds = [b.get("type") for b in blocks]
                if results and kinds[: len(results)] != ["tool_result"] * len(results):
                    self._problem("a block comes before the turn's tool_result blocks")
                pending = []
        visible = [n for n in names if n not in deferred] + revealed
        self._check_tools(turn, visible)
        self._check_calls(turn, visible)
        calls = [
            {"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": name, "input": args} for i, (name, args) in enumerate(self._turn(turn))
        ]
        content = calls or [{"type": "text", "text": "Done."}]
        return {
            "id": f"msg_{turn}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "usage": {"input_tokens": 200 + turn, "output_tokens": 20},
        }

    def _anthropic_result(self, content: Any, names: list[str]) -> list[str]:
        """A tool_result's content: text, or blocks of text and tool references; the tools it reveals."""
        if isinstance(content, str):
            return []
        if not isinstance(content, list):
            self._problem(f"tool_result content is {type(content).__name__}, not text or blocks")
            return []
        revealed = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_reference":
                if block.get("tool_name") not in names:
                    self._problem(f"tool_reference to {block.get('tool_name')!r}, which is not in tools")
                revealed.append(block.get("tool_name"))
            elif kind != "text" or not isinstance(block.get("text"), str):
                self._problem(f"tool_result holds a block of type {kind!r}")
        return revealed

    # -- OpenAI Responses API ------------------------------------------------------------------------

    def _responses(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        if request.headers.get("authorization") != "Bearer test-key":
            self._problem(f"authorization header is {request.headers.get('authorization')!r}")
        if "Type#N" not in str(body.get("instructions")):
            self._problem("the system prompt is not in instructions")
        tools = body.get("tools", [])
        search = [t for t in tools if t.get("type") == "tool_search"]
        functions = [t for t in tools if t.get("type") != "tool_search"]
        if any(t.get("type") != "function" or "function" in t or t.get("strict") is not False for t in functions):
            self._problem("a tool is not a flat, non-strict function tool")
        if any(t.get("execution") != "client" or not isinstance(t.get("parameters"), dict) for t in search) or len(search) > 1:
            self._problem("the tool_search tool is not one client-run tool with parameters")
        deferred = {t.get("name") for t in functions if t.get("defer_loading") is True}
        if deferred and not search:
            self._problem("deferred functions were sent without a tool_search tool")
        if tools and body.get("tool_choice") != "auto":
            self._problem(f"tool_choice is {body.get('tool_choice')!r} beside tools")
        items = body.get("input", [])
        turn, pending, previous, revealed = 0, [], None, []
        for item in items:
            kind = item.get("type") or item.get("role")
            if kind in ("function_call", "tool_search_call"):
                if previous not in ("function_call", "tool_search_call"):
                    turn += 1
                    if pending:
                        self._problem(f"calls {pending} have no output")
                    pending = []
                pending.append(item["call_id"])
                if kind == "function_call" and not isinstance(item.get("arguments"), str):
                    self._problem("function_call arguments are not a JSON string")
                if kind == "tool_search_call" and (item.get("execution") != "client" or not isinstance(item.get("arguments"), dict)):
                    self._problem("a tool_search_call is not client-run with an arguments object")
            elif kind in ("function_call_output", "tool_search_output"):
                if item.get("call_id") not in pending:
                    self._problem(f"output for unknown call {item.get('call_id')!r}")
                else:
                    pending.remove(item["call_id"])
                for tool in item.get("tools", []) if kind == "tool_search_output" else []:
                    if tool.get("type") != "function" or not tool.get("name"):
                        self._problem(f"a tool_search_output holds {tool!r}, not a function definition")
                    revealed.append(tool.get("name"))
            elif kind == "assistant":
                turn += 1
            previous = kind
        if pending:
            self._problem(f"calls {pending} have no output")
        visible = (["selectTools"] if search else []) + [t.get("name") for t in functions if t.get("name") not in deferred] + revealed
        self._check_tools(turn, visible)
        self._check_calls(turn, visible)
        calls = [
            {"type": "tool_search_call", "id": f"ts_{turn}_{i}", "call_id": f"call_{turn}_{i}", "arguments": args, "execution": "client"}
            if name == "selectTools" and search
            else {
                "type": "function_call",
                "id": f"fc_{turn}_{i}",
                "call_id": f"call_{turn}_{i}",
                "name": name,
                "arguments": json.dumps(args),
            }
            for i, (name, args) in enumerate(self._turn(turn))
        ]
        text = {"type": "message", "id": f"msg_{turn}", "role": "assistant", "status": "completed"}
        text["content"] = [{"type": "output_text", "text": "Done.", "annotations": []}]
        return {
            "id": f"resp_{turn}",
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": body.get("model"),
            "output": [dict(c, status="completed") for c in calls] or [text],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {"input_tokens": 300 + turn, "output_tokens": 30, "total_tokens": 330 + turn},
        }

    # -- Gemini generateContent -----------------------------------------------------------------------

    def _gemini(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        if not request.url.path.endswith(":generateContent"):
            self._problem(f"posted to {request.url.path}")
        if request.headers.get("x-goog-api-key") != "test-key":
            self._problem(f"x-goog-api-key is {request.headers.get('x-goog-api-key')!r}")
        system = body.get("systemInstruction") or {}
        if "Type#N" not in json.dumps(system):
            self._problem("the system prompt is not in systemInstruction")
        contents = body.get("contents", [])
        roles = [c.get("role") for c in contents]
        if not roles or roles[0] != "user" or any(a == b for a, b in zip(roles, roles[1:])) or set(roles) - {"user", "model"}:
            self._problem(f"roles do not alternate from user: {roles}")
        declarations = [d for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
        # Google's JSON parser takes proto field names in either spelling; google-genai 3.x sends snake_case here.
        if any("parametersJsonSchema" not in d and "parameters_json_schema" not in d for d in declarations):
            self._problem("a function declaration has no parametersJsonSchema")
        mode = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}).get("mode")
        if declarations and mode != "AUTO":
            self._problem(f"function calling mode is {mode!r}")
        turn = roles.count("model")
        self._check_tools(turn, [d.get("name") for d in declarations])
        pending: list[tuple[str, str]] = []
        for content in contents:
            parts = content.get("parts", [])
            if content.get("role") == "model":
                calls = [p for p in parts if "functionCall" in p]
                if any(p.get("thoughtSignature") != "c2ln" for p in calls):
                    self._problem("a function call came back without its thoughtSignature")
                pending = [(p["functionCall"].get("id"), p["functionCall"]["name"]) for p in calls]
            else:
                answered = [(p["functionResponse"].get("id"), p["functionResponse"].get("name")) for p in parts if "functionResponse" in p]
                if any(not isinstance(p["functionResponse"].get("response"), dict) for p in parts if "functionResponse" in p):
                    self._problem("a functionResponse's response is not an object")
                if answered != pending:
                    self._problem(f"function calls {pending} answered with {answered}")
                pending = []
        parts = [
            {"functionCall": {"id": f"fc_{turn}_{i}", "name": name, "args": args}, "thoughtSignature": "c2ln"}
            for i, (name, args) in enumerate(self._turn(turn))
        ]
        return {
            "candidates": [{"content": {"role": "model", "parts": parts or [{"text": "Done."}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 400 + turn, "candidatesTokenCount": 40, "totalTokenCount": 440 + turn},
            "modelVersion": "fake-gemini",
        }

    # -- serving --------------------------------------------------------------------------------------

    def start(self) -> None:
        config = uvicorn.Config(self.app(), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self._server = QuickServer(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake model server did not start")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}" + ("/v1" if self.provider in ("openai", "responses") else "")

    def stop(self) -> None:
        self._server.stop()
        self._thread.join(timeout=10)


def raw_member(raw: bytes, key: str) -> bytes:
    """The bytes of top-level member `key` of a JSON object, exactly as they were sent."""
    text = raw.decode()
    decoder = json.JSONDecoder()

    def skip(i: int) -> int:
        while text[i] in " \t\r\n":
            i += 1
        return i

    i = skip(text.index("{") + 1)
    while text[i] != "}":
        name, i = decoder.raw_decode(text, i)
        i = skip(skip(i) + 1)  # past the colon
        _, end = decoder.raw_decode(text, i)
        if name == key:
            return text[i:end].encode()
        i = skip(end)
        i = skip(i + 1) if text[i] == "," else i
    raise KeyError(key)


import pytest  # noqa: E402


def _serve(provider: str):
    server = FakeServer(provider)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openai_server():
    yield from _serve("openai")


@pytest.fixture
def anthropic_server():
    yield from _serve("anthropic")


@pytest.fixture
def responses_server():
    yield from _serve("responses")


@pytest.fixture
def gemini_server():
    yield from _serve("gemini")
