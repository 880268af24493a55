"""The eval as one HTML page: a plot of each row's success rate with its Wilson interval, and the table.

The plot is inline SVG drawn here: no script, nothing fetched, so the page opens from a CI artifact
offline, and nothing a model or an API wrote can run in it (every text is escaped). Each row is a bar
from 0 to its success rate, a whisker across its 95% interval, and a dashed line at the threshold
when one was given; bars are coloured by tool mode, so modes compare at a glance, and the legend
names the modes in the order their bars first appear. Each row of the table links its attempts'
traces and scripts, relative to the page (so the folder can be moved or unpacked anywhere), failing
attempts first: a rate leads straight to the runs behind it.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from .._interrupts import write_whole
from ._report import COLUMNS, cells
from ._stats import Attempt, Row

__all__ = ["to_html", "write_page"]

_MODE_COLOURS = {"fixed": "#8250df", "dynamic": "#0969da", "deferred": "#1a7f37", "query": "#bc4c00"}
_OTHER = "#57606a"
_PLOT_WIDTH, _BAR, _GAP, _TOP, _CHAR, _LABEL_CHARS = 480, 18, 10, 34, 7.0, 60

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1f2328; }
h1 { font-size: 20px; }
p.warning { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; }
table { border-collapse: collapse; margin-top: 16px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; }
td.num { text-align: right; }
tr.failed td { background: #ffebe9; }
tr.partial td { background: #fff8c5; }
td.runs a { margin-right: 6px; white-space: nowrap; }
a.failed { color: #cf222e; }
svg text { font: 12px system-ui, sans-serif; fill: #1f2328; }
.legend span { display: inline-block; margin-right: 16px; }
p.interrupted { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
"""


def to_html(
    rows: Sequence[Row],
    *,
    title: str = "dagtools eval",
    threshold: float | None = None,
    attempts: Sequence[Attempt] = (),
    folder: Path | None = None,
    warnings: Sequence[str] = (),
    interrupted: str = "",
) -> str:
    """The page; `attempts` are linked from their rows, relative to `folder` (where the page is written);
    `warnings` (what the console warned of the run, such as a script standing in for a model) head it,
    since the page is read without the console. `interrupted` says why the eval stopped early: the page
    is marked so in its title and first lines."""
    if interrupted:
        title = f"{title} (interrupted)"
    modes = list(dict.fromkeys(r.mode for r in rows))  # as the bars come, top to bottom
    legend = "".join(f'<span><i style="background:{_MODE_COLOURS.get(mode, _OTHER)}"></i>{html.escape(mode)}</span>' for mode in modes)
    note = f" The dashed line is the threshold, {100 * threshold:.0f}%." if threshold is not None else ""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{html.escape(title)}</title>",
            f"<style>{_CSS}</style></head><body>",
            f"<h1>{html.escape(title)}</h1>",
            *(f'<p class="warning">{html.escape(warning)}</p>' for warning in warnings),
            f'<p class="interrupted"><strong>Interrupted:</strong> {html.escape(interrupted)}</p>' if interrupted else "",
            f"<p>Success rate per task, model and tool mode; the whisker is the Wilson 95% interval.{note}</p>",
            f'<p class="legend">{legend}</p>',
            _plot(rows, threshold),
            _table(rows, attempts, folder),
            "</body></html>",
            "",
        ]
    )


def write_page(
    path: Path,
    rows: Sequence[Row],
    *,
    title: str = "dagtools eval",
    threshold: float | None = None,
    attempts: Sequence[Attempt] = (),
    warnings: Sequence[str] = (),
    interrupted: str = "",
) -> None:
    """The page at `path`, written whole or not at all (a Ctrl-C while writing leaves the last one)."""
    page = to_html(
        rows, title=title, threshold=threshold, attempts=attempts, folder=path.parent, warnings=warnings, interrupted=interrupted
    )
    write_whole(path, page)


