"""OpenAI Agents SDK: `Agent(name=..., tools=DagtoolsTools(session), instructions=...)`."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._tools import DagtoolsTools

__all__ = ["DagtoolsTools"]


def __getattr__(name: str) -> Any:
    """The framework is imported on first use, not when this package is found."""
    if name in __all__:
        from . import _tools

        return getattr(_tools, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
