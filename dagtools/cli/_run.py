"""`dagtools run` and `dagtools demo --model`: a model drives a session from the shell.

The run prints as it goes (each call, its result, tokens) and ends with the saved outputs. With
`--json` it prints one JSON script instead, which `dagtools call` replays (and `--model script:FILE`
plays back as a model).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._interrupts import INTERRUPTED_EXIT, INTERRUPTS
from .._words import counted
from ..examples import KITCHEN
from ._options import parse_input, parse_output, parse_value

if TYPE_CHECKING:
    from .._tools import ToolCall
    from ..agent._agent import AgentEvent, RunResult
    from ..models._base import Usage
    from ..session._session import Session

# The agent, the model clients and the session are imported when a run starts, not to print help.

__all__ = ["add_model_option_argument", "add_model_options", "add_run_arguments", "model_option", "run_command", "run_demo"]

DEMO_PROMPT = "Bake me some french fries."


def add_model_options(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument(
        "--model",
        required=required,
        metavar="PROVIDER:NAME",
        help="openai:NAME (Chat Completions), openai-responses:NAME, anthropic:NAME, gemini:NAME, ollama:NAME or script:FILE",
    )
    parser.add_argument("--base-url", help="a compatible server for the provider (vLLM, Ollama, llama.cpp for openai:NAME)")
    add_model_option_argument(parser)
    parser.add_argument("--retries", type=int, default=2, metavar="N", help="times a failed model request is sent again (2)")
    parser.add_argument(
        "--turn-timeout", type=float, default=300.0, metavar="SECONDS", help="the longest one model turn may take, retries included (300)"
    )
    parser.add_argument(
        "--tools",
        choices=["dynamic", "deferred"],
        default="dynamic",
        help="dynamic (default): the tools offered grow as the model selects them; deferred (anthropic: and "
        "openai-responses: models): one constant list, selected tools revealed in place, so prompt caches stay warm",
    )
    parser.add_argument("--max-steps", type=int, default=30, help="model turns before the run stops (30)")
    parser.add_argument("--max-tokens", type=int, help="total tokens before the run stops")
    parser.add_argument("--json", action="store_true", help="print the run as a script `dagtools call` replays")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", help="the task, in words")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=CHAIN[:DESCRIPTION]",
        help='an object the model starts with, such as oven=oven:"An oven" (repeatable)',
    )
    parser.add_argument("--value", action="append", default=[], metavar="NAME=JSON", help="a plain value the model is given (repeatable)")
    parser.add_argument(
        "--output",
        action="append",
        default=[],
        metavar="NAME:TYPE[:DESCRIPTION]",
        help="an output the model must save, such as fries:Plate (repeatable)",
    )
    add_model_options(parser, required=True)


def add_model_option_argument(parser: argparse.ArgumentParser) -> None:
    """`--model-option KEY=JSON`, for every command that talks to a model (run, demo, eval)."""
    parser.add_argument(
        "--model-option",
        action="append",
        default=[],
        type=model_option,
        metavar="KEY=JSON",
        help="a field added to every model request, such as temperature=0.2 or max_tokens=96 (repeatable; a bare word is a string)",
    )


def model_option(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: write KEY=JSON, such as temperature=0.2 or stop='[\"END\"]'")
    try:
        return key.strip(), json.loads(raw)
    except json.JSONDecodeError:
        return key.strip(), raw


def make_model(args: argparse.Namespace) -> Any:
    """The model, before anything else happens: a missing key or SDK fails the command first."""
    from ..models import get_model

    if args.retries < 0 or args.turn_timeout <= 0:
        from .._errors import ConfigError

        raise ConfigError("--retries must be 0 or more and --turn-timeout more than 0.")
    options = {"max_retries": args.retries, "timeout": args.turn_timeout, "extra": dict(args.model_option)}
    model = get_model(args.model, base_url=args.base_url, **options)
    from ..agent._tool_modes import deferred_format_for

    deferred_format_for(model, args.tools)  # a model that cannot defer fails here, before the session opens
    return model


def run_command(args: argparse.Namespace, options: dict[str, Any]) -> int:
    inputs = dict(parse_input(t) for t in args.input)
    inputs.update(parse_value(t) for t in args.value)
    outputs = dict(parse_output(t) for t in args.output)
    model = make_model(args)
    return INTERRUPTS.run(lambda: run_agent(args.source, args.prompt, inputs, outputs, args, options, model))


def run_demo(args: argparse.Namespace) -> int:

    from ..scripts._script import load_script

    script = load_script(KITCHEN / "fries.yaml")
    model = make_model(args)
    print(
        "The kitchen API: a model bakes french fries with Type_field tools over Type#N objects.",
        file=sys.stderr if args.json else sys.stdout,
    )
    title = f"dagtools demo: {args.model} bakes french fries on the kitchen API"
    return INTERRUPTS.run(
        lambda: run_agent(f"{KITCHEN / 'api.py'}:schema", DEMO_PROMPT, script.inputs, script.outputs, args, {}, model, title=title)
    )


async def run_agent(
    source: Any,
    prompt: str,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    args: argparse.Namespace,
    options: dict[str, Any],
    model: Any,
    *,
    title: str = "",
) -> int:
    from ..agent._agent import Agent
    from ..session._open import open_session
    from ._trace import save_trace
    from ._views import live_view, print_tolerated

    try:
        session = await open_session(source, inputs=inputs, outputs=outputs, **options)
    except BaseException:
        await model.aclose()
        raise
    print_tolerated(session.warnings, verbose=getattr(args, "verbose", 0) > 0)
    stream = sys.stderr if args.json else sys.stdout
    show = live_view(stream) or _Printer(stream)
    progress = _Progress(show)
    agent = Agent(
        session,
        model,
        max_steps=args.max_steps,
        max_tokens=args.max_tokens,
        on_event=progress,
        turn_timeout=args.turn_timeout,
        tools=args.tools,
    )
    result: RunResult | None = None
    try:
        with INTERRUPTS.cancelling():  # Ctrl-C: the run stops where it is, and what it did is kept below
            result = await agent.run(prompt)
        if result is None:
            result = progress.interrupted(session)
    finally:
        getattr(show, "close", lambda: None)()
        save_trace(getattr(args, "trace", None), session, title=title or f"{prompt} ({args.model})")
        await session.aclose()
        await model.aclose()
    if args.json:
        script = run_script(result, inputs, outputs)
        if result.reason == "interrupted":
            script["interrupted"] = result.message
        print(json.dumps(script, ensure_ascii=False, indent=1))
    else:
        print(f"\n== Outputs ==\n{json.dumps(result.outputs, ensure_ascii=False) if result.outputs else 'none saved'}")
    usage = result.usage
    print(
        f"dagtools: {result.reason}: {result.message} ({result.steps} steps, {usage.input_tokens} input + "
        f"{usage.output_tokens} output tokens)",
        file=sys.stderr,
    )
    if result.reason == "interrupted":
        return INTERRUPTED_EXIT
    if result.reason == "saved":
        return 0
    calls = result.calls()
    if not outputs and result.reason == "model_stopped" and calls and all(done is None or done.is_error for _, done in calls):
        # no outputs were asked for, so the model's last words are the answer; a run whose every call
        # failed answered from nothing, and a script must not read it as done
        print(f"dagtools: every tool call failed ({counted(len(calls), 'call')}); the answer rests on no data.", file=sys.stderr)
        return 1
    return 0 if not outputs and result.reason == "model_stopped" else 1


def run_script(result: RunResult, inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """The run as a `dagtools call` script: the same inputs and outputs, each call with what it gave."""
    calls = []
    for call, outcome in result.calls():
        item: dict[str, Any] = {"id": call.id, "tool": call.name, "arguments": _arguments(call)}
        if outcome is None:
            continue
        if outcome.is_error:
            item["expect_error"] = True
        else:
            item["expect"] = outcome.value
        calls.append(item)
    return {"inputs": inputs, "outputs": outputs, "calls": calls}


class _Progress:
    """The events of a run passed on to `show`, with where the run is: what an interrupted run reports."""

    def __init__(self, show: Callable[[AgentEvent], None]) -> None:
        self.show = show
        self.steps = 0
        self.usage: Usage | None = None
        self.running = 0  # calls of the last model turn not answered yet

    def __call__(self, event: AgentEvent) -> None:
        if event.kind == "model" and event.response is not None:
            self.steps = event.step
            self.usage = event.response.usage if self.usage is None else self.usage + event.response.usage
            self.running = len(event.response.tool_calls)
        elif event.kind == "call":
            self.running = max(0, self.running - 1)
        self.show(event)

    def interrupted(self, session: Session) -> RunResult:
        """The run as far as it went: its calls with their results, what it saved, the turns it took."""
        from ..agent._agent import RunResult
        from ..models._base import Usage

        doing = f"while the calls of turn {self.steps} ran" if self.running else f"waiting for the model's turn {self.steps + 1}"
        saved = f"; saved {', '.join(session.saved)}" if session.saved else ""
        missing = f"; never saved {', '.join(session.missing_outputs)}" if session.outputs and not session.done else ""
        return RunResult(
            outputs=dict(session.saved),
            reason="interrupted",
            message=f"stopped by Ctrl-C {doing}{saved}{missing}",
            steps=self.steps,
            usage=self.usage or Usage(),
            transcript=list(session.context),
        )


class _Printer:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __call__(self, event: AgentEvent) -> None:
        out = self.stream
        if event.kind == "model" and event.response is not None:
            usage = event.response.usage
            print(f"\n-- step {event.step} ({usage.input_tokens} in, {usage.output_tokens} out tokens)", file=out)
            if event.response.text:
                print(event.response.text, file=out)
        elif event.kind == "call" and event.call is not None and event.result is not None:
            flag = " (error)" if event.result.is_error else ""
            print(f"{_call_text(event.call)}\n  ->{flag} {event.result.content}", file=out)
        elif event.kind == "nudge":
            print(f"[told the model] {event.text}", file=out)
        out.flush()


def _arguments(call: ToolCall) -> Any:
    """Arguments as the model meant them: parsed when they are a JSON object, else the raw text."""
    if isinstance(call.arguments, str):
        try:
            parsed = json.loads(call.arguments)
        except json.JSONDecodeError:
            return call.arguments
        return parsed if isinstance(parsed, dict) else call.arguments
    return call.arguments


def _call_text(call: ToolCall) -> str:
    arguments = _arguments(call)
    if not isinstance(arguments, dict):
        return f"{call.name}({arguments})"
    return f"{call.name}(" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()) + ")"
