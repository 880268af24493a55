"""A real HAProxy (Debian's, /usr/sbin/haproxy) on loopback in front of `dagtools mcp` workers, round-robin
with no session affinity, for the worker tests and the worker bench.

Every response carries `X-Served-By: NAME`, the worker that answered, so a test can see a client's calls
move between workers. The configuration is the one the Deployment page gives (`CONFIG`), with the
worker ports filled in.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.servers import free_port, wait_for_port

#: The configuration the Deployment page shows: round-robin per request, no stickiness; a worker that stops
#: accepting connections is taken out within a second (health checks every 300 ms), and a request whose
#: connection it refused is sent to another worker (`option redispatch`, `retries`); a request a worker
#: took and then died on is not sent again (it may have run). `timeout server` bounds a call, and how long
#: a listen stream may stay silent before HAProxy closes it (the client then listens again).
CONFIG = """\
global
    maxconn 4096

defaults
    mode http
    option redispatch
    retries 3
    timeout connect 2s
    timeout client 60s
    timeout server 60s

frontend mcp
    bind 127.0.0.1:{port}
    default_backend workers

backend workers
    balance roundrobin
    http-response set-header X-Served-By %[srv_name]
{servers}
"""
SERVER = "    server {name} 127.0.0.1:{port} check inter 300ms fall 1 rise 2"
#: For clients of the handshake era, whose session lives in the memory of the worker that answered
#: `initialize`: the worker that handed out an `Mcp-Session-Id` gets every request that carries it.
#: Keyed (2026-07-28) requests carry no such header and stay round-robin.
STICKY = """\
    stick-table type string len 128 size 100k expire 30m
    stick match req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)"""


class Unavailable(Exception):
    """HAProxy cannot start here; says why."""


class HAProxy:
    """HAProxy balancing `workers` (name to port); `.url` is the MCP endpoint clients use."""

    def __init__(self, workers: dict[str, int], path: str = "/mcp", *, sticky: bool = False) -> None:
        binary = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
        if binary is None:
            raise Unavailable("haproxy is not installed (.ci/run installs it with apt-get install haproxy)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self.dir = Path(tempfile.mkdtemp(prefix="dagtools-haproxy-"))
        config = self.dir / "haproxy.cfg"
        servers = "\n".join([*([STICKY] if sticky else []), *(SERVER.format(name=name, port=port) for name, port in workers.items())])
        config.write_text(CONFIG.format(port=self.port, servers=servers))
        checked = subprocess.run([binary, "-c", "-f", str(config)], capture_output=True, text=True, timeout=30)
        if checked.returncode != 0:
            raise Unavailable(f"haproxy refused its configuration: {checked.stdout[-500:]}{checked.stderr[-500:]}")
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=self.log, stderr=subprocess.STDOUT)
        try:
            wait_for_port(self.port, timeout=10, alive=lambda: self.process.poll() is None)
        except (RuntimeError, TimeoutError):
            self.stop()
            raise Unavailable(f"haproxy did not start: {self.tail()}") from None

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
