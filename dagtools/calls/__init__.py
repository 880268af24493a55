"""Running field calls: binding the model's arguments, building documents from handles, sending them
(one request per batch of reads) and reading answers into `Type#N` objects.

This layer writes into a session's registry and long values (dagtools.registry, the layer below),
which it is given; it never imports the session, which sits above it."""

from ..registry import Handle, Step  # they lived here before dagtools.registry; still importable here
from ._field import FieldCalls, PreparedCall

__all__ = ["FieldCalls", "Handle", "PreparedCall", "Step"]
