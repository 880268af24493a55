"""Mellea, following seed 001: the session owns the calls and the context.

model_options={ModelOption.TOOLS: mellea_tools(session)}   # what the session offers now
for message in await call_tools(session, result):          # the turn, run and recorded
    ctx = ctx.add(message)
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from ._calls import call_tools, mellea_tools, tool_call_result

__all__ = ["call_tools", "mellea_tools", "tool_call_result"]

# The framework is imported on first use, not when this package is found.
__getattr__, __dir__ = _lazy_exports(__name__, {"call_tools": "._calls", "mellea_tools": "._calls", "tool_call_result": "._calls"})
