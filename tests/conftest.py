"""Shared fixtures: the kitchen example API and the public schemas in ../shared/schemas."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHARED_SCHEMAS = Path(os.environ.get("DAGTOOLS_SHARED_SCHEMAS", ROOT.parent / "shared" / "schemas"))


def shared_schema_path(name: str) -> Path:
    """Path of one public schema; skips the test where ../shared/schemas is absent."""
    path = SHARED_SCHEMAS / name
    if not path.exists():
        pytest.skip(f"{path} is absent: the public schemas live in ../shared/schemas beside the repository")
    return path


def shared_schema_names() -> list[str]:
    if not SHARED_SCHEMAS.is_dir():
        return []
    return sorted(p.name for p in SHARED_SCHEMAS.iterdir() if p.suffix in {".graphql", ".graphqls", ".json"})
