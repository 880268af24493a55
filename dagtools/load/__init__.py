"""Loading a schema: files, introspection JSON, URLs (with the introspection cache), Python objects,
SDL repair of published schemas that break the spec, and the API's conventions (its dialect)."""

from ._dialect import Dialect, DialectName, detect_dialect
from ._sources import LoadedSchema, load_schema

__all__ = ["Dialect", "DialectName", "LoadedSchema", "detect_dialect", "load_schema"]
