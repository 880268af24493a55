"""Shared fixtures: the kitchen example API and the public schemas in ../shared/schemas."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.thirdparty import media_closed_url, media_old_url, media_url, swapi_url  # noqa: E402,F401  (servers on loopback, for any module)

os.environ["DAGTOOLS_DEBUG"] = os.environ.get("DAGTOOLS_DEBUG", "1")  # every document shape dagtools builds is validated against its schema

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


_loaded: dict[str, object] = {}


def load_shared(name: str):
    """A public schema, loaded once per test run (the big ones take seconds to build)."""
    if name not in _loaded:
        from dagtools import load_schema

        _loaded[name] = load_schema(shared_schema_path(name))
    return _loaded[name]


@pytest.fixture
def kitchen_server():
    """The kitchen API served over real HTTP on loopback: `.url` and the `.requests` it received."""
    from examples.kitchen.api import schema
    from tests.servers import serve_schema

    with serve_schema(schema) as (url, recorder):
        recorder.url = url
        yield recorder


@pytest.fixture
def kitchen_url(kitchen_server) -> str:
    """URL of the kitchen API served over HTTP on loopback, e.g. http://127.0.0.1:PORT/graphql."""
    return kitchen_server.url


@pytest.fixture(scope="module")
def loopback():
    """One uvicorn server on 127.0.0.1 per module that needs it; the `transport` fixture mounts schemas on it."""
    from tests.transports import Loopback

    with Loopback.serve() as server:
        yield server


@pytest.fixture(params=["local", "http"])
async def transport(request):
    """Where a test's executors run: in process, or over real HTTP to the same schema instance on loopback."""
    from tests.transports import Transport

    chosen = Transport(request.param, request.getfixturevalue("loopback") if request.param == "http" else None)
    yield chosen
    await chosen.aclose()
