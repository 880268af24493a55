"""What `dagtools mcp` serves and how: read from a YAML/JSON file, then overridden by the command line.

source: https://api.example.com/graphql     # or a schema file, or path/to/api.py:schema
endpoint: https://api.example.com/graphql   # where calls go when the source is only a schema file
timeout: 30                                  # seconds one API call may take, retries included
cache: true                                  # a URL's schema cached on disk: true, false, or refresh
tools: fixed                                 # or dynamic
transport: stdio                             # or http (with host, port, path)
headers: {Authorization: "Bearer ..."}       # sent to the API with every request
forward_headers: [X-Api-Token]               # incoming HTTP headers passed on to the API
auth_token_env: DAGTOOLS_MCP_TOKENS          # HTTP: callers need one of the bearer tokens in this variable
oauth_issuer: https://auth.example.com       # HTTP, instead: callers need an OAuth access token from this issuer
allowed_hosts: [mcp.example.com]             # HTTP: Host names accepted (DNS-rebinding protection)
public_url: https://mcp.example.com/mcp      # HTTP: this server's URL as clients reach it
store: redis://127.0.0.1:6379/0              # keyed sessions saved here (sqlite:///PATH too); default: memory
mutations: false                             # true, or a list of mutation field names
dialect: relay                               # plain | relay | dagger (detected when absent)
operations: ops/                             # .graphql files (or a persisted-query manifest): each named operation a tool
inputs:  {oven: {field: oven, description: An oven you can use.}}
outputs: {fries: {type: Plate, description: The fries, on a plate.}}
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from .._errors import ConfigError
from .._yaml import read_data
from ..executors._urls import check_port, check_url

__all__ = ["McpConfig", "ToolsMode", "is_loopback", "load_mcp_config"]

ToolsMode = Literal["fixed", "dynamic"]
Transport = Literal["stdio", "http"]


@dataclass(frozen=True, kw_only=True)
class McpConfig:
    """Everything one `dagtools mcp` server needs; every client session is opened from it."""

    source: str = ""
    """The API: its URL, a schema file (SDL or introspection JSON), or `path/to/api.py:attribute`; a relative path is read from
    the config file's folder."""
    tools: ToolsMode = "fixed"
    """`fixed`: a few tools that find and call the catalogue's; `dynamic`: the selected field tools themselves, the list
    growing as they are selected."""
    transport: Transport = "stdio"
    """`stdio` for a client that starts the server, `http` (streamable HTTP) for one that connects to it."""
    host: str = "127.0.0.1"
    """HTTP: the address to listen on; any other than loopback needs `auth_token_env`, `oauth_issuer` or `allow_unauthenticated`."""
    port: int = 8000
    """HTTP: the port to listen on (0: any free port)."""
    path: str = "/mcp"
    """HTTP: the MCP endpoint's path."""
    headers: dict[str, str] = field(default_factory=dict)
    """Sent to the API with every request, as a mapping or `Name: value` strings; `${VAR}` is read from the environment."""
    forward_headers: tuple[str, ...] = ()
    """Headers of each incoming HTTP request passed on to the API with that request's calls only (never `Authorization` while
    this server checks tokens)."""
    mutations: bool | tuple[str, ...] = False
    """Which mutations are tools: `false` (none), `true` (all), or a list of mutation field names."""
    dialect: str | None = None
    """The API's conventions, `plain`, `relay` or `dagger`; detected from the schema when absent."""
    include_deprecated: bool = False
    """Offer deprecated fields as tools too."""
    relay_ids: bool = False
    """Let ID arguments that take global IDs (such as `subjectId`) take a `Type#N` handle."""
    lenient: bool = True
    """Load a schema that breaks the spec as published (GitHub's defines one field twice), saying what was tolerated; `false`
    refuses it, as `--strict` does."""
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Objects every session starts with, by name: `{field: <root field>, description: ...}`."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """What the model is asked to hand back with `save`, by name: `{type: <type>, description: ...}`."""
    max_active_tools: int = 64
    """The most field tools one session may have selected at once."""
    session_ttl: float = 3600.0
    """Seconds a session may go unused before it is dropped."""
    max_sessions: int = 2000
    """Keyed sessions held at once (and as many handshake-era ones); at capacity new sessions are refused, never a live one evicted."""
    max_sessions_per_caller: int = 32
    """Sessions one caller (a token's name, else an address) may hold at once."""
    max_argument_bytes: int = 256 * 1024
    """The most one call's arguments may take, as JSON."""
    max_session_bytes: int = 32 * 1024 * 1024
    """The most one session's calls may send and get back, added up."""
    max_connections_per_address: int = 1024
    """HTTP connections one client address may hold at once (behind a proxy, every user's)."""
    header_timeout: float = 10.0
    """Seconds a client may take to send a request's headers."""
    body_timeout: float = 60.0
    """Seconds a client may take to send a request's body, once its headers are in."""
    handshake_timeout: float = 60.0
    """Seconds a handshake-era session may wait, after `initialize`, for its client's next request."""
    auth_token_env: str = ""
    """HTTP: an environment variable holding the bearer tokens callers must send, `name:token` separated by spaces."""
    oauth_issuer: str = ""
    """HTTP: an OAuth 2.1 authorization server's issuer; callers need an access token it minted for `public_url`."""
    oauth_audience: str = ""
    """The audience a token must name, when the authorization server names this resource otherwise than `public_url`."""
    oauth_scope: str = "dagtools:read"
    """The scope every call needs ("" for none)."""
    oauth_write_scope: str = "dagtools:write"
    """The scope a caller needs for mutation tools to be offered and run ("" for none)."""
    oauth_leeway: float = 30.0
    """Seconds of clock skew allowed when checking a token's expiry and not-before."""
    oauth_introspection_env: str = ""
    """An environment variable holding CLIENT_ID:CLIENT_SECRET: tokens are then introspected (RFC 7662), not read as JWTs."""
    allow_unauthenticated: bool = False
    """HTTP: serve beyond loopback without tokens, only behind something that authenticates every caller (a proxy, a VPN)."""
    allowed_hosts: tuple[str, ...] = ()
    """HTTP: `Host` names accepted besides loopback, the bound address and `public_url`'s host (DNS-rebinding protection)."""
    allowed_origins: tuple[str, ...] = ()
    """HTTP: `Origin` headers accepted; default: http and https on the accepted `Host` names."""
    public_url: str = ""
    """HTTP: this server's MCP URL as clients reach it (behind a proxy, say); OAuth tokens must be minted for it."""
    store: str = ""
    """Where keyed sessions live: `memory:` (the default, this process only), `sqlite:///PATH`, `redis://HOST:PORT/DB` or
    `redis+cluster://HOST:PORT`."""
    endpoint: str = ""
    """The API's URL when the source is only its schema (a file, say, for an API that refuses introspection)."""
    timeout: float = 30.0
    """The longest one API call (or the schema's introspection) may take, retries included."""
    cache: bool | Literal["refresh"] = True
    """Whether a URL's schema is read from and written to the disk cache; "refresh" fetches it again."""
    operations: str = ""
    """A folder of `.graphql` files or a persisted-query manifest: each named operation is a tool."""

    def __post_init__(self) -> None:
        if (self.auth_token_env or self.oauth_issuer) and any(name.lower() == "authorization" for name in self.forward_headers):
            raise ConfigError(
                "Authorization carries this server's own bearer token, which must never reach the API; "
                "forward the API's token in another header (such as X-Api-Token) or drop auth_token_env and oauth_issuer."
            )
        if self.oauth_issuer:
            self._check_oauth()
        for seconds in ("session_ttl", "header_timeout", "body_timeout", "handshake_timeout"):
            value = getattr(self, seconds)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ConfigError(f"{seconds} must be more than 0 seconds, not {value!r}.")
        for limit in ("max_sessions", "max_sessions_per_caller", "max_argument_bytes", "max_session_bytes", "max_connections_per_address"):
            if isinstance(getattr(self, limit), bool) or not isinstance(getattr(self, limit), int) or getattr(self, limit) < 1:
                raise ConfigError(f"{limit} must be a whole number, 1 or more, not {getattr(self, limit)!r}.")
        if self.public_url and not self.public_url.lower().startswith(("http://", "https://")):
            raise ConfigError(f"public_url must be an http:// or https:// URL, not {self.public_url!r}.")
        if self.tools not in ("fixed", "dynamic"):
            raise ConfigError(f"tools must be fixed or dynamic, not {self.tools!r}.")
        if self.transport not in ("stdio", "http"):
            raise ConfigError(f"transport must be stdio or http, not {self.transport!r}.")
        stores = ("memory:", "sqlite:", "redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")
        if self.store and not self.store.lower().startswith(stores):
            raise ConfigError(
                f"store must be memory:, sqlite:///PATH, redis://HOST:PORT/DB or redis+cluster://HOST:PORT, not {self.store!r}."
            )
        if self.dialect not in (None, "plain", "relay", "dagger"):
            raise ConfigError(f"dialect must be plain, relay or dagger, not {self.dialect!r}.")
        check_port(self.port)
        if self.source.lower().startswith(("http://", "https://")):
            check_url(self.source, "source")
        if self.public_url:
            check_url(self.public_url, "public_url")
        if self.endpoint:
            check_url(self.endpoint, "endpoint")
        if self.cache not in (True, False, "refresh"):
            raise ConfigError(f"cache must be true, false or refresh, not {self.cache!r}.")
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or not self.timeout > 0:
            raise ConfigError(f"timeout must be more than 0 seconds, not {self.timeout!r}.")

    def _check_oauth(self) -> None:
        check_url(self.oauth_issuer, "oauth_issuer")
        if not self.oauth_issuer.lower().startswith("https://") and not is_loopback(urlsplit(self.oauth_issuer).hostname or ""):
            raise ConfigError(f"oauth_issuer must be an https:// URL (http:// only on loopback), not {self.oauth_issuer!r}.")
        if self.auth_token_env:
            raise ConfigError("Give either auth_token_env (static bearer tokens) or oauth_issuer (OAuth access tokens), not both.")
        if not self.public_url:
            raise ConfigError(
                "oauth_issuer needs public_url: this server's MCP URL as clients reach it (such as https://mcp.example.com/mcp), "
                "which the metadata names and every access token must be minted for."
            )
        leeway = self.oauth_leeway
        if isinstance(leeway, bool) or not isinstance(leeway, (int, float)) or not 0 <= leeway <= 300:
            raise ConfigError(f"oauth_leeway must be 0 to 300 seconds, not {leeway!r}.")
        for name in ("oauth_scope", "oauth_write_scope"):
            if not re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]*", getattr(self, name)):
                raise ConfigError(f"{name} must be one scope token (printable ASCII without spaces, quotes or backslashes).")

    def with_options(self, **options: Any) -> McpConfig:
        """This config with the options that were given (None means "not given") replacing its own."""
        return replace(self, **{k: v for k, v in options.items() if v is not None})

    @property
    def durable_store(self) -> bool:
        """Whether sessions live in a store that outlives this process (anything but `memory:`)."""
        return bool(self.store) and not self.store.lower().startswith("memory:")

    @property
    def api_url(self) -> str:
        """Where calls are sent over HTTP: the endpoint, else a URL source; empty when nothing is."""
        if self.endpoint:
            return self.endpoint
        return self.source if self.source.lower().startswith(("http://", "https://")) else ""

    @property
    def load_options(self) -> dict[str, Any]:
        """How a URL source's schema is fetched: `load_schema`'s options (other sources ignore them)."""
        cache = self.cache
        options: dict[str, Any] = {"use_cache": cache is not False, "refresh": cache == "refresh", "timeout": self.timeout}
        # Only a fetch reports progress, and only to a terminal: a start from a file, or with stderr in a
        # client's log, stays clear of the HTTP client and graphql-core (a warm start needs neither).
        if self.source.lower().startswith(("http://", "https://")) and getattr(sys.stderr, "isatty", lambda: False)():
            from ..load._introspect import stderr_progress

            options["progress"] = stderr_progress()
        return options

    @property
    def session_options(self) -> dict[str, Any]:
        """The `open_session` options every client session is opened with."""
        return {
            "inputs": self.inputs,
            "outputs": self.outputs,
            "dialect": self.dialect,
            "mutations": self.mutations,
            "include_deprecated": self.include_deprecated,
            "relay_ids": self.relay_ids,
            "max_active_tools": self.max_active_tools,
            "operations": self.operations or None,
        }


