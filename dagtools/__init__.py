"""dagtools: point LLM agents at any GraphQL API.

Every field of every object type is a tool `Type_field`; every object a call returns is an immutable
`Type#N` handle; `selectTools` grows the active toolset on demand and `save` hands outputs back.
"""

from ._errors import (
    CatalogueError,
    ConfigError,
    DagtoolsError,
    ExecutorError,
    HttpStatusError,
    ModelError,
    SchemaLoadError,
    ToolCallError,
    TransportError,
)
from ._tools import Tool, ToolCall, ToolResult
from .agent._agent import Agent, RunResult
from .calls._handles import Handle, Step
from .catalogue._catalogue import Catalogue, compile_catalogue
from .catalogue._render import render_tools
from .executors import Executor, HttpExecutor, LocalExecutor, Response
from .load._dialect import Dialect, detect_dialect
from .load._sources import LoadedSchema, load_schema
from .models import FunctionModel, Model, ModelResponse, ScriptedModel, Usage, get_model
from .session._context import Context, Message
from .session._open import open_session
from .session._outputs import Output
from .session._registry import ObjectEntry, Registry
from .session._session import Session
from .toolsconfig import ChatStore, RestApi, ToolsConfig, attach_tools_config, export_tools_config, load_tools_config

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Catalogue",
    "CatalogueError",
    "ChatStore",
    "ConfigError",
    "Context",
    "DagtoolsError",
    "Dialect",
    "Executor",
    "ExecutorError",
    "FunctionModel",
    "Handle",
    "HttpExecutor",
    "HttpStatusError",
    "LoadedSchema",
    "LocalExecutor",
    "Message",
    "Model",
    "ModelError",
    "ModelResponse",
    "ObjectEntry",
    "Output",
    "Registry",
    "Response",
    "RestApi",
    "RunResult",
    "SchemaLoadError",
    "ScriptedModel",
    "Session",
    "Step",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolResult",
    "ToolsConfig",
    "TransportError",
    "Usage",
    "attach_tools_config",
    "compile_catalogue",
    "detect_dialect",
    "export_tools_config",
    "get_model",
    "load_schema",
    "load_tools_config",
    "open_session",
    "render_tools",
]
