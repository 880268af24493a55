"""Example APIs shipped inside the package, so `dagtools demo` runs from an installed wheel.

`kitchen/` is the french-fries API (Dagger conventions) with its call script, MCP config and tools
config. It is a folder of files, not a package (so it adds no public-looking module): `dagtools demo`
and `dagtools mcp` load `api.py` by its path. A checkout's `examples/kitchen` is a link to this
folder: one copy, two paths.
"""

from pathlib import Path

__all__ = ["KITCHEN"]

#: The kitchen example's folder: api.py (the strawberry schema), fries.yaml, mcp.yaml, tools.json.
KITCHEN = Path(__file__).resolve().parent / "kitchen"
