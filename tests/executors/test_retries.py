"""Retries shared by the API executor and the model adapters."""

from __future__ import annotations

import time

import pytest

from dagtools._retries import Retryable, retry_after_seconds, retrying


async def test_waits_at_least_what_retry_after_asks_and_stops_after_the_attempts():
    tries = 0
    start = time.monotonic()
    with pytest.raises(Retryable):
        async for attempt in retrying(3, first=0.001, max_wait=5):
            with attempt:
                tries += 1
                raise Retryable("busy", retry_after=0.15)
    assert tries == 3
    assert time.monotonic() - start >= 0.3


async def test_other_errors_are_not_retried():
    tries = 0
    with pytest.raises(ValueError):
        async for attempt in retrying(5, first=0.001, max_wait=1):
            with attempt:
                tries += 1
                raise ValueError("bad request")
    assert tries == 1


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: no wait
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
