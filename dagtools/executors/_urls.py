"""Checks on the addresses a user types (an API's URL, a port to listen on), made before anything is sent,
and the host meant when a typed one does not resolve.

A malformed URL or a port out of range otherwise surfaces deep inside httpx or the socket layer as
`httpx.InvalidURL` or `OverflowError`, far from the option that caused it. Checked at start, the user
is told which value to fix and how.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import socket
from urllib.parse import urlsplit

from .._errors import ConfigError
from .._redact import redact

__all__ = ["check_port", "check_url", "meant_host", "unknown_host", "url_problem"]

MAX_PORT = 65535

#: The names of this machine a mistyped host is compared with (`localhots` is meant as `localhost`).
_THIS_MACHINE = ["localhost", "127.0.0.1"]


def unknown_host(error: BaseException) -> bool:
    """Whether a failed connection was a host name the resolver says does not exist (not a resolver that
    could not answer now, which another try may get past)."""
    final = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}
    seen: BaseException | None = error
    for _ in range(8):  # httpx's error, httpcore's, then the resolver's
        if seen is None:
            return False
        if isinstance(seen, socket.gaierror):
            return seen.errno in final
        seen = seen.__cause__ or seen.__context__
    return False


def meant_host(host: str) -> str | None:
    """This machine's name when `host`, which does not resolve, is a slip for it; else None."""
    close = difflib.get_close_matches(host.lower(), _THIS_MACHINE, n=1, cutoff=0.6)
    return close[0] if close else None


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
    if _PLAIN.fullmatch(url) and _plain_host(parts.hostname):
        return None  # ASCII URL characters and a plain host name or address: httpx takes it (and is not imported at start)
    import httpx  # what will send to it: anything else it refuses is caught here, not mid-call

    try:
        httpx.URL(url)
    except httpx.InvalidURL as error:
        return str(error).rstrip(".")
    return None


#: Only the characters a URL may hold as they are (RFC 3986), and percent escapes.
_PLAIN = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*(%[0-9A-Fa-f]{2}[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*)*")
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def _plain_host(host: str) -> bool:
    """A host name of plain labels, or an IP address."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    return len(host) <= 253 and all(_LABEL.fullmatch(label) for label in host.rstrip(".").split("."))


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
