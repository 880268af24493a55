"""Keep credentials out of everything the model, the disk or a log can see.

Credentials reach dagtools in two ways: in headers (`Authorization`, `X-Api-Key`, forwarded tokens)
and in URLs (`https://user:pass@host/graphql?access_token=...`). An API may echo either back in an
error body, an exception from the HTTP client may quote the URL, and httpx logs every URL it requests.
`redact(text, secrets)` is the one function every such text goes through before it is shown, stored
or logged: it replaces the known secret values (and their JSON-escaped and percent-encoded spellings)
and anything shaped like a credential (a URL's user and password, the value of a query parameter
named like `token`, `api_key` or `password`, a `Bearer` token). `secrets_of(headers, url)` picks the
values worth hiding from what a client was configured with.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

__all__ = ["REDACTED", "RedactingFilter", "redact", "redact_json", "secrets_of"]

REDACTED = "[redacted]"

#: Headers whose values are never secret (and too common to hide without hiding ordinary words).
_HARMLESS_HEADERS = frozenset(
    {"accept", "accept-encoding", "accept-language", "content-type", "content-length", "user-agent", "cache-control", "connection"}
)
#: Shorter values would hide ordinary words; no real credential is this short.
_SHORTEST = 4
#: Header names that say their value is a credential; other headers' values are hidden only when
#: they look like one (long, no spaces), so `X-Client: dagtools` does not blank out the word.
_SECRET_HEADER = re.compile(r"(?i)auth|token|key|secret|cookie|session|pass|credential|signature")
_TOKEN_LIKE = 12
#: Query parameter names (lower case, without `-` and `_`) whose values are credentials.
_SECRET_PARAMS = frozenset(
    {"token", "accesstoken", "apikey", "key", "auth", "password", "passwd", "pwd", "secret", "clientsecret", "sig", "signature", "code"}
)
_SECRET_PARAM_ENDINGS = ("token", "secret", "password", "apikey", "accesskey", "privatekey", "credential", "credentials")

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#\"'<>]+@")
_QUERY_PARAM = re.compile(r"([?&;])([^=&#\s\"'<>?]+)=([^&#\s\"'<>]*)")
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]+")


def is_secret_param(name: str) -> bool:
    """Whether a query parameter called `name` carries a credential."""
    key = unquote(name).lower().replace("-", "").replace("_", "")
    return key in _SECRET_PARAMS or key.endswith(_SECRET_PARAM_ENDINGS)


def secrets_of(headers: Mapping[str, str] | None = None, url: str | None = None) -> tuple[str, ...]:
    """The values to hide, in every spelling an echo may use (longest first): credential header
    values (and the token after an auth scheme), a URL's user and password, and the values of its
    credential query parameters."""
    found: list[str] = []
    for name, value in (headers or {}).items():
        if name.lower() in _HARMLESS_HEADERS:
            continue
        value = str(value).strip()
        if not _SECRET_HEADER.search(name) and (len(value) < _TOKEN_LIKE or any(c.isspace() for c in value)):
            continue
        found.append(value)
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if token:  # `Bearer abc`: an API may echo the token alone
            found.append(token)
            if scheme.lower() == "basic":
                found.extend(_basic_parts(token))
    if url:
        try:
            parts = urlsplit(url)
            user, password = parts.username, parts.password
            query = parse_qsl(parts.query, keep_blank_values=True)
        except ValueError:
            user, password, query = None, None, []
        found.extend(unquote(v) for v in (user, password) if v)
        found.extend(value for name, value in query if is_secret_param(name))
    spellings = {spelling for s in found if len(s) >= _SHORTEST for spelling in _spellings(s)}
    return tuple(sorted(spellings, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every secret and every credential-shaped part replaced by `[redacted]`."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    text = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _QUERY_PARAM.sub(_param, text)
    return _BEARER.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)


def redact_json(value: Any, secrets: Iterable[str] = (), *, depth: int = 32) -> Any:
    """A JSON value with `redact` applied to every string in it (keys too); what lies deeper than
    `depth` levels is dropped, as nobody reads an error nested that deep."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact(value, secrets)
    if depth <= 0:
        return REDACTED if isinstance(value, (dict, list)) else value
    if isinstance(value, dict):
        return {redact(str(k), secrets): redact_json(v, secrets, depth=depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v, secrets, depth=depth - 1) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's message (httpx logs every URL it requests)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record that cannot be formatted is left to the handler to report
            return True
        shown = redact(message)
        if shown != message:
            record.msg, record.args = shown, ()
        return True


def _param(match: re.Match[str]) -> str:
    if not match.group(3) or not is_secret_param(match.group(2)):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}={REDACTED}"


def _spellings(secret: str) -> set[str]:
    """A value as it may appear in an echo: itself, JSON-escaped, percent-encoded."""
    spellings = {secret, json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1]}
    try:
        spellings |= {quote(secret, safe=""), quote(secret, safe="/:")}
    except UnicodeEncodeError:
        pass
    return {s for s in spellings if len(s) >= _SHORTEST}


def _basic_parts(token: str) -> list[str]:
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return []
    user, _, password = decoded.partition(":")
    return [decoded, password]
