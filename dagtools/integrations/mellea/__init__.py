"""Mellea, following seed 001: the session owns the calls and the context.

model_options={ModelOption.TOOLS: mellea_tools(session)}   # what the session offers now
for message in await call_tools(session, result):          # the turn, run and recorded
    ctx = ctx.add(message)
"""

from ._calls import call_tools, mellea_tools, tool_call_result

__all__ = ["call_tools", "mellea_tools", "tool_call_result"]
