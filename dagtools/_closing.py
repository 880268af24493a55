"""Lifetimes as in httpx: whatever holds a resource (an executor's connections, a store's, a model
client's) closes it with `aclose()`, and is an async context manager that does so on the way out.

    async with HttpExecutor(url) as executor, get_model("openai:gpt-4.1") as model:
        ...

Executors and models refuse every use once closed (`ClosedError`), rather than quietly opening
again. Stores do not: `open_store("memory:")` hands every caller the same store, so one caller's
close must not stop the others.
"""

from __future__ import annotations

from typing import Self

from ._errors import ClosedError

__all__ = ["AsyncClosing"]


class AsyncClosing:
    """`async with` for a class with `aclose()`: entering gives the object, leaving closes it."""

    #: Set by an `aclose` that makes the object refuse later use (see `_check_open`).
    closed = False

    async def aclose(self) -> None:
        """Release what this object holds; nothing by default."""

    async def __aenter__(self) -> Self:
        self._check_open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedError(self._closed_message())

    def _closed_message(self) -> str:
        """What a use after `aclose` is told: what is closed and how to go on."""
        name = type(self).__name__
        return f"This {name} is closed; make a new {name} to go on."
