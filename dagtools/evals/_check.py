"""Scoring a task done outside a model run: a stored session (a person's or a terminal agent's, through
`dagtools shell --session NAME`) judged by the task's checks, as one attempt of its own."""

from __future__ import annotations

import json
import time

from ..session._session import Session
from ._attempt import output_failure, state_failure
from ._models import token_counter
from ._stats import Attempt
from ._tasks import EvalTask

__all__ = ["check_session"]


async def check_session(task: EvalTask, session: Session, *, model: str = "shell", mode: str = "shell") -> Attempt:
    """One attempt made of what `session` holds: its saved outputs and the API's state now. Tokens are
    what the session answered (input) and the calls written to it (output), counted as a model run's are
    where the provider gives no counts."""
    started = time.monotonic()
    await session.catch_up()
    reason = "saved" if session.done else "model_stopped"
    failure = output_failure(task, session, reason, dict(session.saved)) or await state_failure(task, session)
    count, by = token_counter()
    calls = [call for message in session.context.messages for call in message.tool_calls]
    read = sum(count(m.content) for m in session.context.messages if m.role == "tool")
    written = sum(count(json.dumps([c.name, c.arguments], ensure_ascii=False, default=str)) for c in calls)
    return Attempt(
        task=task.name,
        model=model,
        mode=mode,
        number=1,
        ok=failure is None,
        failure=failure or "",
        reason=reason,
        calls=len(calls),
        steps=len(calls),
        input_tokens=read,
        output_tokens=written,
        tokens_counted_by=by,
        seconds=round(time.monotonic() - started, 3),
    )
