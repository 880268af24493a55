"""An executor wrapper that records every document sent, so tests can count requests and sizes."""

from __future__ import annotations

from typing import Any

from dagtools.executors._base import Executor, Response


class RecordingExecutor:
    """Passes documents on to `inner` and keeps each one with its variables."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.sent: list[tuple[str, dict[str, Any]]] = []

    @property
    def documents(self) -> list[str]:
        return [text for text, _ in self.sent]

    async def execute(self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None) -> Response:
        self.sent.append((document, dict(variables or {})))
        return await self.inner.execute(document, variables, operation_name=operation_name)

    async def aclose(self) -> None:
        await self.inner.aclose()
