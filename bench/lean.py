"""What a model reads: the first tool list on every public schema, and the peers' two SWAPI tasks
against a raw-query baseline, each in the same run.

    python bench/lean.py                 # both; prints `figure: value` lines, exits 1 on a miss
    python bench/lean.py --listing       # the tool lists only
    python bench/lean.py --tasks         # the SWAPI tasks only

Tool lists: `listed_tokens_o200k[SCHEMA,MODE]` is o200k tokens of the JSON of the tools the official
Python client's `list_tools()` returns for the first list (every field it gives, as a client passes
them on), for every schema in ../shared/schemas; target fixed <= 600, dynamic <= 400.

SWAPI tasks, on swapi-graphql (graphql-js's reference server, started with node as the tests start
it): "list the films" (single hop) and "the homeworlds of the pilots of starship 10" (multi-hop),
each by dagtools' likely path in fixed and in dynamic mode through the official client, and by a
raw-query baseline. Per path: `calls`, `read_bytes` and `read_tokens` (the results the model reads)
and `context_tokens`: the context over the turns, the sum over the model's turns (one per call,
and the answer after the last) of what it reads at each: the prompt, the tool list as it is then
(dynamic mode's grows as tools are selected), and every call and result so far. Targets: context
<= 0.75x the baseline's on the single-hop task and <= 0.5x on the multi-hop task, at no more calls
than these paths took before (`CALLS_BEFORE`).

The baseline is a bridge that hands the model two tools, as the best raw-query bridges do: one
shows a type of the schema (its fields, arguments and types, as SDL without descriptions, read from
the server by introspection), one sends a query and answers the server's JSON. Its path is the
cheapest that lets a model new to the schema write a correct query: the type on each hop of the
query read once (the root, each connection and object type on the way), then one query selecting
only the fields the task asks for. `raw_query_known_schema_*` is the same query sent by a model that
already knows the schema (no introspection): a floor no bridge meets without that knowledge, printed
without a target.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # not bench/, whose mcp.py would hide the MCP SDK

from bench._figures import _schemas_dir, exit_status, figure, tokens_o200k, unmeasured  # noqa: E402
from dagtools.calls._preview_pages import rows_of  # noqa: E402

__all__ = ["run_lean_bench"]

LIMITS = {"fixed": "<= 600", "dynamic": "<= 400"}
#: Calls each dagtools path takes when it learns the tool names from what it reads (fixed, dynamic):
#: the multi-hop task's tools past the root are found by a search first.
CALLS_BEFORE = {("single", "fixed"): 1, ("single", "dynamic"): 2, ("multi", "fixed"): 2, ("multi", "dynamic"): 3}
TARGETS = {"single": "<= 0.75", "multi": "<= 0.5"}
PROMPTS = {"single": "List the Star Wars films.", "multi": "On which planets were the pilots of starship 10 born?"}
#: The multi-hop chain, naming the one field the question asks of the planets, as the baseline's query
#: selects only it; every argument it passes is one the model has read (see `_known`).
CHAIN = [
    {"tool": "Query_starship", "arguments": {"starshipID": "10"}},
    {"tool": "Starship_pilotConnection"},
    {"tool": "Person_homeworld", "arguments": {"fields": ["name"]}},
]


def _dumped(tools: list[Any]) -> list[dict[str, Any]]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def _tokens(value: Any) -> int:
    return tokens_o200k(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)) or 0


# -- tool lists ------------------------------------------------------------------------------------


async def _first_list(source: str, mode: str) -> list[dict[str, Any]]:
    from mcp import Client

    from dagtools.mcpserver import McpConfig, McpToolServer

    async with Client(McpToolServer(McpConfig(source=source, tools=mode, cache=False)).server) as client:
        return _dumped((await client.list_tools()).tools)


def listing_figures() -> None:
    found = _schemas_dir()
    if found is None or not found.is_dir():
        unmeasured("listed_tokens_o200k", "the public schemas are not here (set DAGTOOLS_SCHEMAS to their directory)")
        return
    names = sorted(p.name for p in found.iterdir() if p.suffix in (".graphql", ".graphqls", ".json") and "introspection" not in p.name)
    for name in names:
        label = name.removesuffix(".graphqls").removesuffix(".graphql").removesuffix(".schema")
        for mode in ("fixed", "dynamic"):
            try:
                listed = asyncio.run(_first_list(str(found / name), mode))
            except Exception as error:  # a schema that does not load is a figure not measured, not a crash
                unmeasured(f"listed_tokens_o200k[{label},{mode}]", str(error)[:200])
                continue
            figure(f"listed_tokens_o200k[{label},{mode}]", tokens_o200k(json.dumps(listed)), LIMITS[mode])


# -- the SWAPI tasks -------------------------------------------------------------------------------


class Conversation:
    """What a model reads over its turns: the prompt, the tool list at each turn, the calls and results."""

    def __init__(self, prompt: str, tools: list[dict[str, Any]]) -> None:
        self.prompt = prompt
        self.tools = tools
        self.turns: list[int] = []
        self.history = 0
        self.results: list[str] = []

    def turn(self) -> None:
        self.turns.append(_tokens(self.prompt) + _tokens(self.tools) + self.history)

    def called(self, name: str, arguments: dict[str, Any], result: str, tools: list[dict[str, Any]] | None = None) -> None:
        self.turn()  # the turn that made this call read everything so far
        self.history += _tokens({"name": name, "arguments": arguments}) + _tokens(result)
        self.results.append(result)
        if tools is not None:
            self.tools = tools

    def report(self, label: str) -> int:
        self.turn()  # the answer
        context = sum(self.turns)
        print(f"# {label}: tokens read at each turn {self.turns}", flush=True)
        figure(f"{label}_calls", len(self.results))
        figure(f"{label}_read_bytes", sum(len(r.encode()) for r in self.results))
        figure(f"{label}_read_tokens_o200k", sum(_tokens(r) for r in self.results))
        figure(f"{label}_context_tokens_o200k", context)
        return context


#: What a model new to the schema searches for, in order, until every tool its path calls is a name it
#: has read: the user's own words.
SEARCHES = {task: [prompt] for task, prompt in PROMPTS.items()}


def _known(name: str, read: str) -> bool:
    """Whether a model that has read `read` knows the tool `name`: named in full, or listed by its
    field under its type (`- Query_*: allStarships, ..., allFilms`)."""
    if name in read:
        return True
    type_name, _, field = name.partition("_")
    listed = re.search(rf"{re.escape(type_name)}_\*: ([^\n]*)", read)
    return listed is not None and re.search(rf"\b{re.escape(field)}\b", listed.group(1)) is not None


def _read_arguments(talk: Conversation) -> None:
    """Every argument the chain passes is one the model has read by now (a tool list or an answer)."""
    read = json.dumps(talk.tools) + "\n".join(talk.results)
    unread = [a for step in CHAIN for a in step.get("arguments", {}) if not re.search(rf"\b{a}\b", read)]
    assert not unread, f"the path passes arguments it never read: {unread}"


async def dagtools_path(url: str, mode: str, task: str) -> tuple[int, int]:
    """dagtools' likely path, learning the schema as the raw-query baseline does, from what it reads:
    a tool it calls must be one the tool list or an earlier answer named, else it searches first
    (`selectTools(search:)`, the task's words, as a new model would); then fixed mode runs the tool
    (callTool, or callChain for the hops) and dynamic mode runs them through callChain, listed from
    the start, unselected: two blind players on these tasks read the list and made one callChain call
    each, selecting nothing."""
    from mcp import Client

    from dagtools.mcpserver import McpConfig, McpToolServer

    async with Client(McpToolServer(McpConfig(source=url, tools=mode, cache=False)).server, mode="legacy") as client:
        talk = Conversation(PROMPTS[task], _dumped((await client.list_tools()).tools))

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            answer = await client.call_tool(name, arguments)
            text = answer.content[0].text
            assert not answer.is_error, text
            tools = _dumped((await client.list_tools()).tools) if mode == "dynamic" else None
            talk.called(name, arguments, text, tools)
            return json.loads(text) if text.startswith("{") else text

        needed = ["Query_allFilms"] if task == "single" else [step["tool"] for step in CHAIN]
        for words in SEARCHES[task]:
            read = json.dumps(talk.tools) + "\n".join(talk.results)
            if all(_known(name, read) for name in needed):
                break
            await call("selectTools", {"search": words})
        read = json.dumps(talk.tools) + "\n".join(talk.results)
        unknown = [name for name in needed if not _known(name, read)]
        assert not unknown, f"the searches {SEARCHES[task]} never named {unknown}"
        if mode == "fixed" and task == "single":
            films = await call("callTool", {"tool": "Query_allFilms", "arguments": {}})
            assert len(rows_of(films["preview"])) == 6 and all("title" in p for p in rows_of(films["preview"]).values()), films
        elif mode == "fixed":
            _read_arguments(talk)
            homes = await call("callChain", {"steps": CHAIN})
            assert "Kashyyyk" in json.dumps(homes), homes
        elif task == "single":  # as blind players did: callChain is listed, and one step runs the tool unselected
            films = await call("callChain", {"steps": [{"tool": "Query_allFilms"}]})
            assert len(rows_of(films["preview"])) == 6 and all("title" in p for p in rows_of(films["preview"]).values()), films
        else:  # callChain is listed from the start and runs tools unselected, as callTool does
            assert any(t["name"] == "callChain" for t in talk.tools), "dynamic mode lists no callChain"
            _read_arguments(talk)
            homes = await call("callChain", {"steps": CHAIN})
            assert "Kashyyyk" in json.dumps(homes), homes
        return talk.report(f"swapi_{task}_hop_dagtools_{mode}"), len(talk.results)


RAW_TOOLS = [
    {
        "name": "introspect",
        "description": "Show one type of the GraphQL API as SDL: its fields, their arguments and types. Start with the query root.",
        "inputSchema": {"type": "object", "properties": {"type": {"type": "string", "description": "A type name."}}, "required": ["type"]},
    },
    {
        "name": "execute",
        "description": "Run a GraphQL query against the API and answer its JSON result.",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "variables": {"type": "object"}},
            "required": ["query"],
        },
    },
]
_TYPE = "query($name: String!) { __type(name: $name) { name fields { name args { name type { ...T } } type { ...T } } } }"
_TYPE += " fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }"
#: (types read on the way, the query) per task: what a model new to the schema must read to write it.
RAW_PATHS = {
    "single": (["Root", "FilmsConnection", "Film"], "{ allFilms { films { title episodeID director releaseDate } } }"),
    "multi": (
        ["Root", "Starship", "StarshipPilotsConnection", "Person", "Planet"],
        '{ starship(starshipID: "10") { name pilotConnection { pilots { name homeworld { name } } } } }',
    ),
}


def _type_ref(ref: dict[str, Any]) -> str:
    if ref["kind"] == "NON_NULL":
        return _type_ref(ref["ofType"]) + "!"
    if ref["kind"] == "LIST":
        return f"[{_type_ref(ref['ofType'])}]"
    return str(ref["name"])


def _sdl(found: dict[str, Any]) -> str:
    lines = []
    for field in found["fields"]:
        args = ", ".join(f"{a['name']}: {_type_ref(a['type'])}" for a in field["args"])
        lines.append(f"  {field['name']}{f'({args})' if args else ''}: {_type_ref(field['type'])}")
    return f"type {found['name']} {{\n" + "\n".join(lines) + "\n}"


async def raw_path(url: str, task: str) -> tuple[int, int]:
    import httpx

    types, query = RAW_PATHS[task]
    async with httpx.AsyncClient(timeout=30) as http:
        talk = Conversation(PROMPTS[task], RAW_TOOLS)
        for name in types:
            answer = (await http.post(url, json={"query": _TYPE, "variables": {"name": name}})).json()
            assert answer["data"]["__type"], (name, answer)
            talk.called("introspect", {"type": name}, _sdl(answer["data"]["__type"]))
        answer = (await http.post(url, json={"query": query})).json()
        assert "errors" not in answer, answer
        result = json.dumps(answer, ensure_ascii=False)
        talk.called("execute", {"query": query}, result)
        baseline = talk.report(f"swapi_{task}_hop_raw_query")
        known = Conversation(PROMPTS[task], RAW_TOOLS)
        known.called("execute", {"query": query}, result)
        known.report(f"raw_query_known_schema_{task}_hop")  # a floor: the model already knew the schema
    return baseline, len(talk.results)


async def task_figures(url: str) -> None:
    for task in ("single", "multi"):
        baseline, _ = await raw_path(url, task)
        for mode in ("fixed", "dynamic"):
            context, calls = await dagtools_path(url, mode, task)
            label = f"swapi_{task}_hop_{mode}"
            figure(f"{label}_calls_vs_before", calls, f"<= {CALLS_BEFORE[task, mode]}")
            figure(f"{label}_context_vs_raw_query", context / baseline, TARGETS[task])


def tasks() -> None:
    try:
        from tests.thirdparty import SERVER_VERSIONS, start_node_server
    except ImportError as error:
        unmeasured("swapi_tasks", f"tests/thirdparty.py is not importable: {error}")
        return

    class Folders:  # what start_node_server asks of pytest's tmp_path_factory
        def mktemp(self, name: str) -> Path:
            return Path(tempfile.mkdtemp(prefix=f"{name}-"))

    try:
        with start_node_server("swapi.js", "swapi-graphql", Folders()) as port:  # type: ignore[arg-type]
            print(f"# {SERVER_VERSIONS['swapi-graphql']} on 127.0.0.1:{port}", flush=True)
            asyncio.run(task_figures(f"http://127.0.0.1:{port}/graphql"))
    except BaseException as error:  # pytest.skip raises a BaseException where node or the package is absent
        if type(error).__name__ != "Skipped":
            raise
        unmeasured("swapi_tasks", str(error))


def run_lean_bench() -> None:
    """For bench/run.py: this bench in a process of its own, whose `mcp` is the SDK, not bench/mcp.py."""
    import subprocess

    done = subprocess.run([sys.executable, __file__], cwd=ROOT, check=False)
    if done.returncode != 0:
        unmeasured("lean_bench", "bench/lean.py missed a target or failed (see above)")


if __name__ == "__main__":
    if "--tasks" not in sys.argv:
        listing_figures()
    if "--listing" not in sys.argv:
        tasks()
    sys.exit(exit_status())
