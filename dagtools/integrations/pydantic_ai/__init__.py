"""pydantic-ai: `Agent(model, toolsets=[DagtoolsToolset(session)])`."""

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from ._toolset import DagtoolsToolset

__all__ = ["DagtoolsToolset"]

# The framework is imported on first use, not when this package is found.
__getattr__, __dir__ = _lazy_exports(__name__, {"DagtoolsToolset": "._toolset"})
