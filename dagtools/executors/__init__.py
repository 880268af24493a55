"""Executors send a GraphQL document with variables somewhere and bring back `data` and `errors`."""

import typing as _typing

from .._lazy import lazy_exports as _lazy_exports

# Imported on first use: a start served from the compiled cache (which reads `_urls` only) never
# imports httpx or graphql-core.
__getattr__, __dir__ = _lazy_exports(
    __name__,
    {"Executor": "._base", "Response": "._base", "HttpExecutor": "._http", "LocalExecutor": "._local"},
)

if _typing.TYPE_CHECKING:
    from ._base import Executor, Response
    from ._http import HttpExecutor
    from ._local import LocalExecutor

__all__ = ["Executor", "HttpExecutor", "LocalExecutor", "Response"]
