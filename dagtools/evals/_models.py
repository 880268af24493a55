"""The model of one attempt: a fresh instance each time, and what it was sent, to count tokens.

A `script:PATH` model plays a script as `dagtools run` does, with two additions for evals:

- PATH may be a folder: an attempt plays `PATH/TASK/MODE.yaml`, else `PATH/TASK.yaml`, so each task
  and tool mode has its own script (the fixed tools and the query tool are called differently);
- a script may hold `attempts: [script, script, ...]`: attempt N plays item N (cycling), so a suite
  can fail some attempts on purpose and the counting can be checked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._closing import AsyncClosing
from .._errors import ConfigError
from .._yaml import read_data
from ..models._base import Model, ModelResponse
from ..models._factory import get_model
from ..models._scripted import ScriptedModel
from ..session._context import Message
from ..session._metatools import estimate_tokens

__all__ = ["CountedModel", "model_for", "token_counter"]


def model_for(spec: str, task: str, mode: str, number: int, *, base_url: str | None = None, **options: Any) -> Model:
    """A new model for attempt `number` (from 1) of `task` in `mode`."""
    provider, _, name = spec.partition(":")
    if provider != "script" or not name:
        return get_model(spec, base_url=base_url, **options)
    path = Path(name)
    if path.is_dir():
        found = [p for p in (path / task / f"{mode}.yaml", path / f"{task}.yaml") if p.exists()]
        if not found:
            raise ConfigError(f"Model {spec}: no script for task {task} in {mode} mode; write {path / task / (mode + '.yaml')}.")
        path = found[0]
    data = read_data(path, "Model script")
    if isinstance(data, Mapping) and "attempts" in data:
        attempts = data["attempts"]
        if not isinstance(attempts, Sequence) or isinstance(attempts, str) or not attempts:
            raise ConfigError(f"Model script {path}: attempts must be a non-empty list of scripts.")
        data = attempts[(number - 1) % len(attempts)]
    return ScriptedModel(data, name=spec)


@dataclass
class _Turn:
    sent: str
    response: ModelResponse


@dataclass
class CountedModel(AsyncClosing):
    """`model`, keeping what each turn sent and got back. It defers tools exactly when `model` does."""

    model: Any
    turns: list[_Turn] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.name = str(getattr(self.model, "name", "model"))
        self.tool_format = str(getattr(self.model, "tool_format", "openai"))
        deferred = getattr(self.model, "deferred_format", None)
        if deferred:
            self.deferred_format = deferred

    async def complete(self, messages: Sequence[Message], tools: list[dict[str, Any]], **options: Any) -> ModelResponse:
        response: ModelResponse = await self.model.complete(messages, tools, **options)
        sent = json.dumps([[m.role, m.content, [[c.name, c.arguments] for c in m.tool_calls]] for m in messages] + [tools], default=str)
        self.turns.append(_Turn(sent=sent, response=response))
        return response

    async def aclose(self) -> None:
        await self.model.aclose()

    def tokens(self) -> tuple[int, int, str]:
        """Input and output tokens, and who counted them: the provider ("model") where it counted every
        turn, else o200k_base (when bpe-openai is installed) or an estimate of 4 bytes a token."""
        own = [t.response.usage for t in self.turns]
        if self.turns and not isinstance(self.model, ScriptedModel) and all(u.total_tokens > 0 for u in own):
            return sum(u.input_tokens for u in own), sum(u.output_tokens for u in own), "model"
        count, by = token_counter()
        said = [t.response.text + json.dumps([[c.name, c.arguments] for c in t.response.tool_calls], default=str) for t in self.turns]
        return sum(count(t.sent) for t in self.turns), sum(count(s) for s in said), by


def token_counter() -> tuple[Any, str]:
    try:
        import bpe_openai  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return estimate_tokens, "estimate"
    encoding = bpe_openai.get_encoding("o200k_base")
    return (lambda text: len(encoding.encode(text))), "o200k"
