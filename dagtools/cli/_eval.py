"""`dagtools eval`: how often a model does each task on an API, per tool mode, with a report.

    dagtools eval examples/evals/kitchen/tasks.yaml --model script:examples/evals/kitchen/scripts -n 5 \\
        --tools dynamic,fixed,query --min-success 0.8

It prints a table, writes `results.jsonl` and `report.html` (and each attempt's script and trace) to
`--out`, and exits 1 when a row's success rate is under `--min-success`. Ctrl-C stops it early: the
table and both files then hold the attempts finished so far, marked interrupted, and it exits 130.

    dagtools eval check examples/evals/kitchen/tasks.yaml --task fries --session mine

scores a task done by hand or by a terminal agent in `dagtools shell --session mine`: the stored
session is judged by the task's checks and reported as one attempt, with the same verdict and row.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._interrupts import INTERRUPTED_EXIT, INTERRUPTS
from .._words import counted
from ._run import add_model_option_argument

__all__ = ["add_eval_command", "eval_check"]

HOSTED = """\
hosted models: pass the provider's key in its usual variable and name the model, such as
  OPENAI_API_KEY=... dagtools eval tasks.yaml --model openai:gpt-4o-mini -n 10 --tools dynamic,query
  ANTHROPIC_API_KEY=... dagtools eval tasks.yaml --model anthropic:claude-sonnet-4-5 --tools deferred
  dagtools eval tasks.yaml --model openai:NAME --base-url http://localhost:8000/v1   (vLLM, llama.cpp)
