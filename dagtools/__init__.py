"""dagtools: point LLM agents at any GraphQL API.

Every field of every object type is a tool `Type_field`; every object a call returns is an immutable
`Type#N` handle; `selectTools` grows the active toolset on demand and `save` hands outputs back.

The public surface is what this module exports; everything else lives in private modules and may
move. The package is in layers, each importing only those below it; the order is written once, in
`dagtools/_layers.py`, which tests/test_layers.py holds the code to.
"""

import logging
import typing as _typing

from ._errors import (
    CatalogueError,
    ClosedError,
    ConfigError,
    DagtoolsError,
    ExecutorError,
    HttpStatusError,
    ModelError,
    NoServerError,
    SchemaLoadError,
    StoreBusyError,
    StoreConflictError,
    StoreError,
    ToolCallError,
    TransportError,
)
from ._lazy import lazy_exports as _lazy_exports
from ._tools import Tool, ToolCall, ToolResult

# Where each of the other public names lives. They are imported on first use, so the command line
# and a script that needs one of them start without importing every layer (graphql-core, httpx, ...).
_WHERE = {
    **dict.fromkeys(["Agent", "AgentEvent", "RunResult"], ".agent"),
    **dict.fromkeys(["Handle", "ObjectEntry", "Registry", "Step"], ".registry"),
    **dict.fromkeys(["Catalogue", "compile_catalogue", "render_tools"], ".catalogue"),
    "CatalogueOptions": ".catalogue._options",
    **dict.fromkeys(["Executor", "HttpExecutor", "LocalExecutor", "Response"], ".executors"),
    **dict.fromkeys(["Dialect", "LoadedSchema", "detect_dialect", "load_schema"], ".load"),
    **dict.fromkeys(
        ["AnthropicModel", "FunctionModel", "Model", "ModelResponse", "OpenAIModel", "ScriptedModel", "Usage", "get_model"], ".models"
    ),
    **dict.fromkeys(["Context", "Message", "Output", "Session", "open_session"], ".session"),
    "SessionOptions": ".session._options",
    "SessionState": ".session._state",
    **dict.fromkeys(["Trace", "write_trace"], ".trace"),
    **dict.fromkeys(["BatchingToolset", "CombinedToolset", "FunctionToolset", "OwnedTool", "Toolset"], ".session._toolsets"),
    **dict.fromkeys(
        ["ChatStore", "RestApi", "ToolsConfig", "attach_tools_config", "export_tools_config", "load_tools_config"], ".toolsconfig"
    ),
}
__getattr__, __dir__ = _lazy_exports(__name__, _WHERE)

if _typing.TYPE_CHECKING:
    from .agent import Agent, AgentEvent, RunResult
    from .catalogue import Catalogue, compile_catalogue, render_tools
    from .catalogue._options import CatalogueOptions
    from .executors import Executor, HttpExecutor, LocalExecutor, Response
    from .load import Dialect, LoadedSchema, detect_dialect, load_schema
    from .models import AnthropicModel, FunctionModel, Model, ModelResponse, OpenAIModel, ScriptedModel, Usage, get_model
    from .registry import Handle, ObjectEntry, Registry, Step
    from .session import Context, Message, Output, Session, open_session
    from .session._options import SessionOptions
    from .session._state import SessionState
    from .session._toolsets import BatchingToolset, CombinedToolset, FunctionToolset, OwnedTool, Toolset
    from .toolsconfig import ChatStore, RestApi, ToolsConfig, attach_tools_config, export_tools_config, load_tools_config
    from .trace import Trace, write_trace

__version__ = "0.1.0"

# Silent unless the application configures logging (`dagtools -v` does).
logging.getLogger("dagtools").addHandler(logging.NullHandler())

__all__ = [
    "Agent",
    "AgentEvent",
    "AnthropicModel",
    "BatchingToolset",
    "Catalogue",
    "CatalogueError",
    "CatalogueOptions",
    "ChatStore",
    "ClosedError",
    "CombinedToolset",
    "ConfigError",
    "Context",
    "DagtoolsError",
    "Dialect",
    "Executor",
    "ExecutorError",
    "FunctionModel",
    "FunctionToolset",
    "Handle",
    "HttpExecutor",
    "HttpStatusError",
    "LoadedSchema",
    "LocalExecutor",
    "Message",
    "Model",
    "ModelError",
    "ModelResponse",
    "NoServerError",
    "ObjectEntry",
    "OpenAIModel",
    "Output",
    "OwnedTool",
    "Registry",
    "Response",
    "RestApi",
    "RunResult",
    "SchemaLoadError",
    "ScriptedModel",
    "Session",
    "SessionOptions",
    "SessionState",
    "Step",
    "StoreBusyError",
    "StoreConflictError",
    "StoreError",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolResult",
    "ToolsConfig",
    "Toolset",
    "Trace",
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
    "write_trace",
]
