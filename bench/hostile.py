"""What a hostile API server on loopback can cost one HttpExecutor call. Prints `figure: value` lines.

    python bench/hostile.py

- memory of a call answered with 200 MB (streamed, no Content-Length) under the default 16 MB limit:
  the tracemalloc peak, and the growth of the process's peak RSS over its RSS before the call;
- the longest a server trickling one byte a second (in the status line, or in the body) holds a call
  made with `timeout=2` and 3 retries.
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from dagtools import HttpExecutor  # noqa: E402
from dagtools._errors import ExecutorError  # noqa: E402
from tests.executors.test_http_bounds import flood, raw_server, trickle_body, trickle_head  # noqa: E402

QUERY = "{ potato { variety } }"


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _fail(executor: HttpExecutor) -> str:
    try:
        await executor.execute(QUERY)
    except ExecutorError as error:
        return str(error)
    finally:
        await executor.aclose()
    return "answered"


async def main() -> None:
    with raw_server(flood(200, announce=False)) as url:
        before = _rss_mb()
        await _fail(HttpExecutor(url))
        peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tracemalloc.start()
        await _fail(HttpExecutor(url))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"answer_200mb_tracemalloc_peak_mb: {peak / 2**20:.1f}")
    print(f"answer_200mb_rss_growth_mb: {peak_rss - before:.1f}")
    for behave in (trickle_head, trickle_body):
        with raw_server(behave) as url:
            started = time.monotonic()
            await _fail(HttpExecutor(url, timeout=2.0, retries=3, backoff=0.01))
            print(f"trickle_{behave.__name__.split('_')[1]}_hold_s_timeout_2: {time.monotonic() - started:.2f}")


if __name__ == "__main__":
    anyio.run(main)
