"""dagtools: point LLM agents at any GraphQL API.

Every field of every object type is a tool `Type_field`; every object a call returns is an immutable
`Type#N` handle; `selectTools` grows the active toolset on demand and `save` hands outputs back.
"""

from .agent import Agent, RunResult
from .catalogue import Catalogue, compile_catalogue
from .connect import open_session
from .context import Context, Message
from .dialect import Dialect, detect_dialect
from .errors import (
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
from .executors import Executor, HttpExecutor, LocalExecutor, Response
from .handles import Handle, Step
from .models import FunctionModel, Model, ModelResponse, ScriptedModel, Usage, get_model
from .outputs import Output
from .providers import render_tools
from .registry import ObjectEntry, Registry
from .schema import LoadedSchema, load_schema
from .session import Session
from .tools import Tool, ToolCall, ToolResult
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
