"""The public surface is exactly what `dagtools/__init__.py` exports."""

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
SessionOptions SessionState Step StoreBusyError StoreConflictError Tool ToolCall ToolCallError ToolResult ToolsConfig
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
