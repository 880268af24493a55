"""Serving one `McpToolServer` until the client or a signal stops it: over stdio, or streamable HTTP
under uvicorn. The schema is loaded first, outside the event loop that serves it."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio

from .._errors import ConfigError
from .._interrupts import INTERRUPTS
from ._banner import describe_server
from ._config import McpConfig
from ._server import McpToolServer
from .gate import check_exposure
from .transport import mark_invalid_text

__all__ = ["STOP_GRACE", "check_port_free", "listen", "serve_http", "serve_mcp", "serve_stdio", "stoppable_server"]


def serve_mcp(config: McpConfig, *, verbose: bool = False) -> None:
    """Serve the configured API over the configured transport, after the exposure check; `verbose`
    names every problem tolerated in the schema at start, not the first few."""
    listening = None
    if config.transport == "http":
        check_exposure(config)  # what the config itself refuses comes first, then what this machine's state does
        try:
            check_port_free(config.host, config.port)
        except ConfigError:
            _on_the_api_port(config.api_url, config.port)
            raise
    server = McpToolServer(config)
    if config.transport == "http":  # bound once the schema is loaded, before it is announced: --port 0 says the port it got
        listening = _bound(config.host, config.port)
        server.config = config.with_options(port=listening.getsockname()[1])
    print(describe_server(server, every_problem=verbose), file=sys.stderr, flush=True)  # stdout is the protocol in stdio mode
    gc.collect()
    gc.freeze()  # the schema and catalogue live as long as the process: later collections skip them
    if listening is not None:
        anyio.run(serve_http, server, listening)
    else:
        anyio.run(serve_stdio, server)


async def serve_stdio(server: McpToolServer) -> None:
    from mcp.server.stdio import stdio_server

    if sys.stdin is not None and sys.stdin.isatty():  # typed at a terminal: a client starts it, with its messages on stdin
        print(
            "dagtools mcp: waiting for an MCP client on stdin: an MCP client (Claude Desktop, an IDE) starts this "
            "command itself and speaks to it there. Press Ctrl-D to stop. To serve over HTTP instead, add "
            "--transport http --port 8000 and point the client at http://127.0.0.1:8000/mcp.",
            file=sys.stderr,
            flush=True,
        )
    try:
        await server.check_store()
        async with stdio_server(stdin=_checked_stdin()) as (read_stream, write_stream):
            await server.server.run(read_stream, write_stream, server.server.create_initialization_options())
    finally:
        await server.aclose()


async def serve_http(server: McpToolServer, listening: Any = None) -> None:
    """Serve over streamable HTTP, on `listening` (a bound socket) or else on the configured address."""
    from .transport import guarded_protocol

    c = server.config
    app = server.http_app()
    # Deadlines for reading requests and a cap on connections per address (`guarded_protocol`).
    http = stoppable_server(app, host=c.host, port=c.port, log_level="warning", lifespan="on", http=guarded_protocol(c))
    try:
        await server.check_store()
        if app.tokens is not None:  # an authorization server may come up later: said, not fatal
            trouble = await app.tokens.prepare()
            if trouble:
                print(f"dagtools mcp: {trouble} Until then, requests with a token are answered 503.", file=sys.stderr, flush=True)
        await http.serve(sockets=None if listening is None else [listening])
    finally:
        await server.aclose()
    if INTERRUPTS.stopped:
        print("dagtools mcp: stopped (Ctrl-C)", file=sys.stderr, flush=True)


def _bound(host: str, port: int) -> Any:
    """`listen(host, port)`, a port taken since `check_port_free` said as it says it."""
    try:
        return listen(host, port)
    except OSError:
        check_port_free(host, port)
        raise


def listen(host: str, port: int) -> Any:
    """A listening socket on host:port, as uvicorn would open it (address reuse on): bound before the
    server is announced, so `--port 0` (any free port) announces the port it got."""
    import socket

    listening = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind((host, port))
    listening.listen(2048)
    listening.set_inheritable(True)
    return listening


#: Seconds the requests under way get to finish once a server is told to stop (Ctrl-C); then they are
#: cut off, each answered 503.
STOP_GRACE = 1


def stoppable_server(app: Any, **options: Any) -> Any:
    """A uvicorn server for `app` that the command's first Ctrl-C (`INTERRUPTS`) stops: it stops
    accepting, gives the requests under way `STOP_GRACE` seconds, then cuts them off, answering each
    503 instead of logging a traceback. SIGTERM, and every signal where `INTERRUPTS` is not installed
    (a host's own process), stay uvicorn's: a graceful shutdown that waits for the requests under way."""
    import uvicorn

    class StoppableServer(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            if not INTERRUPTS.installed:
                with super().capture_signals():
                    yield
                return
            # SIGTERM (a service manager, a container stopping) stays uvicorn's graceful shutdown; it is
            # not raised again afterwards, as uvicorn does, since the command ends by returning.
            previous = signal.signal(signal.SIGTERM, self.handle_exit)
            try:
                with INTERRUPTS.on_stop(self._stop):
                    yield
            finally:
                signal.signal(signal.SIGTERM, previous)

        def _stop(self) -> None:
            self.config.timeout_graceful_shutdown = STOP_GRACE  # a person waiting, not a deployment draining
            self.should_exit = True  # read by uvicorn's loop every tenth of a second

    holder: list[Any] = []
    config = uvicorn.Config(_cut_off_answered(app, lambda: holder[0].should_exit), **options)
    server = StoppableServer(config)
    holder.append(server)
    _quiet_cancelling()
    return server


_CUT_OFF = b"The server stopped (Ctrl-C) before this request finished; send it again once the server is back.\n"


def _cut_off_answered(app: Any, stopping: Callable[[], bool]) -> Any:
    """`app`, answering 503 for a request cancelled because the server stops (uvicorn would log the
    cancellation as an application error, with its traceback, and answer 500)."""

    async def answered(scope: dict[str, Any], receive: Any, send: Any) -> None:
        started = ended = False

        async def sending(message: dict[str, Any]) -> None:
            nonlocal started, ended
            started = started or message.get("type") == "http.response.start"
            ended = ended or (message.get("type") == "http.response.body" and not message.get("more_body"))
            await send(message)

        try:
            await app(scope, receive, sending)
        except BaseException as error:
            if scope.get("type") != "http" or not stopping() or not _only_cancelled(error):
                raise
        else:  # the app may also give up on its own as the server stops (its streams closed), unanswered
            if scope.get("type") != "http" or not stopping() or ended:
                return
        with contextlib.suppress(Exception):
            if not started:
                headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(_CUT_OFF)).encode())]
                await send({"type": "http.response.start", "status": 503, "headers": [*headers, (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": _CUT_OFF})
            elif not ended:  # a stream (MCP's server-sent events): ended where it was
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        print(f"dagtools: a request under way ({scope.get('method')} {scope.get('path')}) was cut off by the stop", file=sys.stderr)

    return answered


def _only_cancelled(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return error.split(asyncio.CancelledError)[1] is None
    return isinstance(error, asyncio.CancelledError)


def _quiet_cancelling() -> None:
    """Drop the lines a stop makes others log about the requests it cuts off, which `_cut_off_answered`
    says once each: uvicorn's "Cancel N running task(s)" error, and the MCP SDK's warning that a
    cut-off request's stream took no last error answer."""
    import logging

    for name in ("uvicorn.error", "mcp.shared.jsonrpc_dispatcher"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _CutOffFilter) for f in logger.filters):
            logger.addFilter(_CutOffFilter())


