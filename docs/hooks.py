"""The reference pages for the files users write (the MCP config file, eval task files, call scripts),
generated from the code that reads those files at every build of the site, so they cannot drift from it.

mkdocs.yml names this module under `hooks:`; its `on_files` adds the pages as generated files before the
nav is built. The MCP config's keys are McpConfig's fields, each with the docstring written under it; the
other files' keys are the `Key` tables their readers check a file against.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from collections.abc import Callable
from typing import Any

#: The MCP config's field annotations as a reader of the file writes the value.
CONFIG_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number (seconds)",
    "bool": "boolean",
    "str | None": "string",
    "ToolsMode": "`fixed` or `dynamic`",
    "Transport": "`stdio` or `http`",
    "dict[str, str]": "mapping of header name to value, or list of `Name: value`",
    "tuple[str, ...]": "list of strings (or one string)",
    "bool | tuple[str, ...]": "boolean or list of mutation names",
    "dict[str, dict[str, Any]]": "mapping of name to {field, description}",
    "dict[str, Any]": "mapping of name to {type, description}",
    "bool | Literal['refresh']": "`true`, `false` or `refresh`",
}


def _shown(value: Any) -> str:
    """A default as YAML writes it."""
    if value is True or value is False:
        return f"`{str(value).lower()}`"
    if value is None or value == "":
        return "none"
    if isinstance(value, (tuple, list)):
        return "`[]`" if not value else f"`{list(value)}`"
    if isinstance(value, dict):
        return "`{}`" if not value else f"`{value}`"
    if isinstance(value, int) and value >= 10_000 and value % 1024 == 0:  # a size in bytes
        return f"`{value}` ({value // 1024**2:,} MiB)" if value % 1024**2 == 0 else f"`{value}` ({value // 1024:,} KiB)"
    return f"`{value}`"


def _cell(text: str) -> str:
    """Text fit for one cell of a Markdown table: one line, its bars escaped."""
    return re.sub(r"\s+", " ", text).strip().replace("|", "\\|")


def field_docs(cls: type) -> dict[str, str]:
    """A dataclass's fields with the docstring written under each (empty where there is none)."""
    [node] = ast.parse(inspect.getsource(cls)).body
    assert isinstance(node, ast.ClassDef)
    docs: dict[str, str] = {}
    for statement, after in zip(node.body, [*node.body[1:], None]):
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            text = after.value.value if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) else ""
            docs[statement.target.id] = str(text)
    return docs


def mcp_config_rows() -> list[tuple[str, str, str, str]]:
    """(key, type, default, meaning) for every key an MCP config file takes."""
    from dagtools.mcpserver import McpConfig

    docs = field_docs(McpConfig)
    rows = []
    for f in dataclasses.fields(McpConfig):
        if not docs.get(f.name):
            raise ValueError(f"McpConfig.{f.name} has no docstring: write what the key means under the field.")
        annotation = str(f.type)
        if annotation not in CONFIG_TYPES:
            raise ValueError(f"McpConfig.{f.name}'s type {annotation} is not in docs/hooks.py's CONFIG_TYPES: say how a file writes it.")
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        rows.append((f.name, CONFIG_TYPES[annotation], _shown(default), docs[f.name]))
    return rows


def _table(rows: list[tuple[str, str, str, str]]) -> str:
    lines = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    lines += [f"| `{key}` | {_cell(kind)} | {_cell(default)} | {_cell(meaning)} |" for key, kind, default, meaning in rows]
    return "\n".join(lines) + "\n"


def _key_rows(keys: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(name, key.type, _default_text(key.default), key.meaning) for name, key in keys.items()]


def _default_text(default: str) -> str:
    """A `Key`'s default: words as they are, a value in code."""
    if default in ("", "none"):
        return "none"
    return default if default == "required" or " " in default else f"`{default}`"


GENERATED = "<!-- Generated at every build by docs/hooks.py from the code that reads these files: edit the code, not this page. -->"


def mcp_config_page() -> str:
    return f"""# MCP config file keys

{GENERATED}

Every key `dagtools mcp --config FILE` reads from its YAML or JSON file, with its type, its default and
what it means. A key may also be written with dashes (`forward-headers`); the command line's options
override the file's values. A key not listed here is refused, naming the keys there are. The
[MCP server](../mcp.md) page says how the pieces fit together.

{_table(mcp_config_rows())}"""


def eval_tasks_page() -> str:
    from dagtools.evals import _tasks

    return f"""# Eval task file keys

{GENERATED}

Every key a `dagtools eval` task file takes, with its type, its default and what it means. A file is
either several tasks under `tasks:` or one task with its keys at the top level. A key not listed here
is refused, naming the keys there are. The [Evals](../evals.md) page shows a whole suite.

## The file

{_table(_key_rows(_tasks.FILE_KEYS))}
## A task

{_table(_key_rows(_tasks.TASK_KEYS))}
## `checks`

{_table(_key_rows(_tasks.CHECK_KEYS))}
## One check in `checks.outputs`

Give at least one of these; each given must hold.

{_table(_key_rows(_tasks.OUTPUT_CHECK_KEYS))}
## One check in `checks.state`

{_table(_key_rows(_tasks.STATE_CHECK_KEYS))}"""


def call_scripts_page() -> str:
    from dagtools.scripts import _script

    return f"""# Call script keys

{GENERATED}

Every key of a script that `dagtools call SCHEMA SCRIPT` replays (and that `dagtools run --json`
prints), with its type, its default and what it means. A key not listed here is refused, with the key
probably meant. The [Command line](../cli.md) page shows a whole script.

## The script

{_table(_key_rows(_script.SCRIPT_KEYS))}
## One call in `calls`

{_table(_key_rows(_script.CALL_KEYS))}"""


#: Each generated page, by its path in the site, and what writes it.
PAGES: dict[str, Callable[[], str]] = {
    "reference/mcp-config.md": mcp_config_page,
    "reference/eval-tasks.md": eval_tasks_page,
    "reference/call-scripts.md": call_scripts_page,
}


def on_files(files: Any, config: Any) -> Any:
    """mkdocs' hook: add the generated pages before the nav is built."""
    from mkdocs.structure.files import File

    for uri, page in PAGES.items():
        files.append(File.generated(config, uri, content=page()))
    return files
