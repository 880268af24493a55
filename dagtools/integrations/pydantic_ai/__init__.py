"""pydantic-ai: `Agent(model, toolsets=[DagtoolsToolset(session)])`."""

from ._toolset import DagtoolsToolset

__all__ = ["DagtoolsToolset"]
