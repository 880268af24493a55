"""pydantic-ai: `Agent(model, toolsets=[DagtoolsToolset(session)])`."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._toolset import DagtoolsToolset

__all__ = ["DagtoolsToolset"]


def __getattr__(name: str) -> Any:
    """The framework is imported on first use, not when this package is found."""
    if name in __all__:
        from . import _toolset

        return getattr(_toolset, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
