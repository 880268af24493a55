"""Models an agent can run on: OpenAI-compatible servers, Anthropic, and scripted models for tests."""

from .anthropic import AnthropicModel
from .base import Model, ModelResponse, Usage
from .factory import get_model
from .openai import OpenAIModel
from .scripted import FunctionModel, ModelRequest, ScriptedModel

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
