"""Models an agent can run on: OpenAI-compatible servers, Anthropic, and scripted models for tests."""

from ._anthropic import AnthropicModel
from ._base import Model, ModelResponse, Usage
from ._factory import get_model
from ._openai import OpenAIModel
from ._scripted import FunctionModel, ModelRequest, ScriptedModel

__all__ = [
    "AnthropicModel",
    "FunctionModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "ScriptedModel",
    "Usage",
    "get_model",
]
