"""Reading a result's previews in tests: a page of objects comes as a table (calls/_preview_pages.py),
a lone object as a map of its fields; these read either back as each object's fields by its ID."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagtools.calls._preview_pages import rows_of


def rows(result: Mapping[str, Any], key: str = "preview") -> dict[str, dict[str, Any]]:
    """Each object's shown fields by its ID, from a page's table under `key` (`preview`, `objects`);
    an object shown alone there (a payload's one object) is a map of its fields under its ID."""
    shown = result.get(key) or {}
    alone = {k: dict(v) for k, v in shown.items() if "#" in k and isinstance(v, Mapping)}
    return {**alone, **rows_of(shown)}


def row(result: Mapping[str, Any], object_id: str, key: str = "preview") -> dict[str, Any]:
    """One object's shown fields: a lone object's preview as it is, or its row on a page."""
    preview = result.get(key) or {}
    if key == "preview" and result.get("result") == object_id and object_id not in preview:
        return dict(preview)
    return rows_of(preview)[object_id]


def columns(result: Mapping[str, Any], type_name: str, key: str = "preview") -> list[str]:
    """The fields a page shows of `type_name`: its columns in order, then those said once under `same`."""
    header = (result.get(key) or {})[type_name]
    return [*header["columns"], *header.get("same", {})]
