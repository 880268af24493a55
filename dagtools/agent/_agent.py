"""The automatic path of seed 001: a loop that lets a model drive a session until it saves.

Each step renders the session's current toolset for the model (so tools gained with selectTools
appear on the next turn), asks the model, records its turn, and runs its calls through the session,
which records their results. A run always ends with a `RunResult` whose `reason` says why.
With `tools="deferred"` every turn offers one constant list instead (see `_tool_modes`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

import anyio

from .._errors import ConfigError
from .._tools import ToolCall, ToolResult
from ..models._base import DeferringModel, Model, ModelResponse, Usage
from ..session._context import Message
from ..session._metatools import repr_value
from ..session._session import Session
from ._tool_modes import DeferredRun, ToolMode, deferred_format_for

__all__ = ["Agent", "AgentEvent", "RunReason", "RunResult", "system_prompt"]

#: Why a run ended; "interrupted" is never returned by `Agent.run` (a cancelled run raises): hosts that
#: stop a run, as `dagtools run` does on Ctrl-C, say so with it in the result they build.
RunReason = Literal["saved", "model_stopped", "step_limit", "token_limit", "model_error", "interrupted"]

RULES = """\
You are working with an API through tools. How they work:

- Every object is immutable and has an ID of the form Type#N, such as Potato#1. A tool never changes
  an object: it returns a new object with a new ID (a result such as {"result": "Potato#2"}). Pass the
  new ID to the next tool.
- Tools are named Type_field. A parameter named after a type (such as `Potato`) takes the ID of the
  object to work on; other parameters that name objects take IDs too.
- You start with few tools. The description of selectTools lists the objects you hold and the tools
  you can select; call selectTools with the names you need, and they are yours from the next turn on.
  Select several at once when you know you will need them. Not sure of a name? selectTools(search:
  "words for what you need") lists the tools that match, selecting none.
- When a call fails, its result says what went wrong and what to do next. Nothing changed; fix the
  call and go on."""

SAVE_RULE = """\
- When the task is done, call save with every requested output. The task is not finished until save
  succeeds."""

ANSWER_RULE = "- When the task is done, answer in plain text without calling a tool."


def system_prompt(session: Session, extra: str | None = None) -> str:
    """Seed 000's rules, then the objects and values the host gave and the outputs it wants."""
    parts = [RULES + "\n" + (SAVE_RULE if session.outputs else ANSWER_RULE)]
    objects = [f"- {entry.id}: {entry.label}" for entry in session.registry]
    if objects:
        parts.append("Objects you start with:\n" + "\n".join(objects))
    if session.values:
        parts.append(
            "Values you are given:\n"
            + "\n".join(f"- {v.name} = {repr_value(v.value)}" + (f": {v.description}" if v.description else "") for v in session.values)
        )
    if session.outputs:
        parts.append(
            "Outputs to save:\n"
            + "\n".join(f"- {o.name} ({o.type})" + (f": {o.description}" if o.description else "") for o in session.outputs)
        )
    if extra:
        parts.append(extra)
    return "\n\n".join(parts)


@dataclass(frozen=True, kw_only=True)
class AgentEvent:
    """Something a run did, for hosts that show progress: a model turn, a call's result, a nudge, the end."""

    kind: Literal["model", "call", "nudge", "end"]
    step: int
    response: ModelResponse | None = None
    call: ToolCall | None = None
    result: ToolResult | None = None
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """How a run ended: the saved outputs, why it stopped (`reason` and a readable `message`), the steps
    and tokens it took, and the whole conversation."""

    outputs: dict[str, Any]
    reason: RunReason
    message: str
    steps: int
    usage: Usage
    transcript: list[Message] = field(default_factory=list)
    text: str = ""

    @property
    def ok(self) -> bool:
        return self.reason == "saved"

    def calls(self) -> list[tuple[ToolCall, ToolResult | None]]:
        """Every call the model made, paired with its recorded result."""
        results = {m.tool_call_id: m for m in self.transcript if m.role == "tool"}
        out = []
        for message in self.transcript:
            for call in message.tool_calls:
                recorded = results.get(call.id)
                result = (
                    None
                    if recorded is None
                    else ToolResult(call_id=call.id, name=call.name, value=_parse(recorded.content), is_error=recorded.is_error)
                )
                out.append((call, result))
        return out


