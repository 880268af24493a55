"""Running shell lines on a session: a line is one call of the fixed MCP toolset (`callTool`, `callChain`,
`selectTools`, `save`), so what it answers is exactly what an MCP client would get for that call.

A write asks before it runs (or needs `yes`); a line that cannot be read, a write refused, or a
call that failed changes nothing the session holds. Nothing raises for a user's mistake: every
outcome is text to show, flagged when it is an error.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import DagtoolsError
from .._tools import ToolCall, ToolResult
from ..calls._chain_calls import CALL_CHAIN
from ..mcpserver.sessions import CALL_TOOL, FixedToolset
from ..session._metatools import SAVE, SELECT_TOOLS
from ..session._session import Session
from ..session._turn import run_turn
from ._help import builtin_help, tool_help, type_help
from ._map import api_map
from ._parse import BUILTINS, Builtin, LineError, Pipeline, ShellStep, parse_line, parse_value

__all__ = ["Outcome", "ShellRunner", "mcp_json"]

#: Asks the person at the terminal a yes/no question; None where nobody can answer (a script).
Confirm = Callable[[str], Awaitable[bool]]


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What one line gave: text for a person, what an MCP client would get, and whether it failed."""

    text: str
    mcp: dict[str, Any]
    is_error: bool = False
    hint: str = ""  # for the person running the shell, never part of what a model reads
    leave: bool = False


def mcp_json(text: str, is_error: bool = False) -> dict[str, Any]:
    """A tool result as the MCP server sends it (`CallToolResult`: its text, flagged when it is an error),
    made by the SDK's own model where the `mcp` extra is installed."""
    try:
        import mcp_types
    except ImportError:
        return {"content": [{"type": "text", "text": text}], "isError": is_error}
    result = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)], is_error=is_error)
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _outcome(result: ToolResult, hint: str = "") -> Outcome:
    """A call's result: as the MCP server sends it (`--json`), and for the terminal without what only a
    tool list has use for (`selected`: the shell runs any tool, selected or not)."""
    value = result.value
    if isinstance(value, Mapping) and "selected" in value:
        value = {k: v for k, v in value.items() if k != "selected"}
    return Outcome(text=readable(value), mcp=mcp_json(result.content, result.is_error), is_error=result.is_error, hint=hint)


def _said(text: str, *, error: bool = False, hint: str = "") -> Outcome:
    value = {"error": text} if error else text
    return Outcome(
        text=readable(value), mcp=mcp_json(json.dumps(value, ensure_ascii=False) if error else text, error), is_error=error, hint=hint
    )


def readable(value: Any) -> str:
    """A result for a person: each top-level part on its own line (`result: Potato#2`), each part as the
    session wrote it (a text as it is, anything else as compact JSON), inner structure untouched."""
    if isinstance(value, str):
        return value
    if not isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    lines = []
    for key, part in value.items():
        text = part if isinstance(part, str) else json.dumps(part, ensure_ascii=False)
        lines.append(f"{key}:" + ("\n" + text if "\n" in text else " " + text))
    return "\n".join(lines)