class _CutOffFilter:
    def filter(self, record: Any) -> bool:
        text = str(record.msg)
        cut_off = text.startswith("Cancel %s running task(s)") or (INTERRUPTS.stopped and text.endswith("gave up: transport write blocked"))
        return not cut_off


class _CheckedLines:
    """The client's messages from stdin, one a line, each call's invalid text marked (`mark_invalid_text`)
    before the SDK parses it."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines

    def __aiter__(self) -> AsyncIterator[str]:
        return self._checked()

    async def _checked(self) -> AsyncIterator[str]:
        async for line in self._lines:
            marked = mark_invalid_text(line.encode())
            yield line if marked is None else marked.decode() + "\n"


def _checked_stdin() -> Any:
    """stdin as the SDK reads it (UTF-8, a bad byte replaced), with fd 0 pointed at the null device as
    the SDK's own reader does, so nothing the server runs reads the client's messages."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    text = io.TextIOWrapper(os.fdopen(private, "rb", closefd=False), encoding="utf-8", errors="replace")
    return _CheckedLines(anyio.wrap_file(text))


def check_port_free(
    host: str,
    port: int,
    *,
    perhaps: str = "another dagtools mcp",
    option: str = "--port (or port: in the config file); --port 0 takes any free one",
) -> None:
    """Bind the address as the HTTP server will (address reuse on, as uvicorn sets it) and let it go: a
    port another server holds is one line that says so, before the schema is loaded, not a start-up
    block followed by the server's own traceback. (Another process may still take it in between;
    then the server's error stands.) `perhaps` names who likely holds it, `option` how to choose another."""
    import errno
    import socket

    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            where = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
            if error.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"{where} is already in use: another server (perhaps {perhaps}) listens there. Stop it, "
                    f"or choose a free port with {option}."
                ) from None
            if error.errno in (errno.EACCES, errno.EPERM):
                raise ConfigError(
                    f"{where} may not be bound by this user (ports below 1024 need privileges). Choose a port above 1024 with --port."
                ) from None
            raise ConfigError(
                f"Cannot listen on {where}: {error.strerror or error}. Check --host: it must be an address of this machine."
            ) from None


def _on_the_api_port(api_url: str, port: int) -> None:
    """The port is taken by the API this server reads (`dagtools serve` and `dagtools mcp --transport
    http` both default to 8000): say that, since stopping it, as the general message advises, is wrong."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(api_url)
        api_port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return
    if api_port == port and parts.hostname in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
        raise ConfigError(
            f"Port {port} is where the API this server reads listens ({api_url}): serve MCP on another port, "
            f"such as --port {port + 1} (or port: in the config file)."
        ) from None
