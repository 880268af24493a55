"""OpenAI Agents SDK: `Agent(name=..., tools=DagtoolsTools(session), instructions=...)`."""

from ._tools import DagtoolsTools

__all__ = ["DagtoolsTools"]
