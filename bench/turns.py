"""Requests per model turn and document size per chain length, over real HTTP on 127.0.0.1.

    python bench/turns.py

Figures: `requests_per_turn_of_N_reads` (target 1) and `document_chars_at_chain_K_with_identity`
(target: the same at every K, so `document_chars_growth_with_identity` is 1).
Served by uvicorn through tests/servers.py; falls back to in-process execution where that is absent.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from _figures import exit_status, figure  # noqa: E402

from dagtools import Dialect, LocalExecutor, Session, ToolCall, compile_catalogue  # noqa: E402
from examples.relay.api import make_schema  # noqa: E402

__all__ = ["run_http_bench"]


class Counting:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.documents: list[str] = []

    async def execute(self, document: str, variables: dict[str, Any] | None = None, **options: Any) -> Any:
        self.documents.append(document)
        return await self.inner.execute(document, variables, **options)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _executor(stack: ExitStack, api: Any) -> tuple[Any, str]:
    try:
        from dagtools.executors._http import HttpExecutor
        from tests.servers import serve_schema
    except ImportError:
        return LocalExecutor(api), "in-process"
    url, _ = stack.enter_context(serve_schema(api))
    return HttpExecutor(url), "http"


class _ChainsOnly(Dialect):
    """The same API with identity switched off: every object is reached by its whole chain."""

    def identity(self, type_name: str) -> None:
        return None


async def _session(stack: ExitStack, *, identity: bool = True) -> tuple[Session, Counting, str]:
    api = make_schema()
    inner, transport = _executor(stack, api)
    counting = Counting(inner)
    dialect = None if identity else _ChainsOnly(name="plain", schema=api._schema)  # type: ignore[arg-type]
    catalogue = compile_catalogue(api._schema, dialect=dialect)  # type: ignore[arg-type]
    session = Session(catalogue, counting)
    session.select(catalogue.names())
    return session, counting, transport


async def requests_per_turn(reads: int = 5) -> tuple[int, str]:
    with ExitStack() as stack:
        session, counting, transport = await _session(stack)
        await session.call_tool(ToolCall(name="Query_repository", arguments={"name": "engine"}))
        page = await session.call_tool(ToolCall(name="Repository_issues", arguments={"first": reads}))
        ids = page.value["result"]
        counting.documents.clear()
        turn = [
            ToolCall(name="Issue_title", arguments={"Issue": ids[i % len(ids)]})
            if i % 2 == 0
            else ToolCall(name="Issue_author", arguments={"Issue": ids[i % len(ids)]})
            for i in range(reads)
        ]
        results = await session.call_tools(turn)
        assert not any(r.is_error for r in results), results
        await counting.aclose()
        return len(counting.documents), transport


async def document_sizes(lengths: tuple[int, ...] = (2, 10, 20), *, identity: bool = True) -> dict[int, int]:
    """Document length at the K-th call of a chain Repository.issue -> Issue.repository -> ..."""
    with ExitStack() as stack:
        session, counting, _ = await _session(stack, identity=identity)
        await session.call_tool(ToolCall(name="Query_repository", arguments={"name": "engine"}))
        sizes: dict[int, int] = {}
        for k in range(1, max(lengths) + 1):
            name, arguments = ("Repository_issue", {"number": 1}) if k % 2 else ("Issue_repository", {})
            result = await session.call_tool(ToolCall(name=name, arguments=arguments))
            assert not result.is_error, result.value
            if k in lengths:
                sizes[k] = len(counting.documents[-1])
        await counting.aclose()
        return sizes


def run_http_bench() -> None:
    for reads in (5, 20):
        requests, transport = asyncio.run(requests_per_turn(reads))
        figure(f"requests_per_turn_of_{reads}_reads", requests, "== 1")
    figure("http_bench_transport", transport)
    sizes = asyncio.run(document_sizes())
    for k, size in sizes.items():
        figure(f"document_chars_at_chain_{k}_with_identity", size)
    figure("document_chars_growth_with_identity", max(sizes.values()) / min(sizes.values()), "<= 1")
    for k, size in asyncio.run(document_sizes(identity=False)).items():
        figure(f"document_chars_at_chain_{k}_without_identity", size)


if __name__ == "__main__":
    run_http_bench()
    sys.exit(exit_status())
