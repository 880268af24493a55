"""`dagtools mcp` workers behind a round-robin load balancer: calls/s and p99 with 1 and with 2 workers on one store.

For each count of workers: that many `dagtools mcp --transport http` processes (the kitchen example, fixed
tools, as in bench/mcp_load.py) on one store, behind a real HAProxy (tests/haproxy.py: the configuration
the Deployment page gives, round-robin per request, no session affinity). Both counts go through HAProxy,
so the balancer's own cost is in both. The clients are bench/mcp_load.py's: official MCP clients spread
over `--processes` client processes, each session named by a key, opened, then all making `--calls` calls
together; a session's calls land on every worker in turn.

    python bench/mcp_workers.py [--sessions 200] [--calls 10] [--workers 1,2] [--store redis|sqlite|cluster] [--processes 4]

The store: a real redis-server started here (default), a SQLite file, or a real Redis Cluster of 3
primaries and 3 replicas (tests/redis_cluster.py). Per count of workers: calls/s, p50 and p99 of one call,
errors. Targets: 0 errors; with 2 workers, calls/s >= 0.5x that of 1 worker. On a machine of 2 cores a
second worker gains nothing (client processes, HAProxy, the store and the workers share the two cores),
and round robin costs: a worker that did not make a session's previous call catches up with the store
(the changes saved since it last matched it) before the next, which with two workers is every call.
The target is that this does not collapse, not that it scales here. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # not bench/, whose mcp.py would hide the MCP SDK

from bench._figures import exit_status, figure, unmeasured  # noqa: E402
from bench.mcp_load import DAGTOOLS_CALL, Outcome, Server, dagtools_server, measure  # noqa: E402
from tests.redis_cluster import start_redis_server  # noqa: E402


def store_url(kind: str) -> tuple[str, Any] | None:
    """The store's URL and what to stop afterwards, or None (with a printed reason) when it cannot start."""
    if kind == "sqlite":
        return f"sqlite:///{tempfile.mkdtemp(prefix='dagtools-workers-')}/sessions.sqlite3", None
    if kind == "cluster":
        from tests.redis_cluster import RedisCluster, Unavailable

        try:
            cluster = RedisCluster()
        except Unavailable as why:
            print(f"# no Redis Cluster: {why}", flush=True)
            return None
        return cluster.url, cluster
    found = start_redis_server()
    if found is None:
        print("# redis-server is not installed (apt-get install redis-server)", flush=True)
    return found


def report(workers: int, outcome: Outcome) -> float:
    done = len(outcome.latencies)
    rate = done / outcome.seconds if outcome.seconds else 0.0
    figure(f"mcp_workers_calls_per_s[{workers}]", rate)
    figure(f"mcp_workers_p50_ms[{workers}]", outcome.percentile(0.5) * 1000)
    figure(f"mcp_workers_p99_ms[{workers}]", outcome.percentile(0.99) * 1000)
    figure(f"mcp_workers_errors[{workers}]", outcome.errors, "== 0")
    if outcome.first_error:
        print(f"#   first error: {outcome.first_error}", flush=True)
    return rate


def run(sessions: int, calls: int, counts: list[int], kind: str, processes: int) -> None:
    from tests.haproxy import HAProxy, Unavailable

    found = store_url(kind)
    if found is None:
        unmeasured("mcp_workers_calls_ratio", f"the {kind} store cannot start here")
        return
    url, store = found
    rates: dict[int, float] = {}
    try:
        for count in counts:
            workers: list[Server] = []
            proxy = None
            try:
                workers = [dagtools_server(url) for _ in range(count)]
                try:
                    proxy = HAProxy({f"w{n}": worker.port for n, worker in enumerate(workers, 1)})
                except Unavailable as why:
                    unmeasured("mcp_workers_calls_ratio", str(why))
                    return
                print(f"# {count} worker(s) behind HAProxy, {sessions} sessions x {calls} calls, store {kind}", flush=True)
                rates[count] = report(count, measure(proxy.url, sessions, calls, DAGTOOLS_CALL, True, processes))
            finally:
                if proxy is not None:
                    proxy.stop()
                for worker in workers:
                    worker.stop()
    finally:
        if store is not None:
            if hasattr(store, "terminate"):
                store.terminate()
                store.wait(10)
            else:
                store.stop()
    if 1 in rates and 2 in rates and rates[1]:
        figure("mcp_workers_calls_ratio[2/1]", rates[2] / rates[1], ">= 0.5")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200, help="concurrent sessions (default 200)")
    parser.add_argument("--calls", type=int, default=10, help="calls each session makes once all are open (default 10)")
    parser.add_argument("--workers", default="1,2", help="counts of workers to measure (default 1,2)")
    parser.add_argument("--store", default="redis", choices=["redis", "sqlite", "cluster"], help="the store (default redis)")
    parser.add_argument("--processes", type=int, default=4, help="client processes the sessions are spread over (default 4)")
    options = parser.parse_args()
    run(options.sessions, options.calls, [int(n) for n in options.workers.split(",")], options.store, max(1, options.processes))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
