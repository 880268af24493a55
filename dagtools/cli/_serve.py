"""`dagtools serve`: a Python schema as a GraphQL endpoint on this machine, so every URL example has an
API one command away (with no source, the kitchen API that ships inside the package).

The endpoint speaks GraphQL over HTTP as servers commonly do: `POST` a JSON body `{"query",
"variables", "operationName"}`, or `GET ?query=...` for queries, answered `{"data", "errors"}`. It runs
documents through the same in-process executor a Python source gets, validating them first (people
and other tools write these documents, not dagtools). It is a development server: it listens on
loopback unless told otherwise, and bounds every body it reads. Ctrl-C stops it: the requests under
way get a second to finish, then are answered 503; a second Ctrl-C stops it at once.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any
from urllib.parse import parse_qs

__all__ = ["add_serve_command", "graphql_app"]

#: The largest request body read, in bytes: a GraphQL document with its variables, not an upload.
MAX_BODY = 1 << 20

_Scope = dict[str, Any]


def add_serve_command(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve a Python schema as a GraphQL API on 127.0.0.1 (default: the kitchen API), to point dagtools at",
        description="Serve a strawberry or graphql-core schema over HTTP, e.g. `dagtools serve` (the kitchen API), then "
        "`dagtools tools http://127.0.0.1:8000/graphql` in another terminal.",
    )
    serve.add_argument("source", nargs="?", help="path/to/file.py:attribute (default: the kitchen API shipped with dagtools)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    serve.add_argument("--path", default="/graphql", help="the endpoint's path (default /graphql)")
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from ..examples import KITCHEN
    from ..executors._local import LocalExecutor
    from ..load._sources import load_schema

    try:
        import uvicorn  # noqa: F401  (serving needs it: said before the schema loads)
    except ImportError:
        from .._errors import install_command

        print(f"dagtools: serving needs uvicorn: {install_command('mcp')}", file=sys.stderr)
        return 2
    source = args.source or f"{KITCHEN / 'api.py'}:schema"
    loaded = load_schema(source)
    if not loaded.executable:
        print(
            f"dagtools: {source} has no resolvers to serve: name a Python schema as path/to/file.py:attribute "
            "(an SDL or introspection file describes an API; it cannot answer for one)",
            file=sys.stderr,
        )
        return 2
    from .._interrupts import INTERRUPTED_EXIT, INTERRUPTS
    from ..mcpserver._serve import check_port_free, listen, stoppable_server

    check_port_free(args.host, args.port, perhaps="another dagtools serve", option="--port, such as --port 8001")
    schema = loaded.strawberry_schema or loaded.schema
    path = "/" + args.path.strip("/")
    app = graphql_app(LocalExecutor(schema, validate_documents=True), path=path)
    listening = listen(args.host, args.port)  # bound here, so --port 0 announces the port it got
    port = listening.getsockname()[1]
    url = f"http://{args.host if ':' not in args.host else f'[{args.host}]'}:{port}{path}"
    print(f"dagtools: serving {'the kitchen API' if not args.source else source} at {url} (Ctrl-C stops it)", file=sys.stderr)
    print(f"dagtools: try `dagtools tools {url}` or `dagtools mcp {url}` in another terminal", file=sys.stderr, flush=True)
    stoppable_server(app, log_level="warning", lifespan="off").run(sockets=[listening])
    if INTERRUPTS.stopped:
        print(f"dagtools: stopped serving {url} (Ctrl-C)", file=sys.stderr)
        return INTERRUPTED_EXIT
    return 0


def graphql_app(executor: Any, *, path: str = "/graphql") -> Any:
    """An ASGI application answering GraphQL requests at `path` (and `/`) with `executor`."""

    async def app(scope: _Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"].rstrip("/") not in {path.rstrip("/"), ""}:
            return await _answer(send, 404, {"errors": [{"message": f"Nothing here: the GraphQL endpoint is {path}."}]})
        if scope["method"] == "GET":
            params = {k: v[0] for k, v in parse_qs(scope.get("query_string", b"").decode("latin-1")).items()}
            if "query" not in params:
                return await _answer(send, 400, {"errors": [{"message": f"Send a query: POST JSON to {path}, or GET {path}?query=..."}]})
            try:
                request: Any = {**params, "variables": json.loads(params["variables"]) if params.get("variables") else None}
            except ValueError:
                return await _answer(send, 400, {"errors": [{"message": "variables= is not JSON: send it as a JSON object, URL-encoded."}]})
            if _is_mutation(request["query"]):
                return await _answer(send, 405, {"errors": [{"message": "A mutation must be sent with POST."}]})
        elif scope["method"] == "POST":
            body = await _body(receive)
            if body is None:
                return await _answer(send, 413, {"errors": [{"message": f"The request body is over {MAX_BODY} bytes."}]})
            try:
                request = json.loads(body)
            except ValueError:
                return await _answer(
                    send, 400, {"errors": [{"message": 'The body is not JSON: send {"query": "...", "variables": {...}}.'}]}
                )
        else:
            return await _answer(send, 405, {"errors": [{"message": "Use POST (or GET for a query)."}]})
        if not isinstance(request, dict) or not isinstance(request.get("query"), str):
            return await _answer(send, 400, {"errors": [{"message": 'The body needs "query": a GraphQL document as a string.'}]})
        variables = request.get("variables")
        if variables is not None and not isinstance(variables, dict):
            return await _answer(send, 400, {"errors": [{"message": '"variables" must be a JSON object.'}]})
        response = await executor.execute(request["query"], variables, operation_name=request.get("operationName"))
        answer: dict[str, Any] = {"data": response.data}
        if response.errors:
            answer["errors"] = response.errors
        await _answer(send, 200, answer)

    return app


async def _body(receive: Any) -> bytes | None:
    """The request body, or None once it passes MAX_BODY."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _is_mutation(document: str) -> bool:
    from graphql import GraphQLError, OperationType, parse
    from graphql.language import OperationDefinitionNode

    try:
        node = parse(document)
    except GraphQLError:
        return False  # the executor says what is wrong with it
    return any(isinstance(d, OperationDefinitionNode) and d.operation != OperationType.QUERY for d in node.definitions)


async def _answer(send: Any, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload, ensure_ascii=False, default=str).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
