"""Shell lines run on a session: calls and pipes as the model sees them, what an MCP client gets for the
same call, writes that ask first, the built-ins, and every bad line answered with the contract's
message while the session keeps exactly what it held."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagtools import open_session
from dagtools.shell import ShellRunner

ROOT = Path(__file__).resolve().parents[2]
DESK = f"{ROOT / 'tests' / 'shell' / 'desk_api.py'}:schema"
KITCHEN = f"{ROOT / 'examples' / 'kitchen' / 'api.py'}:schema"


def held(session) -> list[str]:
    return [entry.id for entry in session.registry]


async def test_one_line_is_one_call_in_the_contracts_words():
    async with await open_session(DESK) as session:
        runner = ShellRunner(session)
        first = await runner.run("Query_repository owner=octocat name=hello-world")
        assert not first.is_error
        assert first.text.splitlines()[0] == "result: Repository#1"
        assert '"owner": "octocat"' in first.text  # the preview, as the session wrote it
        issues = await runner.run("Repository_issues Repository#1 first=5 states=[OPEN]")
        assert json.loads(issues.mcp["content"][0]["text"])["result"] == ["Issue#1", "Issue#2", "Issue#3"]
        assert held(session) == ["Repository#1", "Issue#1", "Issue#2", "Issue#3"]


async def test_a_pipe_chains_calls_in_one_request():
    async with await open_session(DESK) as session:
        runner = ShellRunner(session)
        outcome = await runner.run("Query_repository owner=x name=y | Repository_issues first=2 | Issue_author")
        assert not outcome.is_error, outcome.text
        value = json.loads(outcome.mcp["content"][0]["text"])
        assert value["result"] == {"Repository#1": {"Issue#1": "User#1", "Issue#2": "User#2"}}
        assert [c.name for m in session.context.messages for c in m.tool_calls] == ["callChain"]


async def test_json_is_what_an_mcp_client_gets_for_the_same_call():
    from mcp import Client

    from dagtools.mcpserver import McpConfig, McpToolServer

    lines = [
        "Query_repository owner=a name=b",
        "Repository_issues Repository#1 states=[CLOSED]",
        "Repository_nope",
        "Query_repository owner=a",
    ]
    calls = [
        {"tool": "Query_repository", "arguments": {"owner": "a", "name": "b"}},
        {"tool": "Repository_issues", "arguments": {"Repository": "Repository#1", "states": ["CLOSED"]}},
        {"tool": "Repository_nope", "arguments": {}},
        {"tool": "Query_repository", "arguments": {"owner": "a"}},
    ]
    async with await open_session(DESK) as session:
        runner = ShellRunner(session)
        ours = [(await runner.run(line)).mcp for line in lines]
    server = McpToolServer(McpConfig(source=DESK, tools="fixed"))
    async with Client(server.server, mode="auto") as client:
        theirs = []
        for arguments in calls:
            got = (await client.call_tool("callTool", arguments)).model_dump(mode="json", by_alias=True, exclude_none=True)
            got.pop("_meta", None)
            theirs.append(got)
    await server.aclose()
    assert ours == theirs
    assert [item["isError"] for item in ours] == [False, False, True, True]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("Repository_isues Repository#1", "There is no tool Repository_isues. Did you mean Repository_issues"),
        ("Repository_issues Repository#7", "There is no object Repository#7"),
        ("Query_repository owner=x", "missing the required argument name"),
        ('Query_repository owner="x name=y', 'The " at column 24 is never closed'),
        ("Repository_issues states=[OPEN", "The [ at column 26 is never closed"),
        ('Repository_issues states=["OPEN",]', "The value of states is not JSON"),
        ("Query_repository owner=x name=y | Repository_stars | Repository_issues", "answers a value, so no step can follow it"),
        ("Query_repository Repository#1 owner=x name=y", "starts from the root and acts on no object"),
        ("help Repositori", "Did you mean Repository"),
        ("search", "search takes words"),
        ("save x=Repository#1", "declares no outputs"),
        ("trace out.png", "Name the trace FILE.html"),
    ],
)
async def test_a_bad_line_says_what_to_do_and_changes_nothing(line, said):
    async with await open_session(DESK) as session:
        runner = ShellRunner(session)
        await runner.run("Query_repository owner=octocat name=hello-world")
        before = (held(session), list(session.active_tools), dict(session.saved))
        outcome = await runner.run(line)
        assert outcome.is_error and outcome.mcp["isError"]
        assert said in outcome.text
        assert (held(session), list(session.active_tools), dict(session.saved)) == before


async def test_a_write_asks_first_and_runs_only_when_allowed():
    async with await open_session(DESK, mutations=True) as session:
        asked: list[str] = []

        async def answer(question: str, reply: bool) -> bool:
            asked.append(question)
            return reply

        scripted = ShellRunner(session)  # nobody to ask: refused, with what to do
        refused = await scripted.run("Mutation_addStar owner=a name=b")
        assert refused.is_error and "--yes" in refused.text
        declined = ShellRunner(session, confirm=lambda q: answer(q, False))
        assert "Not run" in (await declined.run("Mutation_addStar owner=a name=b")).text
        accepted = ShellRunner(session, confirm=lambda q: answer(q, True))
        assert (await accepted.run("Mutation_addStar owner=a name=b")).text.startswith("result: 1")
        assert len(asked) == 2 and 'Mutation_addStar(owner: "a", name: "b")' in asked[0]
        assert (await ShellRunner(session, yes=True).run("Mutation_addStar owner=a name=b")).text.startswith("result: 2")
        reads = await ShellRunner(session).run("Query_repository owner=a name=b")  # a read never asks
        assert not reads.is_error


async def test_a_mutation_the_host_did_not_allow_tells_the_host_how():
    async with await open_session(DESK) as session:
        outcome = await ShellRunner(session, yes=True).run("Mutation_addStar owner=a name=b")
        assert outcome.is_error and "--mutation addStar" in outcome.hint
        assert "--mutation" not in outcome.mcp["content"][0]["text"]  # the model's text stays the contract's


async def test_help_says_which_arguments_take_a_list_of_lookups():
    async with await open_session(DESK) as session:
        runner = ShellRunner(session)
        lookup = (await runner.run("help Query_repository")).text
        assert "name  required, string (or a list of up to 200: each is looked up, in one call)" in lookup
        issues = (await runner.run("help Repository_issues")).text
        assert "looked up" not in issues  # a field of an object takes one value
        several = await runner.run('Query_repository owner=octocat name=["a", "b"]')
        assert json.loads(several.mcp["content"][0]["text"])["result"] == {"a": "Repository#1", "b": "Repository#2"}


async def test_builtins_help_search_held_save_and_trace(tmp_path):
    outputs = {"fries": {"type": "Plate", "description": "The fries."}}
    inputs = {"plate": {"field": "plate", "description": "A plate."}}
    async with await open_session(KITCHEN, inputs=inputs, outputs=outputs) as session:
        runner = ShellRunner(session)
        assert "Built-ins:" in (await runner.run("help")).text
        tool = (await runner.run("help Potato_slice")).text
        assert tool.startswith("Potato_slice [Potato#N] shape=...") and "one of STICKS, SLICES" in tool
        assert "Potato_peel: Retrieves this potato without its skin." in (await runner.run("help Potato")).text
        assert "- Potato_peel -> Potato" in (await runner.run("search peel a potato")).text
        await runner.run("Query_potato | Potato_peel")
        listing = (await runner.run("held")).text
        assert "Plate#1 = plate  (A plate.)" in listing and "Potato#2 = Potato#1.peel" in listing
        assert "Outputs to save: fries (Plate). Saved: none yet." in listing
        wrong = await runner.run("save fries=Potato#2")
        assert wrong.is_error and not session.done
        saved = await runner.run("save fries=Plate#1")
        assert not saved.is_error and session.saved == {"fries": "Plate#1"}
        trace = (await runner.run("trace")).text
        assert "callChain(" in trace and "save(" in trace
        page = tmp_path / "t.html"
        assert not (await runner.run(f"trace {page}")).is_error and page.read_text().startswith("<!")
        assert (await runner.run("exit")).leave
