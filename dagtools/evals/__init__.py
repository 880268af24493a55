"""`dagtools eval`: how often a model succeeds on tasks over an API, per tool mode, with the figures
that say so (success with a Wilson interval, calls, tokens, time, the commonest failure)."""

from ._query import QueryToolset
from ._stats import wilson
from ._tasks import EvalTask, load_tasks

__all__ = ["EvalTask", "QueryToolset", "load_tasks", "wilson"]
