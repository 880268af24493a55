"""The catalogue: every tool compiled from one schema (names, JSON Schema of arguments), and its
renderings for each provider's tool format. Immutable and shared by every session on the schema."""

import typing as _typing

from .._lazy import lazy_exports as _lazy_exports

# Imported on first use: the command line reads the format names without building a schema.
__getattr__, __dir__ = _lazy_exports(__name__, {"Catalogue": "._catalogue", "compile_catalogue": "._catalogue", "render_tools": "._render"})

if _typing.TYPE_CHECKING:
    from ._catalogue import Catalogue, compile_catalogue
    from ._render import render_tools

__all__ = ["Catalogue", "compile_catalogue", "render_tools"]
