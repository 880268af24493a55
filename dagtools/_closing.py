"""Lifetimes as in httpx: whatever holds a resource (an executor's connections, a store's, a model
client's) closes it with `aclose()`, and is an async context manager that does so on the way out.

    async with HttpExecutor(url) as executor, open_store("sqlite:///s.db") as store:
        ...
"""

from __future__ import annotations

from typing import Self

__all__ = ["AsyncClosing"]


class AsyncClosing:
    """`async with` for a class with `aclose()`: entering gives the object, leaving closes it."""

    async def aclose(self) -> None:
        """Release what this object holds; nothing by default."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
