"""The Relay example API through dagtools: re-rooting on node(id:), Relay ids as object arguments,
lists, abstract results narrowed to their concrete type, and connections walked without cursors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagtools import Session, ToolCall, compile_catalogue
from examples.relay.api import make_schema, schema
from tests.previews import rows
from tests.transports import Transport, call, relay_session

ROOT = Path(__file__).resolve().parents[2]
SDL_PATH = ROOT / "schemas" / "relay.graphql"
REGENERATE = 'python -c "from examples.relay.api import schema; print(schema)" > schemas/relay.graphql'


def test_committed_sdl_matches_schema() -> None:
    assert SDL_PATH.read_text() == str(schema) + "\n", f"{SDL_PATH} is stale; regenerate it with: {REGENERATE}"


def test_detected_as_relay_with_node_identity() -> None:
    catalogue = compile_catalogue(make_schema()._schema)
    assert catalogue.dialect.name == "relay"
    identity = catalogue.identity("Issue")
    assert identity is not None and identity.root_field == "node"
    assert catalogue.identity("Stats") is None


async def test_minted_node_is_re_rooted_on_node_id(transport: Transport) -> None:
    session, _, executor = relay_session(transport, relay_ids=False)
    repo = await call(session, "Query_repository", name="engine")
    assert repo["result"] == "Repository#1"
    issue = await call(session, "Repository_issue", number=3)
    entry = session.object(issue["result"])
    assert [s.field for s in entry.handle.steps] == ["node"]
    assert entry.identity == "SXNzdWU6Mw=="
    assert await call(session, "Issue_title") == {"result": "Punch cards jam in the reader"}
    assert executor.documents[-1] == "query($v0: ID!) { node(id: $v0) { ... on Issue { title } } }"


async def test_document_size_stays_flat_over_a_long_chain(transport: Transport) -> None:
    session, _, executor = relay_session(transport, relay_ids=False)
    await call(session, "Query_repository", name="engine")
    sizes = []
    for _ in range(10):  # 20 calls, each on the object the previous one returned
        await call(session, "Repository_issue", number=1)
        sizes.append(len(executor.documents[-1]))
        await call(session, "Issue_repository")
        sizes.append(len(executor.documents[-1]))
    assert len(sizes) == 20
    assert sizes == sizes[:2] * 10  # the 20th document is as long as the second
    # the same objects every time: one Repository, one Issue, and the repository's owner its page names
    assert len(session.registry) == 3 and session.object("User#1").preview["name"] == "Ada Lovelace"


async def test_types_without_identity_keep_their_chain(transport: Transport) -> None:
    session, _, executor = relay_session(transport, relay_ids=False)
    await call(session, "Query_repository", name="engine")
    stats = await call(session, "Repository_stats")
    entry = session.object(stats["result"])
    assert [s.field for s in entry.handle.steps] == ["node", "stats"]
    assert stats["preview"] == {"openIssues": 4, "closedIssues": 1, "comments": 3}
    assert "node(id: $v0) { ... on Repository { stats { __typename" in executor.documents[-1]
    sent = len(executor.documents)
    read = await call(session, "Stats_openIssues")  # read when it was found: kept, not fetched again
    assert read == {"result": 4}
    assert len(executor.documents) == sent


async def test_relay_id_arguments_take_object_ids_when_the_host_opts_in(transport: Transport) -> None:
    session, _, executor = relay_session(transport, mutations=True)
    props = session.catalogue.tool("Mutation_addComment").parameters["properties"]
    assert "Issue#1" in json.dumps(props["issueId"])
    await call(session, "Query_repository", name="engine")
    await call(session, "Repository_issue", number=1)
    result = await call(session, "Mutation_addComment", issueId="Issue#1", body="Looking into it.")
    text, variables = executor.sent[-1]
    assert text.startswith("mutation(")
    assert "SXNzdWU6MQ==" in variables.values()
    assert result["result"] == "AddCommentPayload#1"


async def test_relay_id_argument_rejects_a_bare_number(transport: Transport) -> None:
    session, _, executor = relay_session(transport, mutations=True)
    await call(session, "Query_repository", name="engine")
    await call(session, "Repository_issue", number=1)
    sent = len(executor.sent)
    result = await session.call_tool(ToolCall(name="Mutation_addComment", arguments={"issueId": "1", "body": "x"}))
    assert result.is_error
    assert "Give the full Type#N" in result.value["error"]
    assert len(executor.sent) == sent


def test_relay_ids_are_plain_strings_without_the_opt_in() -> None:
    props = compile_catalogue(make_schema()._schema, mutations=True).tool("Mutation_addComment").parameters["properties"]
    assert "Issue#1" not in json.dumps(props["issueId"])


async def test_list_of_objects_gives_a_list_of_ids(transport: Transport) -> None:
    session, _, _ = relay_session(transport, relay_ids=False)
    result = await call(session, "Query_repositories")
    assert result["result"] == ["Repository#1", "Repository#2"]
    assert rows(result)["Repository#2"]["name"] == "compiler"
    await call(session, "Repository_issue", Repository="Repository#1", number=1)
    labels = await call(session, "Issue_labels")
    assert labels["result"] == ["Label#1"]


async def test_union_and_interface_results_narrow_to_the_concrete_type(transport: Transport) -> None:
    session, _, _ = relay_session(transport, relay_ids=False)
    found = await call(session, "Query_search", text="e")
    types = {session.object(i).type_name for i in found["result"]}
    assert types == {"Issue", "Repository", "User"}
    await call(session, "Query_repository", name="engine")
    await call(session, "Repository_issue", number=1)
    comments = await call(session, "Issue_comments")
    assert comments["result"] == ["Comment#1", "Comment#2"]
    bot = await call(session, "Comment_author", Comment="Comment#2")
    assert bot["result"] == "Bot#1"
    assert await call(session, "Bot_purpose") == {"result": "labels new issues"}
    node = await call(session, "Query_node", id="VXNlcjphbGFu")
    assert session.object(node["result"]).type_name == "User" and node["preview"]["login"] == "alan"


async def test_connection_pages_are_walked_without_writing_cursors(transport: Transport) -> None:
    session, _, executor = relay_session(transport, relay_ids=False)
    await call(session, "Query_repository", name="engine")
    page = await call(session, "Repository_issues", first=2)
    assert page["result"] == ["Issue#1", "Issue#2"]
    assert page["totalCount"] == 5
    assert rows(page)["Issue#1"]["title"] == "Carry propagation is slow"
    assert len(executor.sent) == 2  # the page is one request
    more = page["more"]
    assert more.startswith("For the next page call Repository_issues with ")
    arguments = json.loads(more.split(" with ", 1)[1])
    assert arguments["Repository"] == "Repository#1" and arguments["first"] == 2
    seen = list(page["result"])
    while "more" in page:
        arguments = json.loads(page["more"].split(" with ", 1)[1])
        page = await call(session, "Repository_issues", **arguments)
        seen += page["result"]
    assert seen == [f"Issue#{n}" for n in range(1, 6)]
    assert page["lastPage"] is True and page["totalCount"] == 5  # the last page, of one: the count does not say it
    whole = await call(session, "Repository_issues", Repository="Repository#1", first=10)
    assert len(whole["result"]) == whole["totalCount"] == 5 and "lastPage" not in whole and "more" not in whole
    assert not any(t.startswith(("IssueConnection", "PageInfo")) for t in session.registry.types())


async def test_connection_of_edges_reaches_nodes_without_identity(transport: Transport) -> None:
    from graphql import build_schema

    sdl = """
    type Query { tags(first: Int, after: String): TagConnection! }
    type TagConnection { edges: [TagEdge!]! pageInfo: PageInfo! }
    type TagEdge { cursor: String! node: Tag! }
    type PageInfo { hasNextPage: Boolean! endCursor: String }
    type Tag { name: String! uses: Int! }
    """
    data = {
        "tags": lambda _info, first=2, after=None: {
            "edges": [
                {"cursor": str(i), "node": {"name": f"t{i}", "uses": i}}
                for i in range(int(after or -1) + 1, min(int(after or -1) + 1 + first, 5))
            ],
            "pageInfo": {"hasNextPage": int(after or -1) + first < 4, "endCursor": str(int(after or -1) + first)},
        }
    }

    class Root:
        def __getattr__(self, name: str) -> Any:
            return lambda info, **kw: data[name](info, **kw)

    built = build_schema(sdl)
    executor = transport.executor(built, root_value=Root())
    session = Session(compile_catalogue(built), executor)
    session.select(["Query_tags", "Tag_uses"])
    page = await call(session, "Query_tags", first=2)
    assert page["result"] == ["Tag#1", "Tag#2"]
    assert json.loads(page["more"].split(" with ", 1)[1]) == {"first": 2, "after": "1"} and "lastPage" not in page
    assert (await call(session, "Query_tags", first=5))["lastPage"] is True  # no count: only this says there is no more
    assert [s.field for s in session.object("Tag#2").handle.steps] == ["tags", "edges", "node"]
    assert await call(session, "Tag_uses", Tag="Tag#2") == {"result": 1}
    assert "edges" in executor.documents[-1]


@pytest.mark.parametrize("name", ["IssueConnection_nodes", "IssueEdge_node", "PageInfo_endCursor"])
def test_connection_plumbing_gives_no_tools(name: str) -> None:
    """Connections are walked, so their plumbing is never minted: tools on it would be dead ends."""
    catalogue = compile_catalogue(schema._schema)
    assert name not in catalogue
    assert "connections are read for you" in (catalogue.unavailable(name) or "")
