"""Pictures of a run: every `Type#N` of a session a node, linked to the object and the call it came
from, as Mermaid, Markdown or an offline HTML page."""

from ._trace import Trace, write_trace

__all__ = ["Trace", "write_trace"]
