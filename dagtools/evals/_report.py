"""The eval's report: a table for the terminal (rich when installed), JSON lines, and the page."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._interrupts import write_whole
from ._stats import Attempt, Row

__all__ = ["COLUMNS", "cells", "print_table", "table_text", "write_lines"]

COLUMNS = ("task", "model", "tools", "success", "95% interval", "calls", "input tok", "output tok", "seconds", "commonest failure")


def cells(row: Row) -> list[str]:
    """One row as the table shows it: means per attempt, the interval in percent."""
    failure = f"{row.failure} ({row.failures}/{row.attempts})" if row.failure else "none"
    tokens = "" if row.tokens_counted_by == "model" else f" ({row.tokens_counted_by})"
    return [
        row.task,
        row.model,
        row.mode,
        f"{row.successes}/{row.attempts} {100 * row.rate:.0f}%",
        f"{100 * row.low:.0f}-{100 * row.high:.0f}%",
        f"{row.calls:.1f}",
        f"{row.input_tokens:.0f}{tokens}",
        f"{row.output_tokens:.0f}",
        f"{row.seconds:.2f}",
        failure,
    ]


def table_text(rows: Sequence[Row]) -> str:
    """The table as plain text, columns padded."""
    lines = [list(COLUMNS), *[cells(r) for r in rows]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def print_table(rows: Sequence[Row], stream: Any, *, title: str = "dagtools eval") -> None:
    """With rich on a terminal, a drawn table; otherwise (a pipe, a CI log, no rich) plain text."""
    if not getattr(stream, "isatty", lambda: False)():
        print(table_text(rows), file=stream)
        return
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(table_text(rows), file=stream)
        return
    table = Table(title=title)
    for column in COLUMNS:
        table.add_column(column, justify="right" if column in ("calls", "input tok", "output tok", "seconds") else "left")
    for row in rows:
        table.add_row(*cells(row), style=None if row.successes == row.attempts else "yellow" if row.successes else "red")
    Console(file=stream, highlight=False).print(table)


def write_lines(path: Path, rows: Sequence[Row], attempts: Sequence[Attempt], *, interrupted: str = "") -> None:
    """One JSON object a line: every attempt (`"kind": "attempt"`), then every row (`"kind": "row"`);
    for an eval stopped early, a last line `{"kind": "interrupted", "message", "attempts"}` saying why and
    how many attempts the rows count. Written whole or not at all."""
    items = [*(a.to_json() for a in attempts), *(r.to_json() for r in rows)]
    if interrupted:
        items.append({"kind": "interrupted", "message": interrupted, "attempts": len(attempts)})
    write_whole(path, "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items))
