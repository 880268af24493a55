"""`dagtools mcp`: one GraphQL API as an MCP server, one dagtools `Session` per MCP client.

Built on the SDK's low-level `Server`, because every client has its own toolset. All sessions share
one loaded schema and one compiled catalogue; each has its own registry and active tools.

Which session a request belongs to:
- Handshake era (initialize, up to 2025-11-25): the connection. A stdio process, an in-memory pair
  or one `Mcp-Session-Id` of streamable HTTP each hold one session, dropped when it closes (with
  bearer tokens, the SDK also binds an `Mcp-Session-Id` to the caller that opened it).
- Stateless era (2026-07-28): requests carry no connection, so a key names the session (`sessions.session_key_for`):
  an unguessable key from the client, the authenticated caller, or a key the server issues; never
  the client's address or name. Keyed sessions live in a pool that never pushes a live session out
  to make room: at capacity a new one is refused (HTTP 503 with `Retry-After`), see `sessions.SessionPool`.
  With a store (`--store sqlite:///PATH`, `redis://...` or `redis+cluster://...`) each keyed session is
  also kept there under its key's digest: every call is saved before its result returns, and a session
  this process does not hold (after a restart, or one another worker served) is resumed from the store:
  no affinity is needed, and a listen stream learns of other workers' tool-list changes (`watch_store`).

Forwarded headers are read from every request and sent upstream with that request only
(`transport.use_forwarded`): no session holds a credential. A caller whose OAuth access token lacks the write
scope gets sessions of its own, opened without mutations: no mutation tool is offered or run there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._closing import AsyncClosing
from .._errors import ConfigError, DagtoolsError
from .._tools import ToolCall, ToolResult
from ..load._warm_start import load_cached
from ._banner import schema_size
from ._config import McpConfig
from .gate import check_exposure, read_only
from .listing import WarmUp, cached_listing, opens_keyed, opens_session, remember_listing, tell_tools_changed, watch_store
from .sessions import ISSUED_SCOPE_KEY, REFUSED_SCOPE_KEY, SESSION_META_KEY, MemoryReturn, session_key_for
from .transport import (
    UpstreamClient,
    argument_bytes,
    build_http_app,
    forwarded_headers,
    invalid_text,
    refusal,
    request_headers,
    use_forwarded,
)

if TYPE_CHECKING:  # the session machinery (and graphql-core) is imported once a session opens
    from ..catalogue._catalogue import Catalogue
    from ..executors._base import Executor
    from ..load._loaded import LoadedSchema
    from ..session._session import Session
    from ..session._toolsets import Toolset
    from ..stores._store import SessionStore
    from .sessions import ClientState, SessionPool

__all__ = ["McpToolServer"]

_STATE_KEY = "dagtools.session"

INSTRUCTIONS = """\
This server exposes a GraphQL API as tools. Every field of every object type is a tool named \
Type_field; every object a tool returns is an ID of the form Type#N that you pass to later tools. \
Objects never change: a tool returns a new object instead. Start with selectTools: its description \
lists the objects you hold and the tools you can select.{mode}"""

_FIXED_NOTE = " Selected tools are run with callTool(tool, arguments); selectTools returns their parameters."


def _mcp() -> Any:
    try:
        import mcp  # noqa: F401
        import mcp_types
    except ImportError:
        raise ConfigError("dagtools mcp needs the MCP SDK: pip install 'dagtools-graphql[mcp]'") from None
    return mcp_types


class McpToolServer(AsyncClosing):
    """The MCP face of one API: build it once, serve it over stdio or streamable HTTP, or hand
    `.server` to the SDK's `Client` in tests."""

    def __init__(self, config: McpConfig, *, loaded: LoadedSchema | None = None) -> None:
        types = _mcp()
        from mcp.server.caching import CacheHint
        from mcp.server.lowlevel.server import NotificationOptions, Server

        self.config = config
        if loaded is None:
            if not config.source:
                raise ConfigError("Give the API to serve: a URL, a schema file, or path/to/api.py:attribute.")
            options = config.load_options
            if options["use_cache"]:
                loaded = load_cached(config.source, lenient=config.lenient, headers=config.headers or None, **options)
            else:
                from ..load._sources import load_schema

                loaded = load_schema(config.source, lenient=config.lenient, headers=config.headers or None, **options)
        self.loaded = loaded
        # A start whose first tool list is in the compiled cache answers it from there; the catalogue,
        # the session machinery and the schema come after it (`WarmUp`), or with the first call.
        self._first_listing = cached_listing(loaded, config)
        self._catalogue: Catalogue | None = None
        self._warm = WarmUp(self._prepare)
        if self._first_listing is None:
            self._warm.run()
        self._dynamic = config.tools == "dynamic"
        self._sessions: SessionPool | None = None
        self.memory = MemoryReturn()
        self._upstream: UpstreamClient | None = None
        # memory: is today's behaviour (sessions in the pool only); any other store outlives the process.
        self._store: SessionStore | None = None
        if config.durable_store:
            from ..stores._open import open_store

            self._store = open_store(config.store)
        self._types = types
        dynamic = self._dynamic

        class _Server(Server):
            def create_initialization_options(self, notification_options: Any = None, *args: Any, **kw: Any) -> Any:
                options = notification_options or NotificationOptions(tools_changed=dynamic)
                return super().create_initialization_options(options, *args, **kw)

        handlers: dict[str, Any] = {"on_list_tools": self._list_tools, "on_call_tool": self._call_tool}
        if dynamic:
            handlers["on_subscriptions_listen"] = self._listen
        self.server = _Server(
            "dagtools",
            version=_version(),
            title=f"dagtools: {loaded.origin}",
            instructions=INSTRUCTIONS.format(mode="" if dynamic else _FIXED_NOTE),
            cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="private")},
            get_tool_input_schema=self._input_schema,
            **handlers,
        )

    def _prepare(self) -> None:
        """The catalogue, restored from its compiled form or compiled: once, after `WarmUp` has imported
        the session machinery."""
        from ..session._open import catalogue_for

        c = self.config
        self._catalogue = catalogue_for(
            self.loaded, dialect=c.dialect, mutations=c.mutations, include_deprecated=c.include_deprecated, relay_ids=c.relay_ids
        )

    @property
    def catalogue(self) -> Catalogue:
        """The API's catalogue, shared by every session (restored from the compiled cache when there)."""
        self._warm.run()
        assert self._catalogue is not None
        return self._catalogue

    @property
    def _pool(self) -> SessionPool:
        if self._sessions is None:
            from .sessions import SessionPool

            c = self.config
            self._sessions = SessionPool(
                ttl=c.session_ttl,
                max_sessions=c.max_sessions,
                per_caller=c.max_sessions_per_caller,
                stored=self._store is not None,
                on_close=self.memory.session_closed,
            )
        return self._sessions

    # -- sessions ------------------------------------------------------------------------------------

    async def session_for(self, ctx: Any) -> Session:
        """The dagtools session the request belongs to, opened on first use (see the module docstring)."""
        return (await self._state(ctx)).session

    async def _state(self, ctx: Any) -> ClientState:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        await self._warm.ready()  # a warm start's deferred imports and catalogue, done or waited for
        headers = request_headers(ctx)
        # Every handler starts here, so every request runs with its own forwarded headers, or none.
        use_forwarded(forwarded_headers(headers, self.config.forward_headers))
        from .sessions import ClientState

        reading = ctx.request is not None and read_only(ctx.request)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            connection = getattr(ctx.session, "_connection", None)
            if connection is not None:
                name = _STATE_KEY + (":read-only" if reading else "")
                state = connection.state.get(name)
                if state is None:
                    state = ClientState(session=await self._open(reading=reading))
                    connection.state[name] = state
                    connection.exit_stack.push_async_callback(self.memory.release, connection.state, name)
                return state
        key = session_key_for(ctx, headers, forwarded_headers(headers, self.config.forward_headers))
        # The digest names the session in the store too: neither the client's key nor a credential is kept.
        from .sessions import SessionsFull

        try:
            state = await self._pool.get(key, lambda: self._open(key.digest, reading=reading))
        except SessionsFull as full:
            if ctx.request is not None:  # the HTTP face answers 503 with Retry-After
                ctx.request.scope[REFUSED_SCOPE_KEY] = full.retry_after
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=self._types.INTERNAL_ERROR, message=str(full)) from None
        if key.issued and ctx.request is not None:
            ctx.request.scope[ISSUED_SCOPE_KEY] = key.issued
        return state

    async def _open(self, key: str | None = None, *, reading: bool = False) -> Session:
        """A new session, or with `key` and a store, the one stored under `key` (new when there is none);
        `reading`: without mutations, whatever the config allows."""
        from ..session._open import open_session

        executor = self._executor()
        kept = key is not None and self._store is not None
        options = {**self.config.session_options, **({"mutations": False} if reading else {})}
        session = await open_session(
            self.loaded, executor=executor, store=self._store if kept else None, key=key if kept else None, **options
        )
        if executor is not None:  # made for this session alone (its client is the server's): it goes with the session
            session.close_with(executor.aclose)
        return session

    def _executor(self) -> Executor | None:
        """Every session sends through the server's one upstream client: the environment's headers, then
        the configured ones, then the current request's forwarded ones (see `transport.use_forwarded`)."""
        from ..executors._base import SchemaOnlyExecutor

        url = self.config.api_url
        if not url and self.loaded.executable:
            return None  # open_session runs the API in this process
        if not url:
            return SchemaOnlyExecutor(self.loaded.origin)
        from ..executors._http import HttpExecutor, env_headers, merge_headers

        if self._upstream is None:
            self._upstream = UpstreamClient(merge_headers(env_headers(), self.config.headers))
        return HttpExecutor(url, client=self._upstream.get(), timeout=self.config.timeout)

    async def check_store(self) -> None:
        """Refuse to start on a store that cannot be written (`SessionStore.check`), before any client comes."""
        if self._store is not None:
            await self._store.check()

    async def aclose(self) -> None:
        """Close every keyed session and the upstream client (connection sessions close with their connection)."""
        if self._sessions is not None:  # no pool was made, so no session to close (and nothing to import)
            await self._sessions.aclose()
        if self._store is not None:
            await self._store.aclose()
        if self._upstream is not None:
            await self._upstream.aclose()

    # -- protocol handlers ---------------------------------------------------------------------------

    def toolset_of(self, session: Session) -> Toolset:
        """What the client sees of a session: its own growing toolset, or the fixed one over it."""
        from .sessions import FixedToolset

        return session.toolset if self._dynamic else FixedToolset(session)

    def _toolset(self, state: ClientState) -> Toolset:
        """`toolset_of` the client's session, made once per client."""
        if state.toolset is None:
            state.toolset = self.toolset_of(state.session)
        return state.toolset

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        types = self._types
        # Whichever era the first client speaks, a session it opens now lists what every fresh one does.
        # ... unless it may not write: the first list of a read-only session is its own.
        reading = ctx.request is not None and read_only(ctx.request) and bool(self.config.mutations)
        fresh = not reading and (opens_session(ctx, self.config, _STATE_KEY) or opens_keyed(ctx, self.config, self._sessions))
        if fresh and self._first_listing is not None:
            listed = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in self._first_listing])
            self._first_listing = None  # once: the warm-up makes the next list as cheap from the session
            self._warm.start(lambda: self.catalogue.schema)
            return listed
        try:
            state = await self._state(ctx)
            async with state.lock:
                await state.session.catch_up()  # another worker may have changed its tools since
        except DagtoolsError as error:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=types.INTERNAL_ERROR, message=f"dagtools could not open a session: {error}") from None
        listed = types.ListToolsResult(tools=self._listing(state))
        if fresh:
            dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
            remember_listing(self.loaded, self.config, dumped, list(schema_size(self)))
        return self._with_key(ctx, listed)

    def _listing(self, state: ClientState) -> list[Any]:
        """The client's tools, byte for byte as last time until their names change: a client is told of a
        change only then (`tools/list_changed`; never in fixed mode), so what it cached stays what it
        would be given. The session as it is now is one selectTools call (with no tools) away."""
        from .sessions import mcp_tool

        toolset = self._toolset(state)
        version = toolset.version()
        if state.listed is None or state.listed[0] != version:
            state.listed = (version, [mcp_tool(self._types, t) for t in toolset.list_tools()])
        return list(state.listed[1])

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        from .sessions import mcp_result  # with the session machinery (`WarmUp`)

        invalid = invalid_text(params.name, params.arguments, params.meta)
        if invalid is not None:  # before the session: a refused call opens and changes nothing
            name = params.name.encode(errors="replace").decode()
            return mcp_result(self._types, ToolResult.error(ToolCall(name=name, arguments={}), invalid))
        try:
            state = await self._state(ctx)
        except DagtoolsError as error:
            return mcp_result(self._types, ToolResult.error(ToolCall(name=params.name), f"dagtools could not open a session: {error}"))
        arguments = dict(params.arguments or {})
        size = argument_bytes(arguments)
        refused = refusal(self.config, state.session.held_bytes, size)  # as of its last turn here, or as restored
        if refused is not None:
            return self._with_key(ctx, mcp_result(self._types, ToolResult.error(ToolCall(name=params.name), refused)))
        async with state.lock:  # a call catches up with the store itself, inside its turn (`SessionKeeper.run`)
            # Whether the tool list changed, without listing it: the version moves whenever the names would.
            before = state.session.toolset.version() if self._dynamic else None
            call = ToolCall(name=params.name, arguments=arguments)
            try:
                if self._dynamic:  # the session's own tools: it runs and records the call
                    result = await state.session.call_tool(call)
                else:  # the fixed tools run the session's through `Session.call_tool`, which records them
                    from ..session._turn import run_turn

                    result = (await run_turn(self._toolset(state), [call]))[0]
            except DagtoolsError as error:  # the store refused (busy, changed meanwhile, gone): nothing was saved
                result = ToolResult.error(call, str(error))
            changed = self._dynamic and state.session.toolset.version() != before
        if changed:
            await tell_tools_changed(ctx, state, self._types)
        return self._with_key(ctx, mcp_result(self._types, result))

    async def _listen(self, ctx: Any, params: Any) -> Any:
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        state = await self._state(ctx)
        if state.bus is None:
            state.bus = InMemorySubscriptionBus()
            state.listen = ListenHandler(state.bus, max_subscriptions=8)
        if self._store is None:
            return await state.listen(ctx, params)
        import anyio

        async with anyio.create_task_group() as group:  # the stream lasts as long as the listen request
            group.start_soon(watch_store, state)
            try:
                return await state.listen(ctx, params)
            finally:
                group.cancel_scope.cancel()

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        return self.catalogue.tool(name).parameters if name in self.catalogue else None

    @staticmethod
    def _with_key(ctx: Any, result: Any) -> Any:
        """Hand a server-issued session key back to the client, which sends it again to keep its session."""
        request = getattr(ctx, "request", None)
        issued = request.scope.get(ISSUED_SCOPE_KEY) if request is not None else None
        if issued:
            result.meta = {**(result.meta or {}), SESSION_META_KEY: issued}
        return result

    # -- transports ----------------------------------------------------------------------------------

    def http_app(self) -> Any:
        """The streamable HTTP ASGI app (both protocol eras) at `config.path`, behind the gate (`transport`)."""
        return build_http_app(self, check_exposure(self.config))


def _version() -> str:
    from .. import __version__

    return __version__
