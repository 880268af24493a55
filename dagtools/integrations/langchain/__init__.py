"""LangChain and LangGraph: `create_agent(model, middleware=[DagtoolsMiddleware(session)])`, or
`langchain_tools(session)` to bind the session's current tools yourself."""

from ._middleware import DagtoolsMiddleware, langchain_tools

__all__ = ["DagtoolsMiddleware", "langchain_tools"]