class ShellRunner:
    """One session seen through the shell."""

    def __init__(self, session: Session, *, yes: bool = False, confirm: Confirm | None = None) -> None:
        self.session = session
        self.toolset = FixedToolset(session)
        self.yes = yes
        self.confirm = confirm
        self._calls = 0

    async def run(self, line: str) -> Outcome:
        try:
            parsed = parse_line(line, self._parameter)
        except LineError as error:
            return _said(f"{error} Nothing was run.", error=True)
        if parsed is None:
            return Outcome(text="", mcp=mcp_json(""))
        try:
            if isinstance(parsed, Builtin):
                return await self._builtin(parsed)
            return await self._pipeline(parsed)
        except LineError as error:
            return _said(f"{error} Nothing was run.", error=True)
        except DagtoolsError as error:  # the store refused (busy, changed meanwhile, gone): nothing was saved
            return _said(str(error), error=True)

    # -- calls ---------------------------------------------------------------------------------------

    def _parameter(self, tool: str, name: str) -> Mapping[str, Any] | None:
        catalogue = self.session.catalogue
        if tool not in catalogue:
            return None
        schema = catalogue.tool(tool).parameters.get("properties", {}).get(name)
        return schema if isinstance(schema, Mapping) else None

    def _arguments(self, step: ShellStep) -> dict[str, Any]:
        if step.target is None:
            return dict(step.arguments)
        catalogue = self.session.catalogue
        name = step.target.partition("#")[0]
        if step.tool in catalogue:
            found = catalogue.object_parameter(catalogue.ref(step.tool))
            if found is None:
                raise LineError(f"{step.tool} starts from the root and acts on no object; remove {step.target}.")
            name = found
        if name in step.arguments:
            raise LineError(f"{step.tool} is given its object twice ({step.target} and {name}=...); give it once.")
        return {name: step.target, **step.arguments}

    def _writes(self, steps: tuple[ShellStep, ...]) -> list[str]:
        catalogue = self.session.catalogue
        return [s.tool for s in steps if s.tool in catalogue and not catalogue.tool(s.tool).read_only]

    async def _pipeline(self, line: Pipeline) -> Outcome:
        steps: list[dict[str, Any]] = [{"tool": s.tool, "arguments": self._arguments(s)} for s in line.steps]
        writes = self._writes(line.steps)
        if writes and not self.yes:
            shown = " | ".join(_call_text(s["tool"], s["arguments"]) for s in steps)
            if self.confirm is None:
                return _said(
                    f"{', '.join(writes)} writes to the API, so it runs only when allowed: run the line again with --yes. Nothing was run.",
                    error=True,
                )
            if not await self.confirm(f"{shown}\nThis writes to the API. Run it? [y/N] "):
                return _said("Not run: nothing was sent.")
        if len(steps) == 1:
            call = ToolCall(name=CALL_TOOL, arguments={"tool": steps[0]["tool"], "arguments": steps[0]["arguments"]})
        else:
            call = ToolCall(name=CALL_CHAIN, arguments={"steps": steps})
        result = await self._run(call)
        return _outcome(result, self._host_hint(line.steps) if result.is_error else "")

    async def _run(self, call: ToolCall) -> ToolResult:
        self._calls += 1
        call = ToolCall(name=call.name, arguments=call.arguments, id=f"shell_{self._calls}")
        return (await run_turn(self.toolset, [call]))[0]

    def _host_hint(self, steps: tuple[ShellStep, ...]) -> str:
        """What only the person who started the shell can do: allow a mutation the session refused."""
        catalogue = self.session.catalogue
        if catalogue.mutation_type is None or all(s.tool in catalogue for s in steps):
            return ""
        root = catalogue.schema.mutation_type
        prefix = catalogue.prefix(catalogue.mutation_type) + "_"
        for step in steps:
            field = step.tool.removeprefix(prefix)
            if step.tool not in catalogue and root is not None and field != step.tool and field in root.fields:
                return f"{step.tool} is a mutation: start the shell with --mutation {field} to allow it (or --allow-mutations)."
        return ""

    # -- built-ins -----------------------------------------------------------------------------------

    async def _builtin(self, line: Builtin) -> Outcome:
        handlers = {
            "exit": self._exit,
            "help": self._help,
            "map": self._map,
            "search": self._search,
            "held": self._held,
            "save": self._save,
            "trace": self._trace,
        }
        return await handlers[line.name](line.words)

    async def _exit(self, words: tuple[str, ...]) -> Outcome:
        return Outcome(text="", mcp=mcp_json(""), leave=True)

    async def _search(self, words: tuple[str, ...]) -> Outcome:
        if not words:
            return _said('search takes words, such as: search "who starred a repository". Nothing was run.', error=True)
        return _outcome(await self._run(ToolCall(name=SELECT_TOOLS, arguments={"search": " ".join(words).strip("\"'")})))

    async def _map(self, words: tuple[str, ...]) -> Outcome:
        shown = api_map(self.session.catalogue)
        if shown is None:
            return _said(f"This API is too large for a map ({len(self.session.catalogue.names()):,} tools): search WORDS finds its tools.")
        return _said(shown)

    async def _help(self, words: tuple[str, ...]) -> Outcome:
        catalogue = self.session.catalogue
        if not words:
            return _said(builtin_help(catalogue))
        name = words[0]
        if name in BUILTINS:
            return _said(BUILTINS[name])
        if name in catalogue:
            return _said(tool_help(catalogue, name))
        if name in catalogue.types():
            return _said(type_help(catalogue, name))
        close = catalogue.suggest(name, candidates=[*catalogue.names(), *catalogue.types()])
        hint = f" Did you mean {' or '.join(close)}?" if close else " search WORDS finds tools by what they do."
        unavailable = catalogue.unavailable(name)
        return _said(unavailable or f"No tool or type is named {name}.{hint}", error=True)

    async def _held(self, words: tuple[str, ...]) -> Outcome:
        await self.session.catch_up()
        session = self.session
        lines = [f"{e.id} = {e.expression}" + (f"  ({e.description})" if e.description else "") for e in session.registry]
        lines += [
            f"{v.name} = {json.dumps(v.value, ensure_ascii=False)}" + (f"  ({v.description})" if v.description else "")
            for v in session.values
        ]
        text = "\n".join(lines) if lines else "No objects yet: a call that returns an object makes the first (Query_... to start)."
        if session.outputs:
            saved = ", ".join(f"{k} = {v}" for k, v in session.saved.items()) or "none yet"
            wanted = ", ".join(f"{o.name} ({o.type})" for o in session.outputs)
            text += f"\nOutputs to save: {wanted}. Saved: {saved}."
        return _said(text)

    async def _save(self, words: tuple[str, ...]) -> Outcome:
        if not self.session.outputs:
            return _said(
                "This session declares no outputs, so there is nothing to save; start it with --output NAME:Type, or on a task file.",
                error=True,
            )
        arguments: dict[str, Any] = {}
        for word in words:
            name, sep, raw = word.partition("=")
            if not sep or not name:
                wanted = " ".join(f"{o.name}=..." for o in self.session.outputs)
                raise LineError(f"save takes NAME=value for each output: save {wanted}.")
            arguments[name] = parse_value(raw, None, name)
        return _outcome(await self._run(ToolCall(name=SAVE, arguments=arguments)))

    async def _trace(self, words: tuple[str, ...]) -> Outcome:
        await self.session.catch_up()
        if words:
            from ..trace._trace import write_trace

            path = Path(words[0]).expanduser()
            if path.suffix.lower() not in (".html", ".htm", ".mmd", ".md"):
                return _said(f"Name the trace FILE.html (a page), FILE.mmd (Mermaid) or FILE.md, not {words[0]}.", error=True)
            write_trace(self.session, path, title=f"dagtools shell: {self.session.key or 'a session'}")
            return _said(f"The trace is in {path}.")
        lines = []
        for message in self.session.context.messages:
            for call in message.tool_calls:
                lines.append(_call_text(call.name, call.arguments if isinstance(call.arguments, dict) else {}))
            if message.role == "tool":
                mark = "error" if message.is_error else "->"
                lines.append(f"  {mark} {_cut(message.content)}")
        return _said("\n".join(lines) if lines else "No calls yet.")


def _call_text(tool: str, arguments: Mapping[str, Any]) -> str:
    return f"{tool}(" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()) + ")"


def _cut(text: str, most: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1] + "…"
