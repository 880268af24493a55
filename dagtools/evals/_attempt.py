"""One attempt: a fresh model and session, the agent loop in one tool mode, then the checks.

Every attempt leaves a script (`dagtools call` format: the model's calls with what they gave, which
`--model script:FILE` plays back in the same mode) and a trace page of its objects and calls.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, cast

from .._errors import DagtoolsError
from ..agent._agent import SAVE_RULE, Agent, RunResult
from ..agent._tool_modes import ToolMode
from ..mcpserver.sessions import FixedToolset
from ..scripts._script import matches
from ..session._metatools import SAVE
from ..session._open import open_session
from ..session._session import Session
from ..session._toolsets import CombinedToolset
from ..trace._trace import write_trace
from ._models import CountedModel
from ._offer import OfferedSession, save_toolset
from ._query import QueryToolset
from ._stats import Attempt
from ._tasks import MAX_STEPS, EvalTask, type_problem

__all__ = ["MODES", "output_failure", "run_attempt", "state_failure"]

MODES = ("fixed", "dynamic", "deferred", "query")

FIXED_NOTE = "Run the tools you selected with callTool(tool, arguments); selectTools answers with their parameters."

QUERY_RULES = """\
You are working with a GraphQL API through one tool, query, which runs a GraphQL document (with its
variables) and answers with the JSON the API gave. Use introspection to learn the API. When a call
fails, its result says what went wrong; fix the query and go on."""


async def run_attempt(task: EvalTask, model: CountedModel, mode: str, number: int, folder: Path, **session_options: Any) -> Attempt:
    """Run attempt `number` and judge it; `folder` receives its script and trace."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"attempt-{number:02d}"
    base: dict[str, Any] = {"task": task.name, "model": model.name, "mode": mode, "number": number}
    started = time.monotonic()
    try:
        session = await open_session(task.source, inputs=task.inputs, outputs=task.outputs, mutations=task.mutations, **session_options)
    except DagtoolsError as error:
        await model.aclose()
        return Attempt(**base, ok=False, failure=f"the session did not open: {error}", reason="session_error")
    try:
        result = await _agent(task, session, model, mode).run(task.prompt)
        seconds = time.monotonic() - started
        failure = output_failure(task, session, result.reason, result.outputs, result.message, result) or await state_failure(task, session)
        script = _write_script(stem.with_suffix(".script.json"), task, result)
        try:
            write_trace(session, stem.with_suffix(".trace.html"), title=f"{task.name}: {model.name}, {mode} tools, attempt {number}")
            trace = str(stem.with_suffix(".trace.html"))
        except DagtoolsError:
            trace = ""
    finally:
        await session.aclose()
        await model.aclose()
    input_tokens, output_tokens, by = model.tokens()
    return Attempt(
        **base,
        ok=failure is None,
        failure=failure or "",
        reason=result.reason,
        calls=len(result.calls()),
        steps=result.steps,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        tokens_counted_by=by,
        seconds=round(seconds, 3),
        script=script,
        trace=trace,
    )


def _agent(task: EvalTask, session: Session, model: CountedModel, mode: str) -> Agent:
    steps = task.max_steps or MAX_STEPS
    if mode in ("dynamic", "deferred"):
        return Agent(session, model, tools=cast(ToolMode, mode), max_steps=steps)
    if mode == "fixed":
        view = OfferedSession(session, FixedToolset(session))
        return Agent(cast(Session, view), model, system_prompt=FIXED_NOTE, max_steps=steps)
    query = QueryToolset(session.executor, mutations=task.mutations, budget=session.options.result_budget)
    view = OfferedSession(session, CombinedToolset([query, save_toolset(session)]), system=_query_prompt(task, session), record=True)
    return Agent(cast(Session, view), model, max_steps=steps)


def _query_prompt(task: EvalTask, session: Session) -> str:
    """The query tool's rules: the same task, inputs named by how to reach them rather than by handle."""
    parts = [QUERY_RULES + ("\n" + SAVE_RULE if session.outputs else "")]
    given = [f"- {name}: the root field `{spec['field']}`" for name, spec in task.inputs.items() if "field" in spec]
    given += [f"- {name} = {json.dumps(spec['value'])}" for name, spec in task.inputs.items() if "value" in spec]
    if given:
        parts.append("What you are given:\n" + "\n".join(given))
    if session.outputs:
        parts.append("Outputs to save:\n" + "\n".join(f"- {o.name} ({o.type})" for o in session.outputs))
        objects = [f"- {entry.id}: {entry.label}" for entry in session.registry]
        if objects:
            parts.append("Objects save can take:\n" + "\n".join(objects))
    return "\n\n".join(parts)