A task file's API is reached as `dagtools run` reaches it: -H for headers, or DAGTOOLS_AUTHORIZATION.
dagtools eval check TASKS --task NAME --session NAME scores a task done in `dagtools shell --session NAME`.
script:PATH models replay scripts (PATH/TASK/MODE.yaml in a folder; `attempts:` items in turn)."""


def add_eval_command(commands: Any) -> None:
    parser = commands.add_parser(
        "eval",
        help="success rates of models on task files, per tool mode: dagtools eval TASKS... --model M -n N",
        description="Run each task N times per model and tool mode, in fresh sessions, and report success rates "
        "(Wilson 95% intervals), calls, tokens, time and the commonest failure.",
        epilog=HOSTED,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tasks", nargs="+", help="task files (YAML): source, prompt, inputs, outputs, checks")
    parser.add_argument("--model", action="append", required=True, metavar="PROVIDER:NAME", help="a model to evaluate (repeatable)")
    parser.add_argument("-n", "--attempts", type=int, default=5, metavar="N", help="attempts per task, model and tool mode (5)")
    parser.add_argument(
        "--tools",
        default="dynamic",
        metavar="MODES",
        help="comma-separated tool modes: fixed, dynamic (default), deferred (anthropic:, openai-responses:), "
        "query (the baseline: one GraphQL query tool)",
    )
    parser.add_argument("--concurrency", type=int, default=4, metavar="N", help="attempts running at once (4)")
    parser.add_argument("--out", type=Path, default=Path("eval-out"), metavar="DIR", help="where the report and attempts go (eval-out)")
    parser.add_argument("--min-success", type=float, metavar="RATE", help="exit 1 when a row's success rate is under RATE, such as 0.8")
    parser.add_argument("--base-url", help="a compatible server for the provider (vLLM, Ollama, llama.cpp for openai:NAME)")
    add_model_option_argument(parser)
    parser.add_argument("--retries", type=int, default=2, metavar="N", help="times a failed model request is sent again (2)")
    parser.add_argument("--turn-timeout", type=float, default=300.0, metavar="SECONDS", help="the longest one model turn may take (300)")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="the longest one API call may take (30)")
    parser.add_argument(
        "-H", "--header", action="append", default=[], metavar="'NAME: VALUE'", help="send this header to a URL source (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines instead of a table")
    parser.set_defaults(handler=_eval)


def _eval(args: argparse.Namespace) -> int:
    import anyio

    from .._errors import ConfigError
    from ..evals._html import write_page
    from ..evals._report import print_table, write_lines
    from ..evals._stats import summarise
    from ..evals._suite import run_eval
    from ..evals._tasks import load_tasks

    if args.min_success is not None and not 0 <= args.min_success <= 1:
        raise ConfigError(f"--min-success {args.min_success:g} must be a rate between 0 and 1, such as 0.8.")
    headers = _headers(args.header)
    tasks = [task for path in args.tasks for task in load_tasks(path)]
    warnings = [  # said on the console now, and at the head of the report, which is read without it
        f"{spec} is a script, not a model: its attempts replay the calls written there, "
        "so the rates measure the scripts and the API, not a model's choices"
        for spec in args.model
        if spec.startswith("script:")
    ]
    for warning in warnings:
        print(f"dagtools: {warning}", file=sys.stderr)
    modes = [m.strip() for m in args.tools.split(",") if m.strip()]
    try:  # before any attempt runs: a report that cannot be written is said first
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"--out {args.out} cannot be made: {error.strerror or error}; name a folder you can write to.") from None
    options = {"base_url": args.base_url, "max_retries": args.retries, "timeout": args.turn_timeout}
    if args.model_option:
        options["extra"] = dict(args.model_option)

    def progress(attempt: Any) -> None:
        mark = "ok" if attempt.ok else f"failed: {attempt.failure}"
        print(f"dagtools: {attempt.task} {attempt.model} {attempt.mode} #{attempt.number}: {mark}", file=sys.stderr)

    def skipped(note: str) -> None:
        print(f"dagtools: {note}", file=sys.stderr)

    async def evaluate() -> list[Any]:
        stop = anyio.CancelScope()
        with INTERRUPTS.cancels(stop):  # Ctrl-C: the attempts under way are dropped, those finished reported
            return await run_eval(
                tasks,
                args.model,
                modes,
                args.attempts,
                args.out,
                concurrency=args.concurrency,
                model_options=options,
                on_attempt=progress,
                on_skip=skipped,
                stop=stop,
                headers=headers or None,
                timeout=args.timeout,
            )

    attempts = INTERRUPTS.run(evaluate)
    interrupted = ""
    if INTERRUPTS.stopped:
        interrupted = (
            f"stopped by Ctrl-C after {len(attempts)} finished attempts; the attempts under way then are not counted, "
            "and the rows count only the finished ones"
        )
    rows = summarise(attempts)
    write_lines(args.out / "results.jsonl", rows, attempts, interrupted=interrupted)
    write_page(args.out / "report.html", rows, threshold=args.min_success, attempts=attempts, warnings=warnings, interrupted=interrupted)
    if args.json:
        for row in rows:
            print(json.dumps(row.to_json(), ensure_ascii=False))
        if interrupted:  # as results.jsonl ends
            print(json.dumps({"kind": "interrupted", "message": interrupted, "attempts": len(attempts)}, ensure_ascii=False))
    else:
        print_table(rows, sys.stdout, title="dagtools eval (interrupted)" if interrupted else "dagtools eval")
        if interrupted:
            print(f"Interrupted: {interrupted}.")
    if interrupted:
        print(f"dagtools: eval interrupted (Ctrl-C) after {counted(len(attempts), 'finished attempt')}", file=sys.stderr)
    print(
        f"dagtools: {len(attempts)} attempts; report in {args.out / 'report.html'}, JSON lines in {args.out / 'results.jsonl'}",
        file=sys.stderr,
    )
    under = [r for r in rows if args.min_success is not None and r.rate < args.min_success]
    for row in under:
        print(f"dagtools: {row.task} {row.model} {row.mode}: {100 * row.rate:.0f}% is under {100 * args.min_success:.0f}%", file=sys.stderr)
    if interrupted:
        return INTERRUPTED_EXIT
    return 1 if under or not rows else 0


def _check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dagtools eval check",
        description="Judge a stored shell session (dagtools shell TASKS --task NAME --session NAME) by a task's checks, "
        "and print the verdict and report row a model's attempt gets.",
    )
    parser.add_argument("tasks", help="the task file (YAML)")
    parser.add_argument("--task", metavar="NAME", help="the task done (needed when the file holds several)")
    parser.add_argument("--session", metavar="NAME", required=True, help="the shell session it was done in")
    parser.add_argument("--store", metavar="URL", help="where the session lives (default: the shell's SQLite store)")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="the longest one API call may take (30)")
    parser.add_argument(
        "-H", "--header", action="append", default=[], metavar="'NAME: VALUE'", help="send this header to a URL source (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print the attempt and the row as JSON lines instead of a table")
    return parser


def eval_check(argv: list[str]) -> int:
    """`dagtools eval check ...`: one attempt made of a stored session, judged and reported."""
    import anyio

    from .._errors import ConfigError
    from ..evals._check import check_session
    from ..evals._report import print_table
    from ..evals._stats import summarise
    from ..evals._tasks import find_task
    from ..session._open import open_session
    from ..shell._places import default_store_url, session_key
    from ..stores._open import open_store

    args = _check_parser().parse_args(argv)
    task = find_task(args.tasks, args.task)
    headers = _headers(args.header)
    key = session_key(args.session)
    url = args.store or default_store_url()

    async def judge() -> Any:
        store = open_store(url)
        async with store:
            if await store.load(key) is None:
                raise ConfigError(
                    f"There is no shell session {args.session!r} in {url}; do the task first with "
                    f"dagtools shell {args.tasks} --task {task.name} --session {args.session}."
                )
            async with await open_session(
                task.source,
                outputs=task.outputs,
                mutations=task.mutations,
                store=store,
                key=key,
                headers=headers or None,
                timeout=args.timeout,
            ) as session:
                return await check_session(task, session)

    attempt = anyio.run(judge)
    mark = "ok" if attempt.ok else f"failed: {attempt.failure}"
    print(f"dagtools: {attempt.task} {attempt.model} {attempt.mode} #{attempt.number}: {mark}", file=sys.stderr)
    rows = summarise([attempt])
    if args.json:
        for item in (attempt.to_json(), *(row.to_json() for row in rows)):
            print(json.dumps(item, ensure_ascii=False))
    else:
        print_table(rows, sys.stdout)
    return 0 if attempt.ok else 1


def _headers(given: list[str]) -> dict[str, str]:
    """The `-H 'Name: value'` options of `eval` and `eval check`, as headers; refuses one without a name."""
    from .._errors import ConfigError

    headers = {}
    for text in given:
        name, sep, value = text.partition(":")
        if not sep or not name.strip():
            raise ConfigError(f"-H {text!r} is not a header; write it as 'Name: value'.")
        headers[name.strip()] = value.strip()
    return headers