def is_loopback(host: str) -> bool:
    """Whether a host name or address is this machine's loopback (`localhost`, 127.0.0.0/8, `::1`)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def load_mcp_config(path: str | Path | None = None, data: Mapping[str, Any] | None = None) -> McpConfig:
    """Read a config file (YAML or JSON) or an already parsed mapping; `${VAR}` in header values is expanded
    from the environment, so tokens need not be written into the file."""
    origin = "config"
    if path is not None:
        origin = str(path)
        data = read_data(path, "Config file")
    data = dict(data or {})
    known = {f.name for f in fields(McpConfig)}
    known_dashed = {name.replace("_", "-"): name for name in known}
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = known_dashed.get(key, key)
        if name not in known:
            raise ConfigError(f"{origin}: unknown key {key!r}; use {', '.join(sorted(known))}.")
        values[name] = value
    if "headers" in values:
        values["headers"] = parse_headers(values["headers"], origin)
    if "forward_headers" in values:
        forward = values["forward_headers"]
        values["forward_headers"] = tuple([forward] if isinstance(forward, str) else forward or ())
    for key in ("allowed_hosts", "allowed_origins"):
        if key in values:
            listed = values[key]
            values[key] = tuple(str(item) for item in ([listed] if isinstance(listed, str) else listed or ()))
    if isinstance(values.get("mutations"), (list, tuple)):
        values["mutations"] = tuple(values["mutations"])
    for key in ("inputs", "outputs"):
        if key in values and not isinstance(values[key], Mapping):
            raise ConfigError(f"{origin}: {key} must be a mapping of names.")
        if key in values:
            values[key] = dict(values[key])
    if "operations" in values:  # beside the config file, as the source is
        operations = Path(str(values["operations"]))
        values["operations"] = str(operations if operations.is_absolute() or path is None else Path(path).parent / operations)
    if "source" in values:
        values["source"] = str(values["source"])
        base = Path(path).parent if path is not None else None
        values["source"] = _relative_source(values["source"], base)
    return McpConfig(**values)


def parse_headers(headers: Any, origin: str = "headers") -> dict[str, str]:
    """Headers from a mapping or from `Name: value` strings, with `${VAR}` expanded from the environment."""
    if isinstance(headers, Mapping):
        pairs = list(headers.items())
    else:
        pairs = []
        for item in headers or ():
            name, sep, value = str(item).partition(":")
            if not sep or not name.strip():
                raise ConfigError(f"{origin}: header {item!r} must look like 'Name: value'.")
            pairs.append((name, value))
    return {str(k).strip(): _expand(str(v).strip(), f"{origin}: header {str(k).strip()}") for k, v in pairs}


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _expand(value: str, where: str) -> str:
    """`${VAR}` (and a set `$VAR`) from the environment. An unset `${VAR}` is an error at start: sending
    the literal text as a credential would fail later, at the API, and less clearly."""

    def variable(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in os.environ and match.group(2):
            return match.group(0)  # a bare `$word` may be part of the value itself
        if name not in os.environ:
            raise ConfigError(f"{where} uses ${{{name}}}, which is not set in the environment. Set it, or write the value itself.")
        return os.environ[name]

    return _VARIABLE.sub(variable, value)


def _relative_source(source: str, base: Path | None) -> str:
    """A relative schema path in a config file is read from the file's folder."""
    if base is None or "://" in source:
        return source
    path_part, sep, attribute = source.partition(":")
    candidate = base / path_part
    if not Path(path_part).is_absolute() and candidate.exists():
        return str(candidate) + sep + attribute
    return source
