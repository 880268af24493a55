"""The `dagtools` command: the same operations as the Python API, for shells, CI and demos."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import DagtoolsError
from .._interrupts import INTERRUPTED_EXIT, INTERRUPTS
from .._words import counted
from ..catalogue._render import FORMATS
from ._eval import add_eval_command
from ._mcp import add_mcp_command
from ._mistakes import in_command_line_words, mistyped_command, unrecognized
from ._options import add_http_options, add_verbose_option, check_addresses, load_with, stdout_closed
from ._run import add_model_options, add_run_arguments
from ._serve import add_serve_command
from ._shell import add_shell_command
from ._trace import add_trace_option

if TYPE_CHECKING:
    from .._tools import ToolCall
    from ..scripts._script import Script
    from ..session._session import Session

# Everything else is imported by the command that needs it: `dagtools --help` and a mistyped
# argument answer without importing graphql-core, httpx or the MCP SDK.

__all__ = ["main"]


def add_source_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source", help="a schema: SDL or introspection file, path/to/file.py:attribute, a URL, or dagger (the Dagger session this runs in)"
    )
    parser.add_argument("--dialect", choices=["plain", "relay", "dagger"], help="force the API's conventions")
    parser.add_argument("--allow-mutations", action="store_true", help="expose every mutation as a tool")
    parser.add_argument("--mutation", action="append", default=[], metavar="NAME", help="expose one mutation (repeatable)")
    parser.add_argument("--include-deprecated", action="store_true", help="show deprecated fields too")
    parser.add_argument("--relay-ids", action="store_true", help="let ID arguments such as subjectId take Type#N")
    parser.add_argument("--strict", action="store_true", help="refuse schemas that are invalid as published")
    add_verbose_option(parser)
    http = parser.add_argument_group("real APIs (a URL source)")
    http.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        type=_header,
        metavar="'NAME: VALUE'",
        help="send this header to the API (repeatable), e.g. -H 'Authorization: Bearer ...'",
    )
    add_http_options(http)


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not a header; write it as 'Name: value'")
    return name.strip(), value.strip()


def source_options(args: argparse.Namespace) -> dict[str, Any]:
    from ..load._introspect import PROGRESS_FROM, stderr_progress
    from ._views import progress_bar

    mutations: bool | list[str] = True if args.allow_mutations else list(args.mutation) or False
    cache: bool | str = False if args.no_cache else "refresh" if args.refresh_schema else True
    return {
        "dialect": args.dialect,
        "mutations": mutations,
        "include_deprecated": args.include_deprecated,
        "relay_ids": args.relay_ids,
        "lenient": not args.strict,
        "headers": dict(args.header) or None,
        "timeout": args.timeout,
        "cache": cache,
        "progress": progress_bar(PROGRESS_FROM) or stderr_progress(),
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dagtools", description="Point LLM agents at any GraphQL API.")
    parser.add_argument("--version", action="version", version=f"dagtools {_version()}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log what happens to stderr: -v schema, sessions, retries; -vv every request"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="run the french-fries task on the embedded kitchen API")
    add_model_options(demo)
    add_trace_option(demo)
    demo.set_defaults(handler=_demo)

    run = commands.add_parser("run", help='let a model do a task on an API: dagtools run SOURCE "prompt" --model ...')
    add_source_options(run)
    add_run_arguments(run)
    add_trace_option(run)
    run.set_defaults(handler=_run)

    call = commands.add_parser("call", help="replay a YAML/JSON script of tool calls against an API")
    add_source_options(call)
    call.add_argument("script", help="the script: inputs, outputs and calls")
    call.add_argument("--json", action="store_true", help="one JSON object per call, then the outputs")
    add_trace_option(call)
    call.set_defaults(handler=_call)

    add_mcp_command(commands)
    add_eval_command(commands)
    add_serve_command(commands)
    add_shell_command(commands, add_source_options, source_options)

    tools = commands.add_parser(
        "tools",
        help="list an API's tools as signatures, by type (--sizes: what the toolset a model starts with costs)",
        description="List an API's tools as signatures, grouped by type. --json and --sizes show the toolset a "
        "model starts with (or, with --all, the whole catalogue) as a provider gets it.",
    )
    add_source_options(tools)
    tools.add_argument(
        "--format",
        choices=[*FORMATS, "tools-config"],
        help="a provider's tool format for --json and --sizes (default openai; given alone it means --sizes), "
        "or tools-config: the catalogue as a tools config (JSON)",
    )
    tools.add_argument(
        "--all",
        action="store_true",
        help="every signature, however large the catalogue; with --json or --sizes, every tool rather than the starting toolset",
    )
    tools.add_argument("--type", action="append", default=[], metavar="NAME", help="only the tools of this type (repeatable)")
    tools.add_argument("--sizes", action="store_true", help="each tool's size in bytes and tokens as the provider gets it, and the total")
    tools.add_argument("--json", action="store_true", help="print exactly the JSON array of tools")
    tools.add_argument("--search", metavar="WORDS", help="the tools that match these words, best first (names and one line each)")
    tools.set_defaults(handler=_tools)
    return parser


def _version() -> str:
    """The installed distribution's version (dagtools-graphql on PyPI); the source's own outside an install."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dagtools-graphql")
    except PackageNotFoundError:
        from .. import __version__

        return __version__


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    words = list(sys.argv[1:] if argv is None else argv)
    checked = _eval_check(words)
    if checked is not None:
        return checked
    mistyped = mistyped_command(parser, words)
    if mistyped:
        print(f"dagtools: {mistyped}", file=sys.stderr)
        return 2
    args, extras = parser.parse_known_args(argv)
    if extras:
        unrecognized(parser, args.command, extras)
    args.verbose += getattr(args, "verbose_here", 0)  # -v before the command or after it: the same
    _configure_logging(args.verbose)
    INTERRUPTS.install()  # the first Ctrl-C stops the command where it is, keeping what it finished; a second at once
    try:
        check_addresses(args)
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # here, where a reader that went away is caught, not at exit
        return code
    except DagtoolsError as error:
        print(f"dagtools: {in_command_line_words(error, args)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `dagtools ... | head`: the reader has all it wanted
        return stdout_closed()
    except KeyboardInterrupt:  # Ctrl-C where the command had nothing under way to keep (loading, starting)
        print(f"dagtools: {args.command} stopped (Ctrl-C)", file=sys.stderr)
        return INTERRUPTED_EXIT
    finally:
        INTERRUPTS.uninstall()


def _eval_check(words: list[str]) -> int | None:
    """`dagtools [-v] eval check ...`, a command of its own beside `dagtools eval TASKS...` (whose first
    task file may not be named `check`; `./check` still is one). None for any other command line."""
    command = next((i for i, w in enumerate(words) if not w.startswith("-")), None)
    if command is None or words[command] != "eval" or words[command + 1 : command + 2] != ["check"]:
        return None
    _configure_logging(sum(w.count("v") for w in words[:command] if w.startswith("-") and not w.startswith("--")))
    from ._eval import eval_check

    try:
        return eval_check(words[command + 2 :])
    except DagtoolsError as error:
        print(f"dagtools: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _configure_logging(verbosity: int) -> None:
    """dagtools logs nothing unless asked; `-v` shows what an operator needs, `-vv` every request."""
    if not verbosity:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("dagtools: %(levelname)s %(message)s"))
    logger = logging.getLogger("dagtools")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbosity == 1 else logging.DEBUG)


