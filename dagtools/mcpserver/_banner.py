"""What `dagtools mcp` tells its operator at start, on stderr: what it serves, how, and what to watch for.

An MCP client starts the server itself and shows its stderr only in a log, so this block is what a
person reads when a client "sees no tools" or every call fails: the source (credentials removed),
where calls go, the tools mode, the transport, the size of the catalogue, and what was tolerated in
the schema. It never goes to stdout, which is the protocol in stdio mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._redact import redact
from .._words import counted
from .listing import cached_size

if TYPE_CHECKING:
    from ._server import McpToolServer

__all__ = ["describe_server", "no_server_warning", "schema_size"]

_FIXED_TOOLS = "selectTools, callTool, callChain"


def describe_server(server: McpToolServer, *, every_problem: bool = False) -> str:
    """The start-up block: one header line, then indented lines, so a log shows it as one unit; the
    schema's tolerated problems, the first few unless `every_problem` (`-v`)."""
    config, loaded = server.config, server.loaded
    lines = [f"dagtools mcp: serving {redact(loaded.origin)}"]
    lines.append(f"  calls go to: {_calls(server)}")
    if config.tools == "dynamic":
        lines.append("  tools: dynamic (each selected Type_field tool is listed; the client must re-read tools/list when told)")
    else:
        lines.append(f"  tools: fixed ({_FIXED_TOOLS}{', save' if config.outputs else ''}: for any client)")
    if not config.outputs:
        lines.append("  save: not offered, no outputs declared (--output NAME:TYPE, or outputs: in the config file)")
    lines.append(f"  transport: {_transport(server)}")
    types, fields, tools = cached_size(loaded, config) or schema_size(server)
    left_out = fields - tools
    mutations = "all" if config.mutations is True else f"{len(config.mutations)} allowed" if config.mutations else "off"
    lines.append(
        f"  schema: {types} object types, {fields} fields -> {tools} tools"
        + (
            f" ({left_out} fields are not tools: deprecated, mutations off, IDs the dialect handles, or out of reach)"
            if left_out > 0
            else ""
        )
        + f"; mutations {mutations}"
    )
    if config.operations:  # read and checked now: a bad operation stops the start, naming its file and line
        from ..catalogue._operations import operations_of

        served = operations_of(server.catalogue, config.operations)
        lines.append(f"  operations: {len(served.names())} from {config.operations} (found by selectTools and its search)")
    if config.headers or config.forward_headers:
        sent = ", ".join(sorted(config.headers)) or "none"
        forwarded = f"; forwarded from callers: {', '.join(config.forward_headers)}" if config.forward_headers else ""
        lines.append(f"  headers to the API: {sent}{forwarded}")
    problems = loaded.warnings
    if problems and every_problem:
        lines.append(f"  tolerated in the schema ({counted(len(problems), 'problem')}; --strict refuses them):")
        lines.extend(f"    - {redact(problem)}" for problem in problems)
    elif problems:  # one line, as every command says it: GitHub's schema has a dozen
        first = "" if len(problems) == 1 else "the first: "
        lines.append(
            f"  tolerated in the schema ({counted(len(problems), 'problem')}; -v lists them, --strict refuses them): "
            f"{first}{redact(problems[0])}"
        )
    warning = no_server_warning(server)
    if warning:
        lines.append(warning)
    return "\n".join(lines)


def no_server_warning(server: McpToolServer) -> str | None:
    """Said when there is no API behind the schema: the client lists tools, and then every call fails."""
    if server.config.api_url or server.loaded.executable:
        return None
    return (
        f"dagtools mcp: warning: {server.loaded.origin} only describes the API, so every tool call will fail. "
        "Give the API's URL as the source (dagtools mcp https://HOST/graphql), or keep the schema file and add "
        "--endpoint https://HOST/graphql (endpoint: in the config file)."
    )


def _calls(server: McpToolServer) -> str:
    url = server.config.api_url
    if url:
        return f"{redact(url)} (timeout {server.config.timeout:g} s)"
    if server.loaded.executable:
        return "this process (the Python schema's resolvers)"
    return "nowhere (a schema with no API behind it)"


def _transport(server: McpToolServer) -> str:
    config = server.config
    if config.transport != "http":
        return "stdio (stdout is the protocol; this log is stderr)"
    host = f"[{config.host}]" if ":" in config.host else config.host
    where = f"streamable HTTP at http://{host}:{config.port}{config.path}"
    if config.public_url:
        where += f", reached as {redact(config.public_url)}"
    if config.auth_token_env:
        where += f", callers need a bearer token from ${config.auth_token_env}"
    if config.oauth_issuer:
        checked = f"introspected with ${config.oauth_introspection_env}" if config.oauth_introspection_env else "JWTs"
        where += f", callers need an OAuth access token from {redact(config.oauth_issuer)} ({checked})"
    return where


def schema_size(server: McpToolServer) -> tuple[int, int, int]:
    """Object types and their fields as the schema has them (introspection types and subscriptions
    aside), and the catalogue's tools. It builds the schema: a start from the compiled cache reads the
    figures an earlier start wrote (`cached_size`) instead."""
    from graphql import GraphQLObjectType

    schema = server.loaded.schema
    subscription = schema.subscription_type
    objects = [
        t for t in schema.type_map.values() if isinstance(t, GraphQLObjectType) and not t.name.startswith("__") and t is not subscription
    ]
    return len(objects), sum(len(t.fields) for t in objects), len(server.catalogue)
