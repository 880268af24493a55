"""The figures of an eval: per task, model and tool mode, how often it succeeded and what it cost."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Attempt", "Row", "summarise", "wilson"]

#: The normal quantile for a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson(successes: int, attempts: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a success rate: honest at 0 and N successes, where the plain
    normal interval collapses to a point. (0, 1) when there were no attempts."""
    if attempts <= 0:
        return 0.0, 1.0
    p = successes / attempts
    denominator = 1 + z * z / attempts
    centre = (p + z * z / (2 * attempts)) / denominator
    half = z * math.sqrt(p * (1 - p) / attempts + z * z / (4 * attempts * attempts)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One attempt: whether every check passed, the first failure otherwise, and what it took."""

    task: str
    model: str
    mode: str
    number: int
    ok: bool
    failure: str = ""
    reason: str = ""
    calls: int = 0
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_counted_by: str = "model"
    seconds: float = 0.0
    script: str = ""
    trace: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": "attempt", **self.__dict__}


@dataclass(frozen=True, kw_only=True)
class Row:
    """The attempts of one task by one model in one tool mode, summed up."""

    task: str
    model: str
    mode: str
    attempts: int
    successes: int
    low: float
    high: float
    calls: float
    input_tokens: float
    output_tokens: float
    tokens_counted_by: str
    seconds: float
    failure: str
    failures: int

    @property
    def rate(self) -> float:
        return self.successes / self.attempts if self.attempts else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"kind": "row", **self.__dict__, "rate": self.rate}


def summarise(attempts: Sequence[Attempt]) -> list[Row]:
    """One row per task, model and mode, in the order they first appear. Calls, tokens and seconds
    are means per attempt; `failure` is the commonest failure and `failures` how often it happened."""
    groups: dict[tuple[str, str, str], list[Attempt]] = {}
    for attempt in attempts:
        groups.setdefault((attempt.task, attempt.model, attempt.mode), []).append(attempt)
    rows = []
    for (task, model, mode), group in groups.items():
        n = len(group)
        successes = sum(a.ok for a in group)
        low, high = wilson(successes, n)
        failures = Counter(a.failure for a in group if not a.ok)
        failure, count = failures.most_common(1)[0] if failures else ("", 0)
        counters = sorted({a.tokens_counted_by for a in group})
        rows.append(
            Row(
                task=task,
                model=model,
                mode=mode,
                attempts=n,
                successes=successes,
                low=low,
                high=high,
                calls=sum(a.calls for a in group) / n,
                input_tokens=sum(a.input_tokens for a in group) / n,
                output_tokens=sum(a.output_tokens for a in group) / n,
                tokens_counted_by="+".join(counters),
                seconds=sum(a.seconds for a in group) / n,
                failure=failure,
                failures=count,
            )
        )
    return rows
