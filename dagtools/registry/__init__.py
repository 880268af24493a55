"""What a session holds of the objects it has seen: handles (how to reach an object again), identity
(when two places hold one object, and when a value read is still fresh), the registry (`Type#N` <->
handle, with what made each object and what it looks like) and the long values a result was cut from.
Field calls write into them, so they sit below `calls/`."""

from ._handles import Handle, Step
from ._registry import ObjectEntry, Registry

__all__ = ["Handle", "ObjectEntry", "Registry", "Step"]