# -- run, call --------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from ._run import run_command

    return run_command(args, source_options(args))


def _call(args: argparse.Namespace) -> int:
    options = source_options(args)
    return INTERRUPTS.run(lambda: _replay(args.source, args.script, args.json, options, trace=args.trace, verbose=args.verbose > 0))


async def _replay(
    source: Any,
    script_path: str,
    as_json: bool,
    options: dict[str, Any],
    *,
    transcript: bool = False,
    trace: Any = None,
    verbose: bool = False,
    title: str = "",
) -> int:
    from ..scripts._script import load_script
    from ..session._open import open_session
    from ._trace import save_trace

    script = load_script(script_path)
    async with await open_session(source, inputs=script.inputs, outputs=script.outputs, **options) as session:
        replayed: list[Any] = []  # the calls replayed, as they are
        try:
            with INTERRUPTS.cancelling():  # Ctrl-C: the call under way is dropped, what the others did is said
                return await _replay_session(session, script, as_json, transcript=transcript, verbose=verbose, replayed=replayed)
            where = f"stopped by Ctrl-C after {len(replayed)} of {counted(len(script.calls), 'call')}"
            if as_json:
                print(json.dumps({"outputs": session.saved, "interrupted": where}, ensure_ascii=False))
            else:
                print(_section("Outputs") + "\n" + (json.dumps(session.saved, ensure_ascii=False) if session.saved else "none saved"))
            print(f"dagtools: {where}", file=sys.stderr)
            return INTERRUPTED_EXIT
        finally:
            save_trace(trace, session, title=title or f"dagtools call {Path(script_path).name}")


