"""Real Redis on loopback for the store tests and the benches: one redis-server (`start_redis_server`),
or a Redis Cluster of 3 primaries and 3 replicas (`RedisCluster`).

Six `redis-server --cluster-enabled yes` processes on free ports, joined by
`redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`. `cluster-node-timeout` is 1 s, so a
killed primary's replica takes over within a few seconds, and `cluster-require-full-coverage no`, so the
other primaries serve their slots meanwhile (as the Deployment page advises). Nothing is written to disk but each node's
cluster config file, in a temporary directory removed at `stop()`.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from tests.servers import free_port, wait_for_port

#: How long a primary may stay silent before the cluster counts it failed, in ms (Redis's default is 15,000).
NODE_TIMEOUT_MS = 1000


def start_redis_server(port: int | None = None) -> tuple[str, subprocess.Popen[bytes]] | None:
    """One redis-server on loopback (`port`, else a free one), saving nothing to disk, once it accepts
    connections: its URL and process (the caller terminates it), or None where redis-server is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    port = port or free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, alive=lambda: process.poll() is None)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return f"redis://127.0.0.1:{port}/0", process


class Unavailable(Exception):
    """The cluster cannot start here (no redis-server or redis-cli, or a node that would not start); says why."""


class RedisCluster:
    """3 primaries, each with `replicas` replicas (1, or 0 for a cluster that has none)."""

    def __init__(self, replicas: int = 1) -> None:
        server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
        if server is None or cli is None:
            raise Unavailable("redis-server and redis-cli are not installed (.ci/run installs redis-server with apt-get)")
        self.cli = cli
        self.dir = Path(tempfile.mkdtemp(prefix="dagtools-cluster-"))
        self.ports = _ports(3 * (1 + replicas))
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        try:
            for port in self.ports:
                self.processes[port] = self._start(server, port)
            for port in self.ports:
                wait_for_port(port, alive=lambda p=port: self.processes[p].poll() is None)
            nodes = [f"127.0.0.1:{port}" for port in self.ports]
            made = subprocess.run(
                [cli, "--cluster", "create", *nodes, "--cluster-replicas", str(replicas), "--cluster-yes"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            if made.returncode != 0:
                raise Unavailable(f"redis-cli --cluster create failed: {made.stdout[-500:]}{made.stderr[-500:]}")
            self.wait_ok(60)
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """The store URL naming the cluster by its nodes: a client starting while one is down finds the cluster through another."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.ports)

    def _start(self, server: str, port: int) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                server,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                str(self.dir / f"nodes-{port}.conf"),
                "--cluster-node-timeout",
                str(NODE_TIMEOUT_MS),
                "--dir",
                str(self.dir),
                "--save",
                "",
                "--appendonly",
                "no",
                "--cluster-require-full-coverage",  # the other primaries serve on while one fails over
                "no",
                "--repl-diskless-sync-delay",  # a replica syncs at once, not after Redis's default 5 s
                "0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def ask(self, port: int, *command: str) -> str:
        done = subprocess.run([self.cli, "-p", str(port), *command], capture_output=True, text=True, timeout=10)
        return done.stdout

    def live(self) -> list[int]:
        return [port for port, process in self.processes.items() if process.poll() is None]

    def primaries(self) -> list[int]:
        """The ports of the live primaries, as a live node sees the cluster."""
        seen = self.ask(self.live()[0], "cluster", "nodes")
        ports = []
        for line in seen.splitlines():
            fields = line.split()
            if len(fields) > 2 and "master" in fields[2] and "fail" not in fields[2]:
                ports.append(int(fields[1].split("@")[0].rsplit(":", 1)[1]))
        return sorted(p for p in ports if p in self.live())

    def slots(self, port: int) -> list[range]:
        """The slots the primary on `port` serves, as a live node sees the cluster."""
        found = []
        for line in self.ask(self.live()[0], "cluster", "nodes").splitlines():
            fields = line.split()
            if f":{port}@" in fields[1]:
                for served in fields[8:]:
                    low, _, high = served.partition("-")
                    if low.isdigit():
                        found.append(range(int(low), int(high or low) + 1))
        return found

    def serves(self, port: int, name: str) -> bool:
        """Whether the primary on `port` serves the slot of the key `name`."""
        from redis.crc import key_slot

        slot = key_slot(name.encode())
        return any(slot in served for served in self.slots(port))

    def wait_ok(self, seconds: float) -> None:
        """Until every live node says the cluster is whole (every slot served), they agree on 3 primaries,
        and every live replica has its primary's data (its link is up)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            whole = all("cluster_state:ok" in self.ask(p, "cluster", "info") for p in self.live()) and len(self.primaries()) == 3
            replicas = [self.ask(p, "info", "replication") for p in self.live()]
            synced = all("master_link_status:up" in r for r in replicas if "role:slave" in r)
            if whole and synced:
                return
            time.sleep(0.1)
        raise Unavailable(f"the Redis Cluster on ports {self.ports} did not become ready in {seconds:.0f} s")

    def promoted_after(self, since: float, timeout: float = 30) -> float:
        """Seconds from `since` (a `time.monotonic()`) until three live primaries serve again: a killed
        primary's replica promoted."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.primaries()) == 3:
                return time.monotonic() - since
            time.sleep(0.05)
        raise Unavailable(f"no replica was promoted in {timeout:.0f} s")

    def kill(self, port: int) -> None:
        self.processes[port].send_signal(signal.SIGKILL)
        self.processes[port].wait(10)

    def flush(self) -> None:
        for port in self.primaries():
            self.ask(port, "flushall")

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _ports(count: int) -> list[int]:
    """Free loopback ports whose cluster bus port (the port + 10,000) is free too, so below 55,536."""
    import random
    import socket

    found: list[int] = []
    while len(found) < count:
        port = random.randrange(20000, 40000)
        try:
            for each in (port, port + 10000):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", each))
        except OSError:
            continue
        if port not in found:
            found.append(port)
    return found
