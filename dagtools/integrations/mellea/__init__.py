"""Mellea, following seed 001: the session owns the calls and the context.

model_options={ModelOption.TOOLS: mellea_tools(session)}   # what the session offers now
for message in await call_tools(session, result):          # the turn, run and recorded
    ctx = ctx.add(message)
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._calls import call_tools, mellea_tools, tool_call_result

__all__ = ["call_tools", "mellea_tools", "tool_call_result"]


def __getattr__(name: str) -> Any:
    """The framework is imported on first use, not when this package is found."""
    if name in __all__:
        from . import _calls

        return getattr(_calls, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
