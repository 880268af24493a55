"""The agent loop: a model grows its tools with selectTools and ends by saving the outputs."""

from ._agent import Agent, AgentEvent, RunResult

__all__ = ["Agent", "AgentEvent", "RunResult"]
