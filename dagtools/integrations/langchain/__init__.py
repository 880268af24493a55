"""LangChain and LangGraph: `create_agent(model, middleware=[DagtoolsMiddleware(session)])`, or
`langchain_tools(session)` to bind the session's current tools yourself."""

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from ._middleware import DagtoolsMiddleware, langchain_tools

__all__ = ["DagtoolsMiddleware", "langchain_tools"]

# The framework is imported on first use, not when this package is found.
__getattr__, __dir__ = _lazy_exports(__name__, {"DagtoolsMiddleware": "._middleware", "langchain_tools": "._middleware"})
