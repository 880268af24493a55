"""`--trace FILE`: after a run, replay or demo (also one that failed), draw its objects and calls.

The file's suffix says what it holds: `.html` a page that draws the graph offline, `.mmd` a Mermaid
flowchart, `.md` the same inside a Markdown block (for a bug report). The suffix and the folder are checked
when the command line is read, so a run never ends with a picture it cannot write.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..session._session import Session

__all__ = ["add_trace_option", "save_trace"]

_SUFFIXES = (".html", ".htm", ".mmd", ".md")


def add_trace_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trace",
        type=_trace_path,
        metavar="FILE",
        help="afterwards (also after a failure), draw the session's objects and the calls that made them: "
        "FILE.html (a page, offline), FILE.mmd (Mermaid) or FILE.md",
    )


def _trace_path(text: str) -> Path:
    path = Path(text)
    if path.suffix.lower() not in _SUFFIXES:
        raise argparse.ArgumentTypeError(f"{text!r}: name the trace FILE.html (a page), FILE.mmd (Mermaid) or FILE.md")
    folder = path.expanduser().absolute().parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text!r}: the folder {folder} does not exist, so the trace could not be written after the run; "
            "make the folder first or name a file in one that exists"
        )
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: name a file in it, such as {path / ('trace' + path.suffix)}")
    return path.expanduser()


def save_trace(path: Path | None, session: Session, *, title: str) -> None:
    """Write the trace if one was asked for; a path that cannot be written is said, not raised: the run's
    own outcome (its outputs, its exit code) matters more than its picture."""
    if path is None:
        return
    from .._errors import ConfigError
    from .._words import counted
    from ..trace._trace import write_trace

    try:
        trace = write_trace(session, path, title=title)
    except ConfigError as error:
        print(f"dagtools: {error}", file=sys.stderr)
        return
    objects, calls = counted(len(trace.objects()), "object"), counted(trace.calls, "call")
    print(f"dagtools: trace of {objects} and {calls} written to {path}", file=sys.stderr)