def output_failure(
    task: EvalTask, session: Session, reason: str, outputs: dict[str, Any], message: str = "", result: RunResult | None = None
) -> str | None:
    """The first check on the saved outputs that failed (or why nothing was saved), None when all passed.
    With the model's `result`, a refused `save` is the failure, with what the model was told."""
    if task.outputs and reason != "saved":
        refused = _refused_save(result, session) if result is not None else None
        if refused is not None:  # the model tried: what it was told is the failure, not that it stopped
            return f"save refused, then {_ENDED.get(reason, reason.replace('_', ' '))}: {refused}"
        why = f": {message}" if reason == "model_error" and message else ""  # what the model's side said
        return f"not saved ({reason.replace('_', ' ')}){why}"
    for check in task.output_checks:
        value = outputs.get(check.output)
        if check.has_equals and value != check.equals:
            return f"output {check.output} is not {json.dumps(check.equals)}"
        problem = type_problem(check, value)
        if problem:
            return f"output {check.output} {problem}"
        if check.contains is not None and check.contains.lower() not in str(value).lower():
            return f"output {check.output} does not contain {check.contains!r}"
        if check.handle is not None:
            entry = session.registry.get(value) if isinstance(value, str) else None
            if entry is None or not _is_a(session, entry.type_name, check.handle):
                return f"output {check.output} is not a {check.handle}"
    return None


#: How a run that never saved ended, after a refused save.
_ENDED = {
    "model_stopped": "the model stopped",
    "step_limit": "the step limit ended the run",
    "token_limit": "the token limit ended the run",
    "model_error": "the model failed",
}
#: How much of a refused save's error a failure quotes (the results and the report show it on one line).
_REFUSAL = 300


def _refused_save(result: RunResult, session: Session) -> str | None:
    """What the model's last refused `save` was told, or None when it never had one refused: the session's
    save tool called by its name, or through fixed mode's callTool (a tool the session does not have,
    naming the save tool as its `tool`)."""

    save = session.meta.get(SAVE)
    if save is None:  # no outputs asked for: no save to refuse
        return None

    def is_save(name: object) -> bool:
        return name == save.name

    told = None
    for call, done in result.calls():
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        if is_save(call.name) or (session.toolset.get(call.name) is None and is_save(arguments.get("tool"))):
            told = None
            if done is not None and done.is_error:
                value = done.value
                told = str(value.get("error", value) if isinstance(value, dict) else value)
    if told is None:
        return None
    return told if len(told) <= _REFUSAL else told[: _REFUSAL - 1].rstrip() + "…"


def _is_a(session: Session, type_name: str, expected: str) -> bool:
    """Whether an object of `type_name` is a `expected`: the same type, or one that implements it."""
    if type_name == expected:
        return True
    schema = getattr(session.catalogue, "schema", None)
    if schema is None:
        return False
    named, found = schema.get_type(expected), schema.get_type(type_name)
    return named is not None and found is not None and bool(schema.is_sub_type(named, found))


async def state_failure(task: EvalTask, session: Session) -> str | None:
    """The first state check the API's answer fails, None when all pass."""
    for index, check in enumerate(task.state_checks, start=1):
        try:
            response = await session.executor.execute(check.query, check.variables or None)
        except DagtoolsError as error:
            return f"state check {index} could not run: {error}"
        if response.errors:
            return f"state check {index}: the API answered errors"
        if not matches(check.expect, response.data):
            return f"state check {index}: the API's state is not as expected"
    return None


def _write_script(path: Path, task: EvalTask, result: RunResult) -> str:
    calls = []
    for call, outcome in result.calls():
        item: dict[str, Any] = {"id": call.id, "tool": call.name, "arguments": call.arguments}
        if outcome is not None and outcome.is_error:
            item["expect_error"] = True
        elif outcome is not None:
            item["expect"] = outcome.value
        calls.append(item)
    path.write_text(json.dumps({"inputs": task.inputs, "outputs": task.outputs, "calls": calls}, ensure_ascii=False, indent=1, default=str))
    return str(path)
