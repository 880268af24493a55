"""Checks on the addresses a user types (an API's URL, a port to listen on), made before anything is sent.

A malformed URL or a port out of range otherwise surfaces deep inside httpx or the socket layer as
`httpx.InvalidURL` or `OverflowError`, far from the option that caused it. Checked at start, the user
is told which value to fix and how.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .._errors import ConfigError
from .._redact import redact

__all__ = ["check_port", "check_url", "url_problem"]

MAX_PORT = 65535


def url_problem(url: str) -> str | None:
    """What is wrong with an http(s) URL, in words, or None when it can be sent to."""
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        return "it contains a space or a control character (quote it whole, and encode spaces as %20)"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        text = str(error)
        if "IPv6" in text:
            return "its IPv6 address is not closed by ']' (write it as http://[::1]:8000/graphql)"
        if "out of range" in text:
            return f"its port is out of range (a port is a number from 1 to {MAX_PORT})"
        return f"its port is not a number from 1 to {MAX_PORT}"
    if parts.scheme.lower() not in ("http", "https"):
        return "it does not start with http:// or https://"
    if not parts.hostname:
        return "it names no host (write it as http://HOST:PORT/PATH)"
    if port == 0:
        return f"its port is 0 (a port is a number from 1 to {MAX_PORT})"
    import httpx  # what will send to it: anything else it refuses is caught here, not mid-call

    try:
        httpx.URL(url)
    except httpx.InvalidURL as error:
        return str(error).rstrip(".")
    return None


def check_url(url: str, what: str) -> str:
    """`url` when it can be sent to; else ConfigError naming `what` (an option or setting) and the fix.
    The URL is shown without the credentials it may carry (`user:password@`, `?token=`)."""
    problem = url_problem(url)
    if problem is None:
        return url
    raise ConfigError(f"{what} {redact(url)!r} is not a URL dagtools can send to: {problem}.")


def check_port(port: object, what: str = "port") -> int:
    """A port to listen on: 0 (any free port) to 65535."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= MAX_PORT:
        raise ConfigError(f"{what} {port!r} is out of range: give a number from 1 to {MAX_PORT} (or 0 for any free port).")
    return port
