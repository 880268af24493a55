"""OpenAI Agents SDK: `Agent(name=..., tools=DagtoolsTools(session), instructions=...)`."""

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from ._tools import DagtoolsTools

__all__ = ["DagtoolsTools"]

# The framework is imported on first use, not when this package is found.
__getattr__, __dir__ = _lazy_exports(__name__, {"DagtoolsTools": "._tools"})