async def _replay_session(session: Session, script: Script, as_json: bool, *, transcript: bool, verbose: bool, replayed: list[Any]) -> int:
    from ..catalogue._render import describe_tools
    from ..scripts._script import run_script
    from ._views import print_tolerated

    print_tolerated(session.warnings, verbose=verbose)
    failures = 0
    if transcript:
        print(_section("Tools the model starts with"))
        print(describe_tools(session.tools()))
    active = set(session.active_tools)
    hinted = False
    async for record in run_script(session, script):
        replayed.append(record)
        if as_json:
            print(json.dumps(record.to_json(), ensure_ascii=False), flush=True)
        else:
            print(f"\n{_call_text(record.call)}\n  -> {record.result.content}", flush=True)
            if transcript and set(session.active_tools) != active:
                added = [t for t in session.tools() if t.name in set(session.active_tools) - active]
                print(_section("Tools gained") + "\n" + describe_tools(added))
                active = set(session.active_tools)
        if record.problem:
            failures += 1
            print(f"dagtools: {record.problem}", file=sys.stderr)
            if not hinted and (field := _a_mutation_not_allowed(session, record.call.name)):
                hinted = True  # the model is told only the host can allow it; here the host is the one reading
                print(
                    f"dagtools: {record.call.name} is a mutation: run with --mutation {field} to allow it (repeatable), "
                    "or --allow-mutations for every one",
                    file=sys.stderr,
                )
    if as_json:
        print(json.dumps({"outputs": session.saved}, ensure_ascii=False))
    else:
        print(_section("Outputs") + "\n" + (json.dumps(session.saved, ensure_ascii=False) if session.saved else "none saved"))
    if session.outputs and not session.done:
        print(f"dagtools: the script never saved {', '.join(session.missing_outputs)}", file=sys.stderr)
        failures += 1
    return 1 if failures else 0


def _a_mutation_not_allowed(session: Session, name: str) -> str | None:
    """The mutation field `name` calls, when it names one the session does not allow."""
    catalogue = session.catalogue
    root = catalogue.schema.mutation_type
    if root is None or catalogue.mutation_type is None or name in catalogue:
        return None
    field = name.removeprefix(catalogue.prefix(catalogue.mutation_type) + "_")
    return field if field != name and field in root.fields else None


def _call_text(call: ToolCall) -> str:
    arguments = call.arguments if isinstance(call.arguments, dict) else {"<raw>": call.arguments}
    return f"{call.name}(" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()) + ")"


def _section(title: str) -> str:
    return f"\n== {title} =="


