"""A loaded schema whose graphql-core form may still be unbuilt.

A schema served from the compiled cache (`_warm_start`) is known to build, and what its loading tolerated
is known too, so the graphql-core `GraphQLSchema` (seconds for GitHub's) is built only when something
needs it: validating or running a call, describing a tool. Listing tools never does. This module
imports no graphql-core.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphql import GraphQLSchema

    from ._cache import CompiledEntry

__all__ = ["LoadedSchema", "schema_builds"]

_builds = [0]


def schema_builds() -> int:
    """How many deferred schemas have been built in this process (tests assert listing builds none)."""
    return _builds[0]


class LoadedSchema:
    """A schema, where it came from, and what lenient loading had to tolerate.

    `origin`: human-readable source (a path, "SDL string", "strawberry Schema",
    "examples/kitchen/api.py:schema"). `warnings`: each problem lenient loading tolerated, in words a
    user understands. `strawberry_schema`: the strawberry.Schema when the source was one (executors
    run through it). `digest`: the content hash naming its compiled form on disk, when cached.
    """

    __slots__ = ("__weakref__", "_build", "_lock", "_schema", "compiled", "digest", "origin", "strawberry_schema", "warnings")

    def __init__(
        self,
        *,
        origin: str,
        schema: GraphQLSchema | None = None,
        warnings: tuple[str, ...] = (),
        strawberry_schema: object | None = None,
        build: Callable[[], GraphQLSchema] | None = None,
        digest: str | None = None,
        compiled: CompiledEntry | None = None,
    ) -> None:
        if schema is None and build is None:
            raise TypeError("LoadedSchema needs a schema or a way to build it")
        self._schema = schema
        self._build = build
        self._lock = threading.Lock()
        self.origin = origin
        self.warnings = tuple(warnings)
        self.strawberry_schema = strawberry_schema
        self.digest = digest
        self.compiled = compiled

    @property
    def schema(self) -> GraphQLSchema:
        """The graphql-core schema, built on first use when it was loaded from the compiled cache."""
        if self._schema is None:
            with self._lock:  # a warm-up thread and a call may both ask: build once
                if self._schema is None:
                    assert self._build is not None
                    self._schema = self._build()
                    _builds[0] += 1
        return self._schema

    @property
    def built(self) -> bool:
        return self._schema is not None

    @property
    def executable(self) -> bool:
        """Whether the schema carries resolvers (a server in this process). A deferred schema came
        from text (SDL or introspection), which never does."""
        if self._schema is None:
            return False
        query = self._schema.query_type
        return query is not None and any(f.resolve is not None for f in query.fields.values())

    def replace(self, **changes: Any) -> LoadedSchema:
        """A copy with some attributes changed (the schema, built or not, is shared)."""
        values: dict[str, Any] = {name: getattr(self, name) for name in ("origin", "warnings", "strawberry_schema", "digest", "compiled")}
        values.update(changes)
        if "schema" not in values:
            if self._schema is not None:
                values["schema"] = self._schema
            else:
                values["build"] = lambda: self.schema
        return LoadedSchema(**values)

    def __repr__(self) -> str:
        state = "built" if self.built else "deferred"
        return f"LoadedSchema(origin={self.origin!r}, {state}, {len(self.warnings)} warnings)"
