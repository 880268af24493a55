"""What `dagtools mcp` tells the person who runs it, launched as they launch it: at a terminal, with an
API that is not up, and when an HTTP client gives up half way through a request (over a raw socket,
which unlike the official client can misbehave on purpose)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tests.mcpserver.test_mcp import DAGTOOLS, ROOT  # noqa: E402
from tests.mcpserver.test_mcp_connections import closed_within, connect, server  # noqa: E402
from tests.mcpserver.test_mcp_url import MCP_YAML, subprocess_env  # noqa: E402
from tests.servers import free_port  # noqa: E402

WAITING = "waiting for an MCP client on stdin"


def read_until(stream: int, text: str, seconds: float) -> str:
    """What arrives on the file descriptor `stream` until `text` has (or `seconds` pass)."""
    seen, deadline = b"", time.monotonic() + seconds
    while text.encode() not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.2)
        if ready:
            chunk = os.read(stream, 4096)
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


def test_at_a_terminal_it_says_it_waits_for_a_client_on_stdin(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [DAGTOOLS, "mcp", "--config", MCP_YAML],
        cwd=str(ROOT),
        env=subprocess_env(tmp_path),
        stdin=terminal,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    os.close(terminal)
    try:
        assert process.stderr is not None
        said = read_until(process.stderr.fileno(), "--transport http", 60)
        assert WAITING in said and "--transport http" in said and "Ctrl-D" in said, said
    finally:
        os.write(controller, b"\x04")  # Ctrl-D: the end of input, as the message says
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        os.close(controller)
        process.stderr.close()  # type: ignore[union-attr]


def test_started_by_a_client_it_says_nothing_of_waiting(tmp_path: Path) -> None:
    done = subprocess.run(
        [DAGTOOLS, "mcp", "--config", MCP_YAML],
        cwd=str(ROOT),
        env=subprocess_env(tmp_path),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "dagtools mcp: serving" in done.stderr and WAITING not in done.stderr, done.stderr


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_api_on_this_machine_that_refuses_the_connection_fails_at_once(tmp_path: Path, transport: str) -> None:
    url = f"http://127.0.0.1:{free_port()}/graphql"  # nothing listens there
    extra = ["--transport", "http", "--port", str(free_port())] if transport == "http" else []
    start = time.monotonic()
    done = subprocess.run(
        [DAGTOOLS, "mcp", url, *extra], cwd=str(ROOT), env=subprocess_env(tmp_path), input="", capture_output=True, text=True, timeout=60
    )
    took = time.monotonic() - start
    assert done.returncode == 2, done.stderr
    assert "connection was refused" in done.stderr and "not retried" in done.stderr, done.stderr
    assert "times)" not in done.stderr and "retrying" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    # Start-up alone takes a second or two on a busy machine; four retries added about 7 s more.
    assert took < 6, f"{took:.1f} s"


def test_a_body_cut_at_the_deadline_is_one_line_in_the_log(tmp_path: Path) -> None:
    mcp = server(tmp_path, body_timeout=1)
    with mcp:
        for _ in range(2):
            sock = connect(mcp.port)
            head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
            sock.sendall(head.encode() + b'{"jsonrpc":')
            took, _ = closed_within(sock, 5)
            assert took < 2.5, took
            sock.close()
        time.sleep(0.3)
    log = mcp.log
    lines = [line for line in log.splitlines() if "did not all arrive" in line]
    assert len(lines) == 2 and "127.0.0.1" in lines[0] and "nothing was run" in lines[0], log
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log


def test_a_body_past_the_limit_is_still_refused_with_413(tmp_path: Path) -> None:
    """The gate reads a request's body before the SDK does (to find invalid text): never past the SDK's limit."""
    import httpx

    def six_mib() -> Iterator[bytes]:
        for _ in range(6):
            yield b" " * 1024 * 1024

    with server(tmp_path) as mcp:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        refused = httpx.post(mcp.url, content=six_mib(), headers=headers, timeout=30)
        assert refused.status_code == 413, refused.text
