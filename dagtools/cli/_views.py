"""What the command line looks like on a terminal, and what it prints when piped.

On a terminal, with `rich` installed (`pip install "dagtools-graphql[cli]"`), the catalogue is a table, a
long introspection shows a progress bar and a run shows each model turn and call as it happens,
with a spinner while the model thinks. Piped (stdout not a terminal), with `NO_COLOR` set, with
`TERM=dumb` or without rich, the same figures print as plain lines that scripts can read.

rich is imported only when a view is drawn, so `dagtools --help` stays fast. Text from the model or
the API goes into rich as plain `Text`, never as markup: a `[bold]` in a model's answer prints as it is.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, TextIO

from .._words import counted

if TYPE_CHECKING:
    from .._tools import Tool
    from ..agent._agent import AgentEvent

__all__ = ["fancy", "live_view", "print_tolerated", "print_tools", "progress_bar", "token_counter"]


def fancy(stream: TextIO) -> bool:
    """Draw with rich on `stream`: a terminal that wants colour, and rich installed."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    if not getattr(stream, "isatty", lambda: False)():
        return False
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _console(stream: TextIO) -> Any:
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=False)


@cache
def token_counter() -> tuple[Callable[[str], int], str]:
    """Count tokens with OpenAI's o200k_base table when bpe-openai is installed, else estimate (and say so)."""
    try:
        import bpe_openai
    except ImportError:
        from ..session._metatools import estimate_tokens

        return estimate_tokens, "estimated at 4 bytes a token; pip install bpe-openai for exact o200k counts"
    encoding = bpe_openai.get_encoding("o200k_base")
    return (lambda text: len(encoding.encode(text))), "o200k_base"


# -- dagtools tools ----------------------------------------------------------------------------------------


def print_tools(tools: Sequence[Tool], rendered: Sequence[Any], *, catalogue_size: int, format: str, stream: TextIO | None = None) -> None:
    """Each tool with its size in bytes and tokens as the provider gets it, then the total."""
    out = stream or sys.stdout
    count, unit = token_counter()
    rows = []
    for tool, item in zip(tools, rendered):
        text = json.dumps(item, ensure_ascii=False)
        rows.append((tool, len(text.encode()), count(text)))
    whole = json.dumps(list(rendered), ensure_ascii=False)
    summary = (
        f"{counted(len(tools), 'tool')} of {catalogue_size} in the catalogue, {format} format: "
        f"{len(whole.encode())} bytes, about {count(whole)} tokens ({unit})"
    )
    if not fancy(out):
        for tool, size, tokens in rows:
            print(f"{tool.name:<48} {size:>8} bytes {tokens:>7} tokens", file=out)
        print(summary, file=out)
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{format} tools", title_justify="left", show_footer=False, expand=False)
    table.add_column("tool", style="bold cyan", no_wrap=True)
    table.add_column("what it does", overflow="ellipsis", no_wrap=True, max_width=60)
    table.add_column("bytes", justify="right")
    table.add_column("tokens", justify="right")
    for tool, size, tokens in rows:
        first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        table.add_row(Text(tool.name), Text(first), str(size), str(tokens))
    console = _console(out)
    console.print(table)
    console.print(Text(summary, style="dim"))


# -- what a lenient load tolerated ---------------------------------------------------------------------------


def print_tolerated(problems: Sequence[str], *, verbose: bool, stream: TextIO | None = None) -> None:
    """What a lenient load tolerated in the schema: one line (the first problem, the count) unless
    `verbose`, then each problem on its own line. GitHub's published schema has a dozen such problems,
    and every command that reads it would otherwise open with them."""
    out = stream or sys.stderr
    if not problems:
        return
    if verbose:
        for problem in problems:
            print(f"dagtools: tolerated: {problem}", file=out)
        return
    first = "" if len(problems) == 1 else "the first: "
    print(
        f"dagtools: tolerated {counted(len(problems), 'problem')} in the schema (-v lists them, --strict refuses them); "
        f"{first}{problems[0]}",
        file=out,
    )


# -- introspection ------------------------------------------------------------------------------------------


def progress_bar(threshold: int, stream: TextIO | None = None) -> Any:
    """A rich progress bar of the schema's bytes as they arrive (from `threshold` bytes on), or None where
    it would not draw (then the plain progress line, or nothing, is used)."""
    out = stream if stream is not None else sys.stderr
    if not fancy(out):
        return None
    state: dict[str, Any] = {}

    def report(received: int, total: int | None) -> None:
        if received < threshold:
            return
        if not state:
            from rich.progress import BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn, TransferSpeedColumn

            bar = Progress(
                SpinnerColumn(),
                TextColumn("loading the schema"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                console=_console(out),
                transient=True,
            )
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task("schema", total=total)
        state["bar"].update(state["task"], completed=received, total=total)

    def finish() -> None:
        if state:
            state.pop("bar").stop()
            state.clear()

    report.finish = finish  # type: ignore[attr-defined]  # ends the bar once the answer is in
    return report


# -- dagtools run ---------------------------------------------------------------------------------------------


def live_view(stream: TextIO) -> Any:
    """A view of a run as it happens (each model turn and call, a spinner while waiting), or None off a terminal."""
    return _LiveView(_console(stream)) if fancy(stream) else None


class _LiveView:
    def __init__(self, console: Any) -> None:
        self.console = console
        self.status = console.status("waiting for the model…", spinner="dots")
        self.status.start()

    def __call__(self, event: AgentEvent) -> None:
        from rich.rule import Rule
        from rich.text import Text

        console = self.console
        if event.kind == "model" and event.response is not None:
            usage = event.response.usage
            console.print(Rule(Text(f"step {event.step} · {usage.input_tokens} in, {usage.output_tokens} out tokens"), style="blue"))
            if event.response.text:
                console.print(Text(event.response.text, style="italic"))
            calls = len(event.response.tool_calls)
            self.status.update(f"running {calls} call{'s' * (calls != 1)}…" if calls else "waiting for the model…")
        elif event.kind == "call" and event.call is not None and event.result is not None:
            failed = event.result.is_error
            line = Text("✗ " if failed else "✓ ", style="red" if failed else "green")
            line.append(event.call.name, style="bold")
            line.append(_arguments_text(event.call.arguments))
            console.print(line)
            console.print(Text(f"  → {event.result.content}", style="red" if failed else "dim"))
            self.status.update("waiting for the model…")
        elif event.kind == "nudge":
            console.print(Text(f"[told the model] {event.text}", style="yellow"))
        elif event.kind == "end":
            self.close()

    def close(self) -> None:
        self.status.stop()


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return f"({arguments})"
    if not isinstance(arguments, dict):
        return f"({arguments})"
    return "(" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()) + ")"
