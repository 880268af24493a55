"""Inputs, values and outputs as written on a command line, the same for `run` and `mcp`.

    --input  name=chain[:description]     oven=oven:An oven you can use
    --value  name=json                    limit=3
    --output name:Type[:description]      fries:Plate:The fries, on a plate

The forms `name=chain # description` and `name=Type # description` are read too.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .._errors import ConfigError

__all__ = ["add_http_options", "add_verbose_option", "check_addresses", "is_http_url", "parse_input", "parse_output", "parse_value"]


def add_http_options(parser: Any, *, defaults: bool = True) -> None:
    """--timeout, --no-cache, --refresh-schema: the same for every command that reaches an API.
    Without `defaults` an option that is not given stays None, so a config file's value stands."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0 if defaults else None,
        metavar="SECONDS",
        help="the longest one API call may take, retries included (default 30)",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cached schema")
    parser.add_argument("--refresh-schema", action="store_true", help="fetch the schema again and update the cache")


def load_with(source: Any, options: dict[str, Any], cache: Any) -> Any:
    """The schema at `source`, loaded as the command-line options say; takes the load's own options
    out of `options` (what is left shapes the catalogue)."""
    from ..load._sources import load_schema

    return load_schema(
        source,
        lenient=options.pop("lenient"),
        headers=options.pop("headers"),
        timeout=options.pop("timeout"),
        progress=options.pop("progress"),
        use_cache=cache is not False,
        refresh=cache == "refresh",
    )


def add_verbose_option(parser: Any) -> None:
    """-v after the command, as before it: each problem the schema's lenient load tolerated (one summary
    line without), and the log on stderr (-v schema, sessions, retries; -vv every request)."""
    parser.add_argument(
        "-v",
        "--verbose",
        dest="verbose_here",
        action="count",
        default=0,
        help="say more on stderr: each problem tolerated in the schema, the schema, sessions and retries; -vv every request",
    )


def is_http_url(source: object) -> bool:
    return isinstance(source, str) and source.strip().lower().startswith(("http://", "https://"))


def check_addresses(args: argparse.Namespace) -> None:
    """Every URL and port a command was given, checked before anything runs: a malformed one is a
    one-line error that names the option, never a traceback from deep inside httpx or a socket."""
    from ..executors._urls import check_port, check_url

    if is_http_url(getattr(args, "source", None)):
        check_url(args.source.strip(), "The source")
    for option in ("base_url", "public_url", "endpoint"):
        value = getattr(args, option, None)
        if value:
            check_url(value, "--" + option.replace("_", "-"))
    if getattr(args, "port", None) is not None:
        check_port(args.port, "--port")
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"--timeout {timeout:g} must be more than 0 seconds.")


def parse_input(text: str) -> tuple[str, dict[str, Any]]:
    """An object input; a colon inside the chain's parentheses or quotes is part of the chain."""
    from ..calls._chains import split_outside  # graphql-core, only once an input is given

    name, sep, rest = text.partition("=")
    if " # " in rest:
        chain, _, description = rest.partition(" # ")
    else:
        chain, *more = split_outside(rest, ":", maxsplit=1)
        description = more[0] if more else ""
    if not sep or not name.strip() or not chain.strip():
        raise ConfigError(f"--input {text!r}: write name=chain[:description], such as oven=oven:An oven.")
    return name.strip(), {"field": chain.strip(), "description": description.strip()}


def parse_value(text: str) -> tuple[str, dict[str, Any]]:
    """A plain value: JSON, or a bare word taken as a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"--value {text!r}: write name=json, such as limit=3 or owner='\"octocat\"'.")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return name.strip(), {"value": value}


def parse_output(text: str) -> tuple[str, dict[str, Any]]:
    """An output to save: a name, a GraphQL type and what it is."""
    colon, equals = text.find(":"), text.find("=")
    if equals >= 0 and (colon < 0 or equals < colon):
        name, _, rest = text.partition("=")
        type_, _, description = rest.partition(" # ")
    else:
        name, _, rest = text.partition(":")
        type_, _, description = rest.partition(":")
    if not name.strip() or not type_.strip():
        raise ConfigError(f"--output {text!r}: write name:Type[:description], such as fries:Plate.")
    return name.strip(), {"type": type_.strip(), "description": description.strip()}


def stdout_closed() -> int:
    """The reader of stdout went away (`dagtools demo --json | head -1`): stop quietly, as `cat` does.
    stdout is pointed at /dev/null first, so the interpreter's last flush at exit cannot fail again."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, the status of a shell tool that the same pipe stopped
