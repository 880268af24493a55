"""The public surface is exactly what `dagtools/__init__.py` exports; the doors into each layer (each
public-named subpackage's `__all__`) are pinned as well."""

import dagtools


def test_exported_members_are_sorted_and_exist():
    assert dagtools.__all__ == sorted(dagtools.__all__)
    for name in dagtools.__all__:
        assert hasattr(dagtools, name), name
    public = {n for n in vars(dagtools) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(dagtools, n)).__name__ == "module"}
    assert public - modules == set(dagtools.__all__)


#: The public surface, by name: a change here is a change users see.
SURFACE = """
Agent AgentEvent AnthropicModel BatchingToolset Catalogue CatalogueError CatalogueOptions ChatStore ClosedError
CombinedToolset ConfigError Context DagtoolsError Dialect Executor ExecutorError FunctionModel FunctionToolset Handle
HttpExecutor HttpStatusError LoadedSchema LocalExecutor Message Model ModelError ModelResponse NoServerError
ObjectEntry OpenAIModel Output OwnedTool Registry Response RestApi RunResult SchemaLoadError ScriptedModel Session
SessionOptions SessionState Step StoreBusyError StoreConflictError StoreError Tool ToolCall ToolCallError ToolResult ToolsConfig
Toolset Trace TransportError Usage attach_tools_config compile_catalogue detect_dialect export_tools_config get_model
load_schema load_tools_config open_session render_tools write_trace
""".split()


def test_public_surface_is_pinned_by_name():
    assert sorted(dagtools.__all__) == sorted(SURFACE)


def test_internal_modules_are_private():
    import pkgutil

    for info in pkgutil.walk_packages(dagtools.__path__, "dagtools."):
        leaf = info.name.rsplit(".", 1)[1]
        assert info.ispkg or leaf.startswith("_"), f"{info.name} is a public-looking module; name it _{leaf}"


#: What each public-named subpackage exports (`__all__`), by name. `dagtools` itself is the surface
#: users are promised; these are the doors into each layer, and a change here is still one users of
#: `from dagtools.session import ...` see. Some names are exported twice: where they live and where
#: they lived before (Handle and Step in calls; the registry and the stores in session).
SUBPACKAGES = {
    "dagtools.agent": "Agent AgentEvent RunResult",
    "dagtools.calls": "FieldCalls Handle PreparedCall Step",
    "dagtools.catalogue": "Catalogue compile_catalogue render_tools",
    "dagtools.cli": "main",
    "dagtools.evals": "EvalTask QueryToolset load_tasks wilson",
    "dagtools.examples": "KITCHEN",
    "dagtools.executors": "Executor HttpExecutor LocalExecutor Response",
    "dagtools.integrations": "",
    "dagtools.integrations.langchain": "DagtoolsMiddleware langchain_tools",
    "dagtools.integrations.mellea": "call_tools mellea_tools tool_call_result",
    "dagtools.integrations.openai_agents": "DagtoolsTools",
    "dagtools.integrations.pydantic_ai": "DagtoolsToolset",
    "dagtools.load": "Dialect DialectName LoadedSchema detect_dialect load_schema",
    "dagtools.mcpserver": "McpConfig McpToolServer load_mcp_config serve_mcp",
    "dagtools.mcpserver.gate": (
        "Authenticator BearerTokens CALLER_SCOPE_KEY OAuthResource READ_ONLY_SCOPE_KEY Refused WELL_KNOWN caller_of check_exposure "
        "metadata_url protected_resource_metadata read_only unauthorized"
    ),
    "dagtools.mcpserver.listing": (
        "WATCH_SECONDS WarmUp cached_listing cached_size listable_from_cache opens_keyed opens_session remember_listing "
        "tell_tools_changed watch_store"
    ),
    "dagtools.mcpserver.sessions": (
        "CALL_TOOL ClientState FixedToolset ISSUED_SCOPE_KEY MemoryReturn REFUSED_SCOPE_KEY SCHEMAS_BUDGET SESSION_HEADER "
        "SESSION_META_KEY SessionKey SessionPool SessionsFull mcp_result mcp_tool session_key_for tool_schemas"
    ),
    "dagtools.mcpserver.transport": (
        "UpstreamClient argument_bytes build_http_app forwarded_headers guarded_protocol invalid_text mark_invalid_text refusal "
        "request_headers use_forwarded"
    ),
    "dagtools.models": (
        "AnthropicModel FunctionModel GeminiModel Model ModelRequest ModelResponse OpenAIModel OpenAIResponsesModel ScriptedModel "
        "Usage get_model"
    ),
    "dagtools.registry": "Handle ObjectEntry Registry Step",
    "dagtools.scripts": "Script load_script run_script",
    "dagtools.shell": "Outcome ShellRunner default_state_dir default_store_url history_path mcp_json session_key",
    "dagtools.session": (
        "Context MemoryStore Message ObjectEntry Output Registry Session SessionState SessionStore StoreBusyError StoreConflictError "
        "open_session open_store"
    ),
    "dagtools.stores": "MemoryStore SessionStore StoreBusyError StoreConflictError open_store",
    "dagtools.toolsconfig": (
        "AttachedTools ChatStore RestApi ToolEntry ToolsConfig attach_tools_config export_tools_config load_tools_config"
    ),
    "dagtools.trace": "Trace write_trace",
}


def _public_packages() -> list[str]:
    import pkgutil

    return sorted(
        info.name
        for info in pkgutil.walk_packages(dagtools.__path__, "dagtools.")
        if info.ispkg and not any(part.startswith("_") for part in info.name.split(".")[1:])
    )


def test_every_public_subpackage_is_pinned():
    assert _public_packages() == sorted(SUBPACKAGES)


def test_subpackage_exports_are_pinned_by_name_and_exist():
    import importlib

    for name, pinned in SUBPACKAGES.items():
        package = importlib.import_module(name)
        exported = list(getattr(package, "__all__", []))
        assert exported == sorted(exported), f"{name}.__all__ is not sorted"
        assert sorted(exported) == sorted(pinned.split()), name
        # dir(), not hasattr(): a framework's integration names its exports without importing the framework.
        missing = [n for n in exported if n not in dir(package)]
        assert missing == [], f"{name} exports names it does not have: {missing}"


def test_a_name_exported_twice_is_the_same_object():
    import importlib

    seen: dict[str, tuple[str, object]] = {}
    for name in SUBPACKAGES:
        package = importlib.import_module(name)
        for export in getattr(package, "__all__", []):
            if export not in vars(package):  # exported lazily (a framework's integration): not imported here
                continue
            value = vars(package)[export]
            first = seen.setdefault(export, (name, value))
            assert first[1] is value, f"{export} is one thing in {first[0]} and another in {name}"
    for export in dagtools.__all__:
        if export in seen:
            assert getattr(dagtools, export) is seen[export][1], export
