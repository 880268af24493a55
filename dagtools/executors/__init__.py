"""Executors send a GraphQL document with variables somewhere and bring back `data` and `errors`."""

from .base import Executor, Response
from .http import HttpExecutor
from .local import LocalExecutor

__all__ = ["Executor", "HttpExecutor", "LocalExecutor", "Response"]
