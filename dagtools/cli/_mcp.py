"""`dagtools mcp SOURCE`: the command-line face of `McpToolServer`; each option sets the `McpConfig` field its `dest` names."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ._options import add_http_options, add_verbose_option, parse_input, parse_output, parse_value

if TYPE_CHECKING:
    from ..mcpserver import McpConfig

__all__ = ["add_mcp_command", "mcp_config_from_args"]


def add_mcp_command(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="serve an API to MCP clients (Claude Desktop, Cursor, ...) over stdio or streamable HTTP",
        description="Serve a GraphQL API as MCP tools. Options given here override the --config file.",
    )
    mcp.add_argument(
        "source", nargs="?", help="the API: a URL, a schema file, or path/to/file.py:attribute (or `source` in the config file)"
    )
    mcp.add_argument("--config", metavar="FILE", help="YAML or JSON file with any of these options (and inputs, outputs)")
    mcp.add_argument(
        "--tools",
        choices=["fixed", "dynamic"],
        help="fixed (default): a constant set of tools "
        "(selectTools, callTool, callChain; save when --output declares outputs) for any client; dynamic: every selected "
        "Type_field tool is listed, for clients that re-read the tool list when told",
    )
    mcp.add_argument("--transport", choices=["stdio", "http"], help="stdio (default) or streamable HTTP")
    mcp.add_argument("--host", help="HTTP address to listen on (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, help="HTTP port (default 8000)")
    mcp.add_argument("--path", help="HTTP path of the MCP endpoint (default /mcp)")
    mcp.add_argument(
        "--auth-token-env",
        metavar="NAME",
        help="HTTP: callers must send 'Authorization: Bearer TOKEN' with a token from this environment variable "
        "(tokens separated by commas or spaces; NAME:TOKEN names a caller)",
    )
    mcp.add_argument(
        "--oauth-issuer",
        metavar="URL",
        help="HTTP: callers need an OAuth access token from this authorization server, minted for --public-url "
        "(JWTs checked against its keys; the Authorization page has the scopes and introspection)",
    )
    mcp.add_argument(
        "--oauth-introspection-env",
        metavar="NAME",
        help="HTTP with --oauth-issuer: introspect tokens with the CLIENT_ID:CLIENT_SECRET in this environment variable",
    )
    mcp.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        default=None,
        help="HTTP: serve beyond loopback without --auth-token-env (only behind something that authenticates callers)",
    )
    mcp.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        default=None,
        metavar="HOST[:PORT]",
        help="HTTP: a Host header to accept (repeatable; default: loopback, the bound address and --public-url's host)",
    )
    mcp.add_argument(
        "--allowed-origin",
        action="append",
        dest="allowed_origins",
        default=None,
        metavar="ORIGIN",
        help="HTTP: an Origin header to accept (repeatable)",
    )
    mcp.add_argument(
        "--store",
        metavar="URL",
        help="keep keyed (2026-07-28) sessions in sqlite:///PATH, redis://HOST:PORT/DB or a Redis Cluster "
        "(redis+cluster://HOST:PORT), so they survive a restart and several workers serve them (default memory: this process only)",
    )
    mcp.add_argument("--public-url", metavar="URL", help="HTTP: this server's MCP endpoint as clients reach it, e.g. behind a proxy")
    mcp.add_argument(
        "--header",
        action="append",
        default=None,
        metavar="'NAME: VALUE'",
        help="send this header to the API (repeatable; ${VAR} is read from the environment)",
    )
    mcp.add_argument(
        "--forward-header",
        action="append",
        default=None,
        metavar="NAME",
        help="pass this header of incoming HTTP requests on to the API (repeatable)",
    )
    mcp.add_argument(
        "--endpoint",
        metavar="URL",
        help="send calls to this URL when the source is only a schema file (an API that refuses introspection, say)",
    )
    add_http_options(mcp, defaults=False)
    mcp.add_argument("--dialect", choices=["plain", "relay", "dagger"], help="force the API's conventions")
    mcp.add_argument("--allow-mutations", action="store_true", default=None, help="expose every mutation as a tool")
    mcp.add_argument("--mutation", action="append", default=None, metavar="NAME", help="expose one mutation (repeatable)")
    mcp.add_argument("--include-deprecated", action="store_true", default=None, help="show deprecated fields too")
    mcp.add_argument("--relay-ids", action="store_true", default=None, help="let ID arguments take Type#N")
    mcp.add_argument("--strict", action="store_true", help="refuse schemas that are invalid as published")
    add_verbose_option(mcp)
    mcp.add_argument(
        "--input",
        action="append",
        default=None,
        metavar="NAME=CHAIN[:DESCRIPTION]",
        help="give every session an object, such as oven=oven:An oven you can use (repeatable)",
    )
    mcp.add_argument(
        "--operations", metavar="DIR_OR_MANIFEST", help="named operations in .graphql files (or a persisted-query manifest) as tools"
    )
    mcp.add_argument("--value", action="append", default=None, metavar="NAME=JSON", help="give every session a plain value (repeatable)")
    mcp.add_argument(
        "--output",
        action="append",
        default=None,
        metavar="NAME:TYPE[:DESCRIPTION]",
        help="ask for an output, returned with the save tool (repeatable)",
    )
    mcp.set_defaults(handler=_mcp)


def mcp_config_from_args(args: argparse.Namespace) -> McpConfig:
    """The server's options, built once here and handed to it whole: the config file's, then every
    option given on the command line. An option whose `dest` is a field of `McpConfig` sets that field
    as it is (a repeated one as a tuple), so a new option is a field and an `add_argument`; only the
    options spelled otherwise than their field are translated below."""
    from .._errors import ConfigError
    from ..mcpserver import McpConfig, load_mcp_config  # the server's package, only to serve

    try:
        config = load_mcp_config(args.config) if args.config else McpConfig()
    except ConfigError as error:  # a value the file holds is fixed in the file: say which
        text = str(error)
        raise ConfigError(text if args.config in text else f"{args.config}: {text}") from None
    given = {name: tuple(value) if isinstance(value, list) else value for name, value in _fields_given(args).items()}
    return config.with_options(**given, **_translated(args, config))


def _fields_given(args: argparse.Namespace) -> dict[str, Any]:
    """The options given whose `dest` names a field of `McpConfig` (None: not given, the file's value stands)."""
    from dataclasses import fields

    from ..mcpserver import McpConfig

    return {f.name: getattr(args, f.name) for f in fields(McpConfig) if getattr(args, f.name, None) is not None}


def _translated(args: argparse.Namespace, config: McpConfig) -> dict[str, Any]:
    """The options spelled otherwise than the field they set, or added to the file's value: headers and
    forwarded headers, mutations, --strict, the cache options, inputs, values and outputs."""
    from ..mcpserver._config import parse_headers

    inputs = dict(config.inputs)
    for item in args.input or ():
        name, spec = parse_input(item)
        inputs[name] = {**spec, "description": spec["description"] or name}
    inputs.update(parse_value(item) for item in args.value or ())
    outputs = dict(config.outputs)
    outputs.update(parse_output(item) for item in args.output or ())
    mutations: Any = None
    if args.allow_mutations:
        mutations = True
    elif args.mutation:
        mutations = tuple(args.mutation)
    return {
        "headers": {**config.headers, **parse_headers(args.header, "--header")} if args.header else None,
        "forward_headers": tuple(config.forward_headers) + tuple(args.forward_header) if args.forward_header else None,
        "mutations": mutations,
        "lenient": False if args.strict else None,
        "cache": False if args.no_cache else "refresh" if args.refresh_schema else None,
        "inputs": inputs,
        "outputs": outputs,
    }


def _mcp(args: argparse.Namespace) -> int:
    from .._interrupts import INTERRUPTED_EXIT, INTERRUPTS
    from ..mcpserver import serve_mcp

    serve_mcp(mcp_config_from_args(args), verbose=args.verbose > 0)
    return INTERRUPTED_EXIT if INTERRUPTS.stopped else 0
