"""The layers of dagtools, lowest first, written once: a module imports its own layer and the layers
before it, never one after, not even for type checking. `tests/test_layers.py` holds the code to this
list; the package docstring points here instead of repeating it.

Nothing imports this module at run time: it is the layout, stated as data so a test can read it.
"""

__all__ = ["LAYERS"]

#: (modules and packages of the layer, what the layer holds), lowest first.
LAYERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (
            "dagtools._closing",
            "dagtools._errors",
            "dagtools._interrupts",
            "dagtools._layers",
            "dagtools._lazy",
            "dagtools._limits",
            "dagtools._redact",
            "dagtools._retries",
            "dagtools._telemetry",
            "dagtools._tools",
            "dagtools._values",
            "dagtools._words",
            "dagtools._yaml",
            "dagtools.examples",
        ),
        "shared pieces: the error tree, Tool and ToolCall, value and size limits, redaction, retries, words, Ctrl-C",
    ),
    (
        ("dagtools.executors", "dagtools.stores"),
        "back ends: where documents go (HTTP, in process) and where sessions live (memory, SQLite, Redis)",
    ),
    (("dagtools.load",), "schema sources, SDL repair, introspection and its cache, dialects"),
    (("dagtools.catalogue",), "the tools of a schema: names, JSON Schema, provider renderings, the compiled cache"),
    (("dagtools.registry",), "what a session holds of objects: handles, identity, the Type#N registry, long values"),
    (("dagtools.calls",), "field calls: binding arguments, documents from handles, batched reads, answers into the registry"),
    (("dagtools.session",), "the session: toolsets (active set), meta-tools, outputs, context, the turn, options, state"),
    (
        (
            "dagtools.agent",
            "dagtools.integrations",
            "dagtools.mcpserver",
            "dagtools.models",
            "dagtools.scripts",
            "dagtools.shell",
            "dagtools.toolsconfig",
            "dagtools.trace",
        ),
        "drivers: the agent loop and models, framework integrations, the tools config, the MCP server, the shell, traces",
    ),
    (("dagtools.evals",), "evaluations of models on tasks, run through the drivers"),
    (("dagtools.cli",), "the command line"),
    (("dagtools",), "the public surface, imported on first use"),
)
