"""The `dagger` source: the Dagger engine session that `dagger run` (or an SDK) opened for this process.

Dagger's SDKs find their session through two environment variables: `DAGGER_SESSION_PORT`, the
port of the engine's GraphQL endpoint at `http://127.0.0.1:$PORT/query`, and
`DAGGER_SESSION_TOKEN`, sent as the username of HTTP basic auth with an empty password. dagtools
does the same, reads the session's schema by introspection (never from the on-disk cache: each
session's schema depends on the modules loaded into it) and applies the Dagger dialect.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping

from .._errors import ConfigError

__all__ = ["DAGGER_SOURCE", "dagger_endpoint", "is_dagger_source"]

DAGGER_SOURCE = "dagger"


def is_dagger_source(source: object) -> bool:
    return isinstance(source, str) and source.strip().lower() == DAGGER_SOURCE


def dagger_endpoint(environ: Mapping[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """The session's URL and the Authorization header for it; ConfigError when no session is open."""
    env = os.environ if environ is None else environ
    port = env.get("DAGGER_SESSION_PORT", "").strip()
    token = env.get("DAGGER_SESSION_TOKEN", "").strip()
    missing = [name for name, value in (("DAGGER_SESSION_PORT", port), ("DAGGER_SESSION_TOKEN", token)) if not value]
    if missing:
        raise ConfigError(
            f"The dagger source needs a Dagger session, but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not set. Run dagtools inside one, such as "
            "`dagger run dagtools call dagger script.yaml`, or point it at a URL."
        )
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"DAGGER_SESSION_PORT must be a port number, not {port!r}.")
    credentials = base64.b64encode(f"{token}:".encode()).decode()
    return f"http://127.0.0.1:{int(port)}/query", {"Authorization": f"Basic {credentials}"}