def _label(row: Row) -> str:
    """The row's name beside its bar, its middle left out when long (the whole name is in the table)."""
    text = f"{row.task} · {row.model} · {row.mode}"
    if len(text) <= _LABEL_CHARS:
        return text
    keep = _LABEL_CHARS - 1
    return text[: keep // 3] + "…" + text[-(keep - keep // 3) :]


def _plot(rows: Sequence[Row], threshold: float | None) -> str:
    left = 16 + _CHAR * max((len(_label(r)) for r in rows), default=10)

    def _x(rate: float) -> float:
        return left + rate * _PLOT_WIDTH

    height = _TOP + len(rows) * (_BAR + _GAP) + 10
    width = left + _PLOT_WIDTH + 70
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="success rates">']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        x = _x(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{_TOP - 6}" x2="{x:.1f}" y2="{height - 8}" stroke="#d0d7de"/>')
        parts.append(f'<text x="{x:.1f}" y="{_TOP - 12}" text-anchor="middle">{100 * tick:.0f}%</text>')
    for index, row in enumerate(rows):
        y = _TOP + index * (_BAR + _GAP)
        middle = y + _BAR / 2
        label, whole = html.escape(_label(row)), html.escape(f"{row.task} · {row.model} · {row.mode}")
        colour = _MODE_COLOURS.get(row.mode, _OTHER)
        parts.append(f'<text x="{left - 8:.1f}" y="{middle + 4:.1f}" text-anchor="end">{label}<title>{whole}</title></text>')
        parts.append(
            f'<rect class="bar" x="{left:.1f}" y="{y}" width="{row.rate * _PLOT_WIDTH:.1f}" height="{_BAR}" fill="{colour}" '
            f'fill-opacity="0.8"><title>{whole}: {row.successes}/{row.attempts}</title></rect>'
        )
        low, high, top, bottom = _x(row.low), _x(row.high), y + 3, y + _BAR - 3
        parts.append(
            f'<path class="interval" d="M{low:.1f},{middle:.1f}H{high:.1f}M{low:.1f},{top}V{bottom}M{high:.1f},{top}V{bottom}" '
            'stroke="#1f2328" stroke-width="1.5" fill="none"/>'
        )
        parts.append(f'<text x="{_x(1) + 8:.1f}" y="{middle + 4:.1f}">{row.successes}/{row.attempts}</text>')
    if threshold is not None:
        x = _x(threshold)
        parts.append(f'<line x1="{x:.1f}" y1="{_TOP - 6}" x2="{x:.1f}" y2="{height - 8}" stroke="#cf222e" stroke-dasharray="4 3"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def _table(rows: Sequence[Row], attempts: Sequence[Attempt], folder: Path | None) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS) + "<th>attempts</th>"
    body = []
    numeric = {5, 6, 7, 8}
    for row in rows:
        kind = "" if row.successes == row.attempts else ' class="partial"' if row.successes else ' class="failed"'
        tds = "".join(f"<td{' class=num' if i in numeric else ''}>{html.escape(c)}</td>" for i, c in enumerate(cells(row)))
        mine = [a for a in attempts if (a.task, a.model, a.mode) == (row.task, row.model, row.mode)]
        runs = " ".join(_links(a, folder) for a in sorted(mine, key=lambda a: (a.ok, a.number)))
        body.append(f'<tr{kind}>{tds}<td class="runs">{runs}</td></tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _links(attempt: Attempt, folder: Path | None) -> str:
    """`#3 failed (trace, script)` for one attempt, the files linked relative to the page; the failure
    is the number's tooltip."""
    mark = "ok" if attempt.ok else "failed"
    why = f' title="{html.escape(attempt.failure)}"' if attempt.failure else ""
    files = [(name, path) for name, path in (("trace", attempt.trace), ("script", attempt.script)) if path]
    links = ", ".join(f'<a class="{mark}" href="{_href(path, folder)}">{name}</a>' for name, path in files) or "no files"
    return f'<span class="{mark}"{why}>#{attempt.number} {mark} ({links})</span>'


def _href(path: str, folder: Path | None) -> str:
    """A link to `path` from the page's folder, escaped for an attribute."""
    relative = os.path.relpath(path, folder) if folder is not None else path
    return html.escape(quote(Path(relative).as_posix()))
