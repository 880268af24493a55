"""LangChain and LangGraph: `create_agent(model, middleware=[DagtoolsMiddleware(session)])`, or
`langchain_tools(session)` to bind the session's current tools yourself."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._middleware import DagtoolsMiddleware, langchain_tools

__all__ = ["DagtoolsMiddleware", "langchain_tools"]


def __getattr__(name: str) -> Any:
    """The framework is imported on first use, not when this package is found."""
    if name in __all__:
        from . import _middleware

        return getattr(_middleware, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
