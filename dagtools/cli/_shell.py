"""`dagtools shell SOURCE`: the API as a command line, interactive on a terminal, or one command at a time
on a named session kept in a store (`--session NAME -c 'LINE'`, or lines on standard input)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._options import load_with, parse_input, parse_output, parse_value

if TYPE_CHECKING:
    from ..evals._tasks import EvalTask

#: `source_options(args)`: the keywords of `open_session` the source options say (the command line's own).
SourceOptions = Callable[[argparse.Namespace], dict[str, Any]]

__all__ = ["add_shell_command"]


def add_shell_command(commands: Any, add_source_options: Callable[[argparse.ArgumentParser], None], source_options: SourceOptions) -> None:
    shell = commands.add_parser(
        "shell",
        help="the API as a command line: interactive, or one command at a time on a named session (-c LINE)",
        description="One line is one call: Type_field [Type#N] name=value ...; a | chains calls in one request. "
        "`help` in the shell lists the built-ins.",
    )
    add_source_options(shell)
    shell.add_argument("--session", metavar="NAME", help="keep the session under this name in the store, across commands and restarts")
    shell.add_argument(
        "--store",
        metavar="URL",
        help="where named sessions live: sqlite:///PATH, redis://HOST:PORT/DB, ... (default: SQLite under the user's state directory)",
    )
    shell.add_argument(
        "-c", "--command", action="append", default=[], dest="lines", metavar="LINE", help="run this line and exit (repeatable)"
    )
    shell.add_argument("--json", action="store_true", help="print each result as an MCP client gets it (CallToolResult JSON)")
    shell.add_argument("--yes", action="store_true", help="run writes (mutations) without asking")
    shell.add_argument("--task", metavar="NAME", help="with a task file as SOURCE: open the session on this task's API, inputs and outputs")
    shell.add_argument("--input", action="append", default=[], metavar="NAME=CHAIN[:DESCRIPTION]", help="give a new session an object")
    shell.add_argument("--value", action="append", default=[], metavar="NAME=JSON", help="give a new session a plain value")
    shell.add_argument("--output", action="append", default=[], metavar="NAME:TYPE[:DESCRIPTION]", help="declare an output to save")
    shell.add_argument("--agent-help", action="store_true", help="print the instructions that teach a terminal agent this shell, and exit")
    shell.add_argument("--plain", action="store_true", help="a plain line reader even where prompt_toolkit is installed")
    shell.set_defaults(handler=_shell, source_options=source_options)


def _is_task_file(source: str) -> bool:
    return source.lower().endswith((".yaml", ".yml"))


def _shell(args: argparse.Namespace) -> int:
    import anyio

    from .._errors import ConfigError
    from ..evals._tasks import find_task
    from ..examples import KITCHEN

    written = args.source
    if args.source == "kitchen" and not _exists(args.source):  # the example API that ships with dagtools
        args.source = f"{KITCHEN / 'api.py'}:schema"
    options = args.source_options(args)
    inputs: dict[str, Any] = {}
    outputs: dict[str, Any] = {}
    source = args.source
    task = None
    if _is_task_file(source):
        task = find_task(source, args.task)
        source, inputs, outputs = task.source, dict(task.inputs), dict(task.outputs)
        if not options["mutations"]:
            options["mutations"] = task.mutations
    elif args.task:
        raise ConfigError(f"--task names a task of a task file; {source} is not one (a .yaml file with tasks).")
    for item in args.input:
        name, spec = parse_input(item)
        inputs[name] = {**spec, "description": spec["description"] or name}
    inputs.update(parse_value(item) for item in args.value)
    outputs.update(parse_output(item) for item in args.output)
    if args.agent_help:
        return _agent_help(args, written, source, options, outputs, inputs)
    interactive = not args.lines and sys.stdin.isatty() and sys.stdout.isatty()
    return int(anyio.run(lambda: _serve(args, written, source, options, inputs, outputs, interactive, task)))


def _exists(path: str) -> bool:
    from pathlib import Path

    return Path(path).exists()


def _agent_help(
    args: argparse.Namespace, written: str, source: str, options: dict[str, Any], outputs: dict[str, Any], inputs: dict[str, Any]
) -> int:
    from ..session._open import catalogue_for
    from ..shell._help import agent_help, api_section

    options = dict(options)
    cache = options.pop("cache")
    loaded = load_with(source, options, cache)
    catalogue = catalogue_for(loaded.schema, **options)
    command = ["dagtools", "shell", written]
    if args.task:
        command += ["--task", args.task]
    command += ["--session", args.session or "agent", "-c"]
    text = agent_help(catalogue, command)
    if outputs:  # what the task asks to be handed back: the one thing an agent must not miss
        wanted = ", ".join(f"{name} ({_type_of(spec)})" for name, spec in outputs.items())
        held = " `held` shows the objects you start with." if inputs else ""
        text += f"\nThis task asks you to save: {wanted}, with save NAME=VALUE or save NAME=Type#N.{held}"
    print(f"{text}\n{api_section(catalogue)}")
    return 0


def _type_of(spec: Any) -> str:
    return str(spec.get("type", "")) if isinstance(spec, dict) else str(getattr(spec, "type", spec))


async def _serve(
    args: argparse.Namespace,
    written: str,
    source: str,
    options: dict[str, Any],
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    interactive: bool,
    task: EvalTask | None,
) -> int:
    from ..session._open import open_session
    from ..shell._places import default_store_url, history_path, session_key
    from ..shell._runner import ShellRunner
    from ..shell._terminal import run_interactive, show

    store = args.store or (default_store_url() if args.session else None)
    key = session_key(args.session) if args.session else None
    if store is not None and key is None:
        from .._errors import ConfigError

        raise ConfigError("--store keeps named sessions: give the session a name with --session NAME.")
    async with await open_session(source, inputs=inputs, outputs=outputs, store=store, key=key, **options) as session:
        if interactive or args.verbose or not session.state().calls:
            # Said once a session, not before every command of it: an agent in a terminal reads stderr too.
            from ._views import print_tolerated

            print_tolerated(session.warnings, verbose=args.verbose > 0)
        runner = ShellRunner(session, yes=args.yes)
        if interactive:
            name = args.session or "dagtools"
            banner = f"dagtools shell on {written}" + (f", session {args.session}" if args.session else "")
            if task is not None:
                banner += f"\nTask {task.name}: {task.prompt}"
            banner += "\n`help` lists the built-ins; Tab completes; Ctrl-C stops a call, Ctrl-D leaves."
            return await run_interactive(runner, prompt=f"{name}> ", banner=banner, history=history_path(), plain=args.plain)
        lines = list(args.lines) if args.lines else sys.stdin.read().splitlines()
        failed = False
        for line in lines:
            outcome = await runner.run(line)
            if outcome.leave:
                break
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            failed = failed or outcome.is_error
            if args.json:
                print(json.dumps(outcome.mcp, ensure_ascii=False), flush=True)
                if outcome.hint:
                    print(f"dagtools: {outcome.hint}", file=sys.stderr)
            else:
                show(outcome, sys.stdout, sys.stderr)
        return 1 if failed else 0
