"""Retrying transient HTTP failures, for every client dagtools has (API executor, model adapters).

Waits double from `first` up to `max_wait`, and are at least as long as a `Retry-After` header asks
(capped by `max_wait` too). Only `Retryable` failures are retried; anything else ends at once.
With a `deadline` (a `time.monotonic()` instant), a wait that would end past it is not started:
the last failure is raised at once, rather than after sleeping into a timeout that hides it.
"""

from __future__ import annotations

import email.utils
import logging
import time
from typing import Any

import anyio
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

__all__ = ["Retryable", "retry_after_seconds", "retrying"]

logger = logging.getLogger("dagtools")


class Retryable(Exception):
    """A failure worth another attempt; `retry_after` is what the server asked for, in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def retrying(attempts: int, *, first: float, max_wait: float, deadline: float | None = None) -> AsyncRetrying:
    """`async for attempt in retrying(...)`: at most `attempts` tries; the last failure is re-raised."""
    exponential = wait_exponential(multiplier=first, max=max_wait)

    def wait(state: Any) -> float:
        delay = exponential(state)
        error = state.outcome.exception() if state.outcome else None
        asked = getattr(error, "retry_after", None)
        return min(max(asked, delay), max_wait) if asked is not None else delay

    def stop(state: Any) -> bool:
        if state.attempt_number >= max(attempts, 1):
            return True
        return deadline is not None and time.monotonic() + (state.upcoming_sleep or 0.0) >= deadline

    def before_sleep(state: Any) -> None:
        error = state.outcome.exception() if state.outcome else None
        sleep = state.next_action.sleep if state.next_action else 0.0
        logger.warning("retrying after %s (attempt %d of %d, waiting %.1f s)", error, state.attempt_number, attempts, sleep)

    return AsyncRetrying(
        stop=stop, wait=wait, sleep=anyio.sleep, retry=retry_if_exception_type(Retryable), reraise=True, before_sleep=before_sleep
    )


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
