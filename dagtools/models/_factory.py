"""`get_model("provider:name")`: the CLI's `--model` and the Python API name models the same way."""

from __future__ import annotations

from typing import Any

from .._errors import ConfigError
from ._base import Model
from ._scripted import ScriptedModel

__all__ = ["PROVIDERS", "get_model"]

PROVIDERS = ("openai", "openai-responses", "anthropic", "gemini", "ollama", "script")


def get_model(spec: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> Model:
    """`openai:gpt-4o-mini` (Chat Completions), `openai-responses:gpt-4o-mini` (the Responses API),
    `anthropic:claude-...`, `gemini:gemini-2.5-flash`, `ollama:llama3.2` (an OpenAI-compatible server
    on localhost:11434) or `script:turns.yaml`. `base_url` points a provider at any compatible server;
    `options` go to the model's constructor (`extra=` is merged into every request body)."""
    provider, sep, name = spec.partition(":")
    if not sep or not name:
        raise ConfigError(
            f"Model {spec!r}: write provider:name, with provider one of {', '.join(PROVIDERS)} "
            "(such as openai:gpt-4o-mini or script:turns.yaml)."
        )
    if provider == "script":
        return ScriptedModel(name, name=f"script:{name}")
    if provider in ("openai", "ollama"):
        from ._openai import OpenAIModel

        if provider == "ollama":
            base_url = base_url or "http://localhost:11434/v1"
        return OpenAIModel(name, base_url=base_url, api_key=api_key, **options)
    if provider == "openai-responses":
        from ._responses import OpenAIResponsesModel

        return OpenAIResponsesModel(name, base_url=base_url, api_key=api_key, **options)
    if provider == "anthropic":
        from ._anthropic import AnthropicModel

        return AnthropicModel(name, base_url=base_url, api_key=api_key, **options)
    if provider == "gemini":
        from ._gemini import GeminiModel

        return GeminiModel(name, base_url=base_url, api_key=api_key, **options)
    raise ConfigError(f"Model {spec!r}: unknown provider {provider!r}; use one of {', '.join(PROVIDERS)}.")
