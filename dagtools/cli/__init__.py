"""The `dagtools` command: tools, call, run, demo and mcp."""

from ._main import main

__all__ = ["main"]
