"""Loopback model servers speaking the OpenAI Chat Completions and Anthropic Messages wire formats.

Each is a small starlette app served by uvicorn on 127.0.0.1 in a background thread. It answers from
the fries script (one turn per assistant message already in the conversation) and records every
request and every problem it sees in the request's shape, so tests can assert there were none.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

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

    provider: str  # "openai" or "anthropic"
    turns: list[list[tuple[str, dict[str, Any]]]] = field(default_factory=lambda: list(FRIES_TURNS))
    statuses: list[int] = field(default_factory=list)
    always_status: int | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    url: str = ""

    # -- the app ------------------------------------------------------------------------------------

    def app(self) -> Starlette:
        path = "/v1/chat/completions" if self.provider == "openai" else "/v1/messages"
        return Starlette(routes=[Route(path, self._handle, methods=["POST"])])

    async def _handle(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.always_status is not None:
            return JSONResponse({"error": {"message": "invalid api key", "type": "authentication_error"}}, status_code=self.always_status)
        if self.statuses:
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=self.statuses.pop(0))
        if self.provider == "openai":
            return JSONResponse(self._openai(body, request))
        return JSONResponse(self._anthropic(body, request))

    def _problem(self, text: str) -> None:
        self.problems.append(f"request {len(self.requests)}: {text}")

    def _check_tools(self, turn: int, names: list[str]) -> None:
        if not names:
            self._problem("no tools were sent")
        missing = EXPECTED_TOOLS.get(turn, set()) - set(names)
        if missing:
            self._problem(f"turn {turn} lacks tools {sorted(missing)}")

    def _turn(self, turn: int) -> list[tuple[str, dict[str, Any]]]:
        return self.turns[turn] if turn < len(self.turns) else []

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
        pending: list[str] = []
        for m in messages:
            if m.get("role") == "assistant":
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
        import json

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
        if request.headers.get("x-api-key") != "test-key":
            self._problem(f"x-api-key is {request.headers.get('x-api-key')!r}")
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
        turn = roles.count("assistant")
        self._check_tools(turn, [t.get("name") for t in tools])
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
                    if not isinstance(b.get("content"), str):
                        self._problem("tool_result content is not text")
                if pending and {b.get("tool_use_id") for b in results} != set(pending):
                    self._problem(f"tool_use {pending} not all answered in the next user turn")
                pending = []
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

    # -- serving --------------------------------------------------------------------------------------

    def start(self) -> None:
        config = uvicorn.Config(self.app(), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake model server did not start")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}" + ("/v1" if self.provider == "openai" else "")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


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
