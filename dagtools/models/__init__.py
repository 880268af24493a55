"""Models an agent can run on: OpenAI (Chat Completions and Responses) and compatible servers,
Anthropic and Gemini through their official SDKs (each an optional extra), and scripted models for
tests."""

from ._anthropic import AnthropicModel
from ._base import Model, ModelResponse, Usage
from ._factory import get_model
from ._gemini import GeminiModel
from ._openai import OpenAIModel
from ._responses import OpenAIResponsesModel
from ._scripted import FunctionModel, ModelRequest, ScriptedModel

__all__ = [
    "AnthropicModel",
    "FunctionModel",
    "GeminiModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "ScriptedModel",
    "Usage",
    "get_model",
]
