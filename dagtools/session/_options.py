"""A session's options as one typed value, with the catalogue's options inside it."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from .._errors import ConfigError
from ..catalogue._options import CatalogueOptions

__all__ = ["SessionOptions"]


@dataclass(frozen=True, kw_only=True)
class SessionOptions:
    """`catalogue`: how the schema becomes tools. `max_active_tools`: the cap on selected tools (the
    least recently used make room). `result_budget`: characters of a value shown before it is cut
    (readResult reads on). `tools_budget`: tokens selectTools' description may take. `operations`: a
    folder of `.graphql` files or a persisted-query manifest whose named operations become tools."""

    catalogue: CatalogueOptions = field(default_factory=CatalogueOptions)
    max_active_tools: int = 64
    result_budget: int = 4000
    tools_budget: int = 1500
    operations: str | None = None

    def __post_init__(self) -> None:
        for name in ("max_active_tools", "result_budget", "tools_budget"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, not {value!r}.")

    @classmethod
    def of(cls, options: SessionOptions | None = None, **flat: Any) -> SessionOptions:
        """`options` with any flat keywords applied: session fields by name, catalogue fields too
        (`mutations=True` is `catalogue=CatalogueOptions(mutations=True)`)."""
        base = options or cls()
        own = {f.name for f in fields(cls)} - {"catalogue"}
        unknown = set(flat) - own - set(CatalogueOptions.names())
        if unknown:
            known = ", ".join(sorted(own | set(CatalogueOptions.names())))
            raise TypeError(f"Unknown session option(s) {', '.join(sorted(unknown))}; the options are {known}.")
        catalogue = {k: v for k, v in flat.items() if k not in own}
        if catalogue:
            base = replace(base, catalogue=replace(base.catalogue, **catalogue))
        return replace(base, **{k: v for k, v in flat.items() if k in own})
