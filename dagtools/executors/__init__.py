"""Executors send a GraphQL document with variables somewhere and bring back `data` and `errors`."""

from ._base import Executor, Response
from ._http import HttpExecutor
from ._local import LocalExecutor

__all__ = ["Executor", "HttpExecutor", "LocalExecutor", "Response"]