# -- demo ------------------------------------------------------------------------------------------------


def _demo(args: argparse.Namespace) -> int:
    import anyio

    from ._run import KITCHEN, run_demo

    api = KITCHEN / "api.py"
    if not api.exists():
        print(
            "dagtools: the kitchen example is not here; run the demo from a checkout (pip install -e . in the repository).", file=sys.stderr
        )
        return 2
    if args.model:
        return run_demo(args)
    script = str(KITCHEN / "fries.yaml")
    if args.json:  # a script that `dagtools call` and `--model script:` replay
        from ._record import record_script

        return anyio.run(lambda: record_script(f"{api}:schema", script, {}))
    print("The kitchen API: bake french fries with Type_field tools over Type#N objects.")
    title = "dagtools demo: the french-fries script replayed on the kitchen API"
    return INTERRUPTS.run(lambda: _replay(f"{api}:schema", script, False, {}, transcript=True, trace=args.trace, title=title))


# -- tools -----------------------------------------------------------------------------------------------


def _search(catalogue: Any, words: str, *, as_json: bool) -> int:
    """`dagtools tools SOURCE --search WORDS`: what selectTools(search:) finds, without a session."""
    from ..catalogue._search import catalogue_search

    if not words.strip():
        print('dagtools: --search takes words, such as --search "who starred a repository"', file=sys.stderr)
        return 2
    hits = catalogue_search(catalogue).search(words, limit=10)
    if as_json:
        print(json.dumps([{"name": h.name, "description": h.line, "score": round(h.score, 3)} for h in hits], ensure_ascii=False, indent=1))
        return 0
    if not hits:
        print(f"No tool matches {words!r}.", file=sys.stderr)
        return 1
    for hit in hits:
        print(f"{hit.name}: {hit.line}")
    return 0


def _tools(args: argparse.Namespace) -> int:
    from ..catalogue._render import render_tools
    from ..executors._base import SchemaOnlyExecutor
    from ..load._dagger import dagger_endpoint, is_dagger_source
    from ..session._open import catalogue_for
    from ..session._session import Session

    options = source_options(args)
    cache = options.pop("cache")
    source = args.source
    if is_dagger_source(source):
        source, session_auth = dagger_endpoint()
        options["headers"] = {**session_auth, **dict(options.get("headers") or {})}
        options["dialect"] = options.get("dialect") or "dagger"
        cache = False
    loaded = load_with(source, options, cache)
    from ._views import print_tolerated

    print_tolerated(loaded.warnings, verbose=args.verbose > 0)
    catalogue = catalogue_for(loaded.schema, **options)
    if args.search is not None:
        return _search(catalogue, args.search, as_json=args.json)
    if args.format == "tools-config":
        from ..toolsconfig import export_tools_config

        print(json.dumps(export_tools_config(catalogue), ensure_ascii=False, indent=1))
        return 0
    from ._listing import list_signatures, types_named

    types = types_named(catalogue, args.type) if args.type else []
    if not (args.json or args.sizes or args.format):
        start = Session(catalogue, SchemaOnlyExecutor(loaded.origin)).tools()
        names = [t.name for t in start]
        listed = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
        said = f"; a model starts with {listed}, and selects from these"
        print("\n".join(list_signatures(catalogue, types=types, whole=args.all, start=said)))
        return 0
    if types:
        tools = catalogue.tools([name for t in types for name in catalogue.tools_for_type(t)])
    elif args.all:
        tools = catalogue.tools()
    else:
        session = Session(catalogue, SchemaOnlyExecutor(loaded.origin))
        tools = session.tools()
    format = args.format or "openai"
    rendered = render_tools(tools, format)
    if args.json:
        print(json.dumps(rendered, ensure_ascii=False, indent=1))
        return 0
    from ._views import print_tools

    print_tools(tools, rendered, catalogue_size=len(catalogue), format=format)
    return 0
