"""A whole eval: every task, model and tool mode, N attempts each, run concurrently under a cap."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from .._errors import ConfigError, DagtoolsError
from ..agent._tool_modes import deferred_format_for
from ._attempt import MODES, run_attempt
from ._models import CountedModel, model_for
from ._stats import Attempt
from ._tasks import EvalTask

__all__ = ["run_eval"]


async def run_eval(
    tasks: Sequence[EvalTask],
    models: Sequence[str],
    modes: Sequence[str],
    attempts: int,
    out: Path,
    *,
    concurrency: int = 4,
    model_options: dict[str, Any] | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    on_skip: Callable[[str], None] | None = None,
    stop: anyio.CancelScope | None = None,
    **session_options: Any,
) -> list[Attempt]:
    """Every attempt, in the order of tasks, models, modes and attempt numbers. A model that cannot
    take a mode (deferred tools need anthropic: or openai-responses:) is left out of it, said by `on_skip`.

    Cancelling `stop` ends the eval early: the attempts under way are cancelled (not counted: a cut-off
    attempt says nothing of the model) and those finished are returned, in the same order."""
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ConfigError(f"--tools takes {', '.join(MODES)} (comma-separated), not {', '.join(unknown) or 'nothing'}.")
    if attempts < 1 or concurrency < 1:
        raise ConfigError("-n and --concurrency must be at least 1.")
    options = model_options or {}
    jobs: list[tuple[EvalTask, str, str, int]] = []
    for model in models:
        for mode in modes:
            if mode == "deferred" and not await _can_defer(model, tasks[0].name, options):
                if on_skip is not None:
                    on_skip(
                        f"{model} cannot take deferred tools (only anthropic: and openai-responses: models can); left out of that mode."
                    )
                continue
            jobs += [(task, model, mode, n) for task in tasks for n in range(1, attempts + 1)]
    if not jobs:  # before anything is written: the last report stays as it was
        raise ConfigError(
            f"No model given can take the tool modes asked for ({', '.join(modes)}): deferred tools need an anthropic: "
            "or openai-responses: model. Add a mode any model takes, such as --tools dynamic,deferred, or such a model."
        )
    limiter = anyio.CapacityLimiter(concurrency)
    done: dict[tuple[str, str, str, int], Attempt] = {}

    async def one(task: EvalTask, spec: str, mode: str, number: int) -> None:
        async with limiter:
            model = CountedModel(model_for(spec, task.name, mode, number, **options))
            folder = out / _slug(task.name) / _slug(spec) / mode
            try:
                attempt = await run_attempt(task, model, mode, number, folder, **session_options)
            except ConfigError:
                raise  # the task or the model is wrong for every attempt: stop and say so
            except Exception as error:  # one attempt's failure (a folder, the API) is counted, not fatal to the rest
                failure = f"the attempt failed: {type(error).__name__}: {error}"
                attempt = Attempt(task=task.name, model=model.name, mode=mode, number=number, ok=False, failure=failure, reason="error")
        done[(task.name, spec, mode, number)] = attempt
        if on_attempt is not None:
            on_attempt(attempt)

    try:
        with stop or anyio.CancelScope():
            async with anyio.create_task_group() as group:
                for job in jobs:
                    group.start_soon(one, *job)
    except BaseExceptionGroup as failed:  # a task or model wrong for every attempt: the first such error, as it is
        wrong = _first(failed, DagtoolsError)
        if wrong is not None:
            raise wrong from None
        raise
    order = {t.name: i for i, t in enumerate(tasks)}
    keys = sorted(done, key=lambda k: (order[k[0]], models.index(k[1]), list(modes).index(k[2]), k[3]))
    return [done[k] for k in keys]


async def _can_defer(spec: str, task: str, options: dict[str, Any]) -> bool:
    try:
        model = model_for(spec, task, "deferred", 1, **options)
    except ConfigError:
        return not spec.startswith("script:")
    try:
        deferred_format_for(model, "deferred")
        return True
    except DagtoolsError:
        return False
    finally:
        await model.aclose()


def _first(group: BaseExceptionGroup, kind: type[Exception]) -> Exception | None:
    for error in group.exceptions:
        if isinstance(error, kind):
            return error
        if isinstance(error, BaseExceptionGroup):
            found = _first(error, kind)
            if found is not None:
                return found
    return None


def _slug(text: str) -> str:
    """A folder name for a task or a model: what `script:path/to/dir` or `openai:gpt-4o` leaves readable."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80] or "x"
