"""What every bench shares: where the public schemas are, a real tokenizer, and figures checked
against their targets.

A figure prints as `name: value`, followed by its target and whether this run met it:

    call_overhead_vs_execute_ratio: 1.134  # target <= 1.2: met

A figure that could not be measured (a schema or the tokenizer is absent) prints why, and counts as
missed: a bench that measured nothing must not pass. `exit_status()` is 1 when any target was missed.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "exit_status", "figure", "schema_path", "tokens_o200k", "unmeasured"]

ROOT = Path(__file__).resolve().parents[1]

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {"<=": operator.le, ">=": operator.ge, "==": operator.eq}
_missed: list[str] = []


@cache
def _schemas_dir() -> Path | None:
    """`$DAGTOOLS_SCHEMAS`, else the nearest `shared/schemas` beside the checkout or one of its parents
    (a checkout at /work/main and a worktree at /work/wt/name both find /work/shared/schemas)."""
    given = os.environ.get("DAGTOOLS_SCHEMAS")
    if given:
        return Path(given)
    for parent in ROOT.parents:
        candidate = parent / "shared" / "schemas"
        if candidate.is_dir():
            return candidate
    return None


def schema_path(name: str) -> Path | None:
    """A public schema by file name, or None (with a printed reason) when it is not here."""
    found = _schemas_dir()
    path = found / name if found else None
    if path is None or not path.exists():
        where = f"in {found}" if found else "beside the checkout (set DAGTOOLS_SCHEMAS to its directory)"
        print(f"# {name} is not {where}", flush=True)
        return None
    return path


@cache
def _encoding() -> Any:
    try:
        import bpe_openai
    except ImportError:
        return None
    return bpe_openai.get_encoding("o200k_base")


def tokens_o200k(text: str) -> int | None:
    """Tokens in `text` by OpenAI's o200k_base table (bpe-openai, offline); None when it is not installed."""
    encoding = _encoding()
    return None if encoding is None else len(encoding.encode(text))


def figure(name: str, value: float | int | str | None, target: str | None = None) -> None:
    """Print one figure; with a target such as "<= 1.2", say whether it was met, and remember a miss."""
    if value is None:
        reason = "the tokenizer is not installed: pip install -e '.[bench]'" if "tokens" in name else "not measured"
        if target is None:
            print(f"# {name}: not measured: {reason}", flush=True)
        else:
            unmeasured(name, reason)
        return
    shown = f"{value:.3f}" if isinstance(value, float) else str(value)
    if target is None:
        print(f"{name}: {shown}", flush=True)
        return
    op, _, bound = target.partition(" ")
    met = _COMPARE[op](value, float(bound))
    if not met:
        _missed.append(name)
    print(f"{name}: {shown}  # target {target}: {'met' if met else 'MISSED'}", flush=True)


def unmeasured(name: str, reason: str) -> None:
    """A figure with a target that this run could not measure: it counts as missed."""
    _missed.append(name)
    print(f"# {name}: not measured: {reason}", flush=True)


def exit_status() -> int:
    """1 when any figure missed its target (or could not be measured), after saying which."""
    if _missed:
        print(f"# targets missed: {', '.join(dict.fromkeys(_missed))}", flush=True)
        return 1
    return 0
