"""`get_model("provider:name")`: the CLI's `--model` and the Python API name models the same way."""

from __future__ import annotations

from typing import Any

from .._errors import ConfigError
from ._anthropic import AnthropicModel
from ._base import Model
from ._openai import OpenAIModel
from ._scripted import ScriptedModel

__all__ = ["get_model"]

PROVIDERS = ("openai", "anthropic", "ollama", "script")


def get_model(spec: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> Model:
    """`openai:gpt-4o-mini`, `anthropic:claude-...`, `ollama:llama3.2` (an OpenAI-compatible server on
    localhost:11434) or `script:turns.yaml`. `base_url` points openai/anthropic at any compatible server."""
    provider, sep, name = spec.partition(":")
    if not sep or not name:
        raise ConfigError(
            f"Model {spec!r}: write provider:name, with provider one of {', '.join(PROVIDERS)} "
            "(such as openai:gpt-4o-mini or script:turns.yaml)."
        )
    if provider == "openai":
        return OpenAIModel(name, base_url=base_url, api_key=api_key, **options)
    if provider == "ollama":
        return OpenAIModel(name, base_url=base_url or "http://localhost:11434/v1", api_key=api_key or "ollama", **options)
    if provider == "anthropic":
        return AnthropicModel(name, base_url=base_url, api_key=api_key, **options)
    if provider == "script":
        return ScriptedModel(name, name=f"script:{name}")
    raise ConfigError(f"Model {spec!r}: unknown provider {provider!r}; use one of {', '.join(PROVIDERS)}.")
