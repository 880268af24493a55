"""Loading a schema: files, introspection JSON, URLs (with the introspection cache), Python objects,
SDL repair of published schemas that break the spec, and the API's conventions (its dialect)."""

import typing as _typing

from .._lazy import lazy_exports as _lazy_exports

# Imported on first use: a start served from the compiled cache never imports graphql-core.
__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "Dialect": "._dialect",
        "DialectName": "._dialect",
        "detect_dialect": "._dialect",
        "LoadedSchema": "._loaded",
        "load_schema": "._sources",
    },
)

if _typing.TYPE_CHECKING:
    from ._dialect import Dialect, DialectName, detect_dialect
    from ._loaded import LoadedSchema
    from ._sources import load_schema

__all__ = ["Dialect", "DialectName", "LoadedSchema", "detect_dialect", "load_schema"]
