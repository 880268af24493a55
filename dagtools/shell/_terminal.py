"""The interactive shell on a terminal: a prompt with completion and history (prompt_toolkit, the `shell`
extra; a plain line reader without it), one line at a time, Ctrl-C to stop the call in flight and stay,
Ctrl-D to leave."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any, Protocol, TextIO

import anyio

from ._complete import complete_line
from ._runner import Outcome, ShellRunner

__all__ = ["run_interactive", "show"]


class LineReader(Protocol):
    async def read(self, prompt: str, *, keep: bool = True) -> str:
        """The next line (kept in the history unless `keep` is False, as an answer to a question);
        EOFError at the end (Ctrl-D), KeyboardInterrupt for a line abandoned (Ctrl-C)."""
        ...

    def interrupted(self) -> None:
        """Ctrl-C arrived while nothing ran."""


def show(outcome: Outcome, out: TextIO, err: TextIO) -> None:
    """A line's outcome for a person: the result on stdout, an error and a hint for the host on stderr."""
    if outcome.text:
        print(outcome.text, file=err if outcome.is_error else out, flush=True)
    if outcome.hint:
        print(f"dagtools: {outcome.hint}", file=err, flush=True)


async def run_interactive(runner: ShellRunner, *, prompt: str, banner: str, history: Path, plain: bool = False) -> int:
    """Read and run lines until Ctrl-D or `exit`; 0 when left that way."""
    reader: LineReader = _plain_reader(history) if plain else _prompt_reader(runner, history) or _plain_reader(history)
    loop = asyncio.get_running_loop()
    running: list[anyio.CancelScope] = []

    def interrupt() -> None:
        if running:
            running[-1].cancel()
        else:
            reader.interrupted()

    async def confirm(question: str) -> bool:
        try:
            answer = await reader.read(question, keep=False)
        except (KeyboardInterrupt, EOFError):
            print(file=sys.stdout)
            return False
        return answer.strip().lower() in ("y", "yes")

    runner.confirm = confirm
    print(banner, flush=True)
    while True:
        loop.add_signal_handler(signal.SIGINT, interrupt)  # prompt_toolkit takes SIGINT while it prompts, and gives it back
        try:
            line = await reader.read(prompt)
        except KeyboardInterrupt:
            continue
        except EOFError:
            print(flush=True)
            return 0
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        loop.add_signal_handler(signal.SIGINT, interrupt)
        try:
            with anyio.CancelScope() as scope:
                running.append(scope)
                try:
                    outcome = await runner.run(line)
                finally:
                    running.pop()
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        if scope.cancelled_caught:
            print("Interrupted: the call was stopped, and the session holds what it held before it.", file=sys.stderr, flush=True)
            continue
        show(outcome, sys.stdout, sys.stderr)
        if outcome.leave:
            return 0


def _prompt_reader(runner: ShellRunner, history: Path) -> LineReader | None:
    """prompt_toolkit's prompt, with completion and a history file; None without the extra."""
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import Completer, Completion
        from prompt_toolkit.history import FileHistory, InMemoryHistory
    except ImportError:
        return None

    class ShellCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Any:
            session = runner.session
            held = ((e.id, e.type_name) for e in session.registry)
            start, candidates = complete_line(session.catalogue, held, document.text_before_cursor)
            for candidate in candidates:
                yield Completion(candidate, start_position=start)

    try:
        history.parent.mkdir(parents=True, exist_ok=True)
        kept: Any = FileHistory(str(history))
    except OSError:
        kept = InMemoryHistory()
    prompt_session: Any = PromptSession(history=kept, completer=ShellCompleter(), complete_while_typing=False)
    question: Any = PromptSession(history=InMemoryHistory())

    class PromptReader:
        async def read(self, prompt: str, *, keep: bool = True) -> str:
            text: str = await (prompt_session if keep else question).prompt_async(prompt, handle_sigint=False)
            return text

        def interrupted(self) -> None:  # prompt_toolkit reads Ctrl-C itself, as a key
            pass

    return PromptReader()


def _plain_reader(history: Path) -> LineReader:
    """`input()` in a worker thread (with readline's editing and history where Python has it)."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline
        readline = None  # type: ignore[assignment]
    if readline is not None:
        try:
            readline.read_history_file(history)
        except OSError:
            pass

    class PlainReader:
        prompt = ""

        async def read(self, prompt: str, *, keep: bool = True) -> str:
            self.prompt = prompt
            line: str = await anyio.to_thread.run_sync(input, prompt, abandon_on_cancel=True)
            if readline is not None and not keep and line.strip():
                readline.remove_history_item(readline.get_current_history_length() - 1)
            elif readline is not None and line.strip():
                try:
                    history.parent.mkdir(parents=True, exist_ok=True)
                    readline.write_history_file(history)
                except OSError:
                    pass
            return line

        def interrupted(self) -> None:  # the terminal dropped the line typed so far: start a fresh one
            print("\n" + self.prompt, end="", flush=True)

    return PlainReader()
