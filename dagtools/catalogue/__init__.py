"""The catalogue: every tool compiled from one schema (names, JSON Schema of arguments), and its
renderings for each provider's tool format. Immutable and shared by every session on the schema."""

from ._catalogue import Catalogue, compile_catalogue
from ._render import render_tools

__all__ = ["Catalogue", "compile_catalogue", "render_tools"]
