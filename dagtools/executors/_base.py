"""What every executor offers: run one document with variables, give back data and errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Executor", "Response", "SchemaOnlyExecutor", "format_error"]


@dataclass(frozen=True, kw_only=True)
class Response:
    """A GraphQL answer: `data` (possibly partial) and `errors` as the spec's JSON objects."""

    data: dict[str, Any] | None
    errors: list[dict[str, Any]] = field(default_factory=list)


@runtime_checkable
class Executor(Protocol):
    """Runs GraphQL documents. Raises ExecutorError only when the API could not answer at all."""

    async def execute(self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None) -> Response: ...

    async def aclose(self) -> None: ...


def format_error(error: dict[str, Any]) -> str:
    """One GraphQL error as a line a model can act on: its message and where it happened."""
    message = str(error.get("message") or "unknown error")
    path = error.get("path")
    if path:
        message += f" (at {'.'.join(str(p) for p in path)})"
    return message


class SchemaOnlyExecutor:
    """For a schema with no server behind it (an SDL or introspection file): its tools can be listed
    and selected, and every call says why nothing can run."""

    def __init__(self, origin: str = "this schema") -> None:
        self.origin = origin

    async def execute(self, document: str, variables: dict[str, Any] | None = None, *, operation_name: str | None = None) -> Response:
        from .._errors import ExecutorError

        raise ExecutorError(f"{self.origin} only describes the API, so nothing can run; point dagtools at the API's URL.")

    async def aclose(self) -> None:
        return None