class Agent:
    """A model driving a session. `run(prompt)` is async; `run_sync(prompt)` wraps it for scripts.

    `tools` is "dynamic" (the session's tools, growing as the model selects them) or "deferred" (one
    list all run long, for warm prompt caches; anthropic: and openai-responses: models only)."""

    def __init__(
        self,
        session: Session,
        model: Model,
        *,
        max_steps: int = 30,
        max_tokens: int | None = None,
        system_prompt: str | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        turn_timeout: float | None = None,
        tools: ToolMode = "dynamic",
    ) -> None:
        if max_steps < 1:
            raise ConfigError("max_steps must be at least 1.")
        if turn_timeout is not None and turn_timeout <= 0:
            raise ConfigError("turn_timeout must be more than 0 seconds.")
        self.session = session
        self.model = model
        self.max_steps = max_steps
        self.max_tokens = max_tokens
        self.system_prompt = system_prompt
        self.on_event = on_event
        self.turn_timeout = turn_timeout
        self.tools: ToolMode = tools
        self._deferred_format = deferred_format_for(model, tools)

    async def run(self, prompt: str) -> RunResult:
        session = self.session
        context = session.context
        if not any(m.role == "system" for m in context):
            # First, even when the host ran calls before handing the context over.
            context.messages.insert(0, Message(role="system", content=system_prompt(session, self.system_prompt)))
        context.add_user(prompt)
        usage = Usage()
        steps = 0
        nudged = False
        last_text = ""
        deferred = DeferredRun(session, self._deferred_format) if self._deferred_format else None
        while True:
            if steps >= self.max_steps:
                return self._end(
                    "step_limit", f"stopped after {steps} model turns (the step limit) " + self._unsaved(), steps, usage, last_text
                )
            if self.max_tokens is not None and usage.total_tokens >= self.max_tokens:
                return self._end(
                    "token_limit",
                    f"stopped after {usage.total_tokens} tokens (the limit is {self.max_tokens}) " + self._unsaved(),
                    steps,
                    usage,
                    last_text,
                )
            steps += 1
            try:
                # One deadline for the model's whole turn, its retries included.
                with anyio.move_on_after(self.turn_timeout) as deadline:
                    if deferred is not None:
                        model = cast(DeferringModel, self.model)
                        response = await model.complete(list(context), deferred.tools(), reveals=deferred.reveals)
                    else:
                        tools = session.render_tools(getattr(self.model, "tool_format", "openai"))
                        response = await self.model.complete(list(context), tools)
            except Exception as error:  # any model failure ends the run with a reason, never a traceback
                message = f"the model failed: {error}" if str(error) else f"the model failed: {type(error).__name__}"
                return self._end("model_error", message, steps, usage, last_text)
            if deadline.cancelled_caught:
                message = (
                    f"the model failed: no answer within the turn's deadline of {self.turn_timeout:g} s (retries included); "
                    "allow more time with turn_timeout (--turn-timeout) or use a faster model"
                )
                return self._end("model_error", message, steps, usage, last_text)
            usage = usage + response.usage
            calls = tuple(replace(call, id=call.id or f"call_{steps}_{i + 1}") for i, call in enumerate(response.tool_calls))
            context.add_assistant(response.text, calls)
            last_text = response.text or last_text
            self._emit(AgentEvent(kind="model", step=steps, response=replace(response, tool_calls=calls)))
            if calls:
                await self._run_calls(calls, steps, deferred)
                if session.done:
                    return self._end("saved", "saved " + ", ".join(session.saved), steps, usage, last_text)
                continue
            if not session.outputs:
                return self._end("model_stopped", "the model answered without calling a tool", steps, usage, last_text)
            if nudged:
                return self._end(
                    "model_stopped", "the model stopped twice without saving " + ", ".join(session.missing_outputs), steps, usage, last_text
                )
            nudged = True
            nudge = self._nudge()
            context.add_user(nudge)
            self._emit(AgentEvent(kind="nudge", step=steps, text=nudge))

    def run_sync(self, prompt: str) -> RunResult:
        return anyio.run(self.run, prompt)

    async def _run_calls(self, calls: Sequence[ToolCall], step: int, deferred: DeferredRun | None) -> None:
        session = self.session
        results = await session.call_tools(list(calls))  # one model turn: reads batched, writes in order
        for call, result in zip(calls, results):
            if result.pending:
                # A client tool: no one runs it inside an automatic run, so the model hears so.
                message = f"{call.name} is run by the client, and no client is attached to this run. Use another tool."
                result = session.tool_call_result(call.id, ToolResult.error(call, message))
            if deferred is not None:
                deferred.record(call, result)
            self._emit(AgentEvent(kind="call", step=step, call=call, result=result))

    def _nudge(self) -> str:
        missing = self.session.missing_outputs
        return (
            f"You stopped without saving, so the user has nothing yet. Still missing: {', '.join(missing)}. "
            "Finish the task and call save with every output; if you cannot, say why."
        )

    def _unsaved(self) -> str:
        missing = self.session.missing_outputs
        return f"before saving {', '.join(missing)}" if missing and not self.session.done else ""

    def _end(self, reason: RunReason, message: str, steps: int, usage: Usage, text: str) -> RunResult:
        result = RunResult(
            outputs=dict(self.session.saved),
            reason=reason,
            message=message.strip(),
            steps=steps,
            usage=usage,
            transcript=list(self.session.context),
            text=text,
        )
        self._emit(AgentEvent(kind="end", step=steps, text=result.message))
        return result

    def _emit(self, event: AgentEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)


def _parse(content: str) -> Any:
    try:
        return json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return content
