"""What shapes a catalogue besides its schema: one hashable value, so catalogues are shared per option set."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from .._errors import ConfigError
from ..load._dialect import DialectName

__all__ = ["CatalogueOptions"]


@dataclass(frozen=True, kw_only=True)
class CatalogueOptions:
    """`dialect`: plain, relay or dagger (detected when None). `mutations`: False, True, or the names
    of the mutations allowed. `include_deprecated`: list deprecated fields too. `relay_ids`: `ID`
    arguments such as `issueId` take `Type#N`. `previews`: read cheap scalar fields when minting
    (None: everywhere but Dagger, whose fields run pipelines)."""

    dialect: DialectName | None = None
    mutations: bool | tuple[str, ...] = False
    include_deprecated: bool = False
    relay_ids: bool = False
    previews: bool | None = None

    def __post_init__(self) -> None:
        mutations: Any = self.mutations
        if not isinstance(mutations, bool):
            if isinstance(mutations, str) or not isinstance(mutations, Iterable):
                raise ConfigError("mutations must be True, False or a list of mutation names.")
            object.__setattr__(self, "mutations", tuple(sorted(str(m) for m in mutations)))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def as_keywords(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}
