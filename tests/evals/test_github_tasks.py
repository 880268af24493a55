"""The GitHub tasks (tests/pyservers/github_tasks.yaml) on the GitHub-shaped server: each done by hand in
`dagtools shell` as a terminal agent would, and judged by `dagtools eval check`, so every task is
solvable on its world and its checks pass the right answer and fail a wrong one; and the server's
generic resolvers (connections, filters, zeros, writes) answer as GitHub does.

The server runs in a process of its own (`github_url`); the commands run in this one (tests/command.py).
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from tests.command import dagtools
from tests.conftest import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.public_schemas]

TASKS = ROOT / "tests" / "pyservers" / "github_tasks.yaml"

#: Each task's lines, as a player of the task would type them, ending with what it saves.
SOLUTIONS: dict[str, list[str]] = {
    "open-bugs": [
        "Query_repository owner=acme name=rocket | Repository_issues states=[OPEN] labels=[bug] first=100",
        "save count=5",
    ],
    "oldest-open-pull": [
        "Query_repository owner=acme name=rocket"
        ' | Repository_pullRequests states=[OPEN] first=1 orderBy={"field": "CREATED_AT", "direction": "ASC"}',
        "PullRequest_author PullRequest#1",
        "save login=raj",
    ],
    "most-starred": [
        'Query_organization login=acme | Organization_repositories first=1 orderBy={"field": "STARGAZERS", "direction": "DESC"}',
        "save name=engine",
    ],
    "busiest-milestone": [
        "Query_repository owner=acme name=rocket | Repository_milestones states=[OPEN] | Milestone_issues states=[OPEN]",
        "save title=v2.0",
    ],
    "latest-release": [
        "Query_repository owner=acme name=engine | Repository_latestRelease",
        "save tag=v3.1.0",
    ],
    "approver": [
        "Query_repository owner=acme name=rocket | Repository_pullRequest number=9"
        " | PullRequest_reviews states=[APPROVED] | PullRequestReview_author",
        "save login=lena",
    ],
    "close-with-comment": [
        "Query_repository owner=acme name=engine | Repository_issue number=3",
        'Mutation_addComment input={"subjectId": "Issue#1", "body": "Fixed in 3.1.0"}',
        'Mutation_closeIssue input={"issueId": "Issue#1"}',
    ],
    "label-for-newcomers": [
        'Query_repository owner=acme name=rocket | Repository_label name="good first issue"',
        "Repository_issue Repository#1 number=16",
        'Mutation_addLabelsToLabelable input={"labelableId": "Issue#1", "labelIds": ["Label#1"]}',
    ],
}
#: What each step answers that the next lines rely on (the handles they name, the values they save).
SEEN: dict[str, list[str]] = {
    "open-bugs": ['"Repository#1": ["Issue#1", "Issue#2", "Issue#3", "Issue#4", "Issue#5"]'],
    "oldest-open-pull": ['"Repository#1": ["PullRequest#1"]', '"login": "raj"'],
    "most-starred": ['"name": "engine"'],
    "busiest-milestone": [
        '"Milestone#1": ["Issue#1", "Issue#2", "Issue#3"]',
        '"Milestone#2": ["Issue#4", "Issue#5", "Issue#6", "Issue#7"]',
        '"v2.0"',
    ],
    "latest-release": ['"tagName": "v3.1.0"'],
    "approver": ['"login": "lena"'],
    "close-with-comment": ['"title": "Segfault when the mesh file is empty"', '"state": "CLOSED"'],
    "label-for-newcomers": ['"Label#1"', '"number": 16'],
}


def post(url: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body or {}).encode(), headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback only
        return json.loads(answer.read())


@pytest.fixture
def github(github_url: str, tmp_path: Path) -> dict[str, str]:
    """The environment a player's commands run in: the server's world as it started, a state folder of its own."""
    import os

    assert post(github_url.rsplit("/", 1)[0] + "/reset") == {"reset": True}
    return {**os.environ, "GITHUB_URL": github_url, "DAGTOOLS_STATE_DIR": str(tmp_path / "state")}


def play(env: dict[str, str], task: str, lines: list[str], session: str = "player") -> str:
    """Run `lines` in the task's shell session, each of which must succeed; answers what they printed."""
    done = dagtools("shell", str(TASKS), "--task", task, "--session", session, "--yes", stdin="\n".join(lines), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def check(env: dict[str, str], task: str, session: str = "player") -> tuple[int, str]:
    judged = dagtools("eval", "check", str(TASKS), "--task", task, "--session", session, env=env)
    return judged.returncode, judged.stderr


def test_every_task_has_a_solution_here(monkeypatch):
    from dagtools.evals import load_tasks

    monkeypatch.setenv("GITHUB_URL", "http://127.0.0.1:1/graphql")
    tasks = load_tasks(TASKS)
    assert sorted(task.name for task in tasks) == sorted(SOLUTIONS) and len(tasks) >= 6
    assert sum(bool(task.mutations) for task in tasks) >= 2  # writes beside the questions
    assert all(task.output_checks or task.state_checks for task in tasks)


@pytest.mark.parametrize("task", sorted(SOLUTIONS))
def test_each_task_done_in_the_shell_passes_its_checks(github, task):
    printed = play(github, task, SOLUTIONS[task])
    for seen in SEEN[task]:
        assert seen in printed, (seen, printed[-3000:])
    code, said = check(github, task)
    assert code == 0, said
    assert f"dagtools: {task} shell shell #1: ok" in said


def test_a_wrong_answer_fails_its_check(github):
    play(
        github, "open-bugs", ["Query_repository owner=acme name=rocket | Repository_issues labels=[bug]", "save count=7"]
    )  # closed ones too
    code, said = check(github, "open-bugs")
    assert code == 1 and "failed: output count is not 5" in said


def test_a_write_half_done_fails_its_state_check(github):
    play(github, "close-with-comment", [*SOLUTIONS["close-with-comment"][:2]])  # commented, never closed
    code, said = check(github, "close-with-comment")
    assert code == 1 and "close-with-comment shell shell #1: failed" in said and "state" in said
    other = play(github, "close-with-comment", ["Query_repository owner=acme name=engine | Repository_issue number=2"], session="other")
    assert '"number": 2' in other


# -- the server, as a raw GraphQL client sees it -----------------------------------------------------------


def data(url: str, query: str, **variables: object) -> dict:
    answer = post(url, {"query": query, "variables": variables})
    assert "errors" not in answer, answer
    return answer["data"]


def errors(url: str, query: str, **variables: object) -> list[str]:
    return [error["message"] for error in post(url, {"query": query, "variables": variables}).get("errors", [])]


ISSUES = """query ($first: Int, $last: Int, $after: String, $before: String) {
  repository(owner: "acme", name: "rocket") {
    issues(first: $first, last: $last, after: $after, before: $before, states: [OPEN]) {
      totalCount nodes { number } edges { cursor node { number } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
}"""


def test_connections_page_forwards_and_backwards_as_relay_says(github, github_url):
    first = data(github_url, ISSUES, first=3)["repository"]["issues"]
    assert [n["number"] for n in first["nodes"]] == [2, 4, 5] and first["totalCount"] == 9
    assert first["pageInfo"]["hasNextPage"] and not first["pageInfo"]["hasPreviousPage"]
    assert [e["node"]["number"] for e in first["edges"]] == [2, 4, 5] and first["edges"][-1]["cursor"] == first["pageInfo"]["endCursor"]
    rest = data(github_url, ISSUES, first=100, after=first["pageInfo"]["endCursor"])["repository"]["issues"]
    assert [n["number"] for n in rest["nodes"]] == [7, 8, 11, 12, 14, 16] and not rest["pageInfo"]["hasNextPage"]
    back = data(github_url, ISSUES, last=2, before=rest["pageInfo"]["startCursor"])["repository"]["issues"]
    assert [n["number"] for n in back["nodes"]] == [4, 5] and back["pageInfo"]["hasPreviousPage"]
    assert errors(github_url, ISSUES, first=101) == [
        "Requesting 101 records on the `issues` connection exceeds the `first` limit of 100 records."
    ]
    assert "does not appear to be a valid cursor" in errors(github_url, ISSUES, first=1, after="nonsense")[0]


def test_filters_and_order_are_githubs(github, github_url):
    answer = data(
        github_url,
        """{ repository(owner: "acme", name: "rocket") {
          bugs: issues(filterBy: {states: [CLOSED], labels: ["bug"]}) { totalCount }
          newest: issues(first: 2, orderBy: {field: CREATED_AT, direction: DESC}) { nodes { number } }
          talked: issues(first: 1, orderBy: {field: COMMENTS, direction: DESC}) { nodes { number } }
          mine: issues(filterBy: {createdBy: "lena"}) { totalCount }
          merged: pullRequests(states: [MERGED]) { nodes { number mergedBy { login } } }
          milestones(states: [OPEN], orderBy: {field: DUE_DATE, direction: ASC}) { nodes { title } }
        } }""",
    )["repository"]
    assert answer["bugs"]["totalCount"] == 3 and answer["mine"]["totalCount"] == 3
    assert answer["newest"]["nodes"] == [{"number": 18}, {"number": 16}] and answer["talked"]["nodes"] == [{"number": 4}]
    assert answer["merged"]["nodes"] == [{"number": 3, "mergedBy": {"login": "lena"}}, {"number": 13, "mergedBy": {"login": "lena"}}]
    assert answer["milestones"]["nodes"] == [{"title": "v1.2"}, {"title": "v2.0"}]
    found = data(github_url, '{ search(query: "repo:acme/rocket is:pr is:open", type: ISSUE, first: 5) { issueCount } }')
    assert found["search"]["issueCount"] == 3


def test_fields_without_data_answer_null_or_their_types_zero(github, github_url):
    """Any valid query runs: nothing in the world for a field is null where GitHub's schema allows it, else a zero."""
    answer = data(
        github_url,
        """{ viewer { login status { message } followers(first: 5) { totalCount nodes { login } }
                      contributionsCollection { totalCommitContributions hasAnyContributions } }
             repository(owner: "acme", name: "launchpad") { licenseInfo { name } forkCount isFork diskUsage
                      latestRelease { tagName } releases(first: 1) { totalCount } } }""",
    )
    assert answer["viewer"] == {
        "login": "mira",
        "status": None,
        "followers": {"totalCount": 0, "nodes": []},
        "contributionsCollection": {"totalCommitContributions": 0, "hasAnyContributions": False},
    }
    assert answer["repository"] == {
        "licenseInfo": None,
        "forkCount": 0,
        "isFork": False,
        "diskUsage": None,
        "latestRelease": None,
        "releases": {"totalCount": 0},
    }
    schema = data(github_url, '{ __type(name: "Repository") { fields { name } } }')
    assert len(schema["__type"]["fields"]) > 100  # GitHub's own schema, introspected


def test_ids_lead_back_to_their_objects_and_a_wrong_one_is_said(github, github_url):
    issue = data(github_url, '{ repository(owner: "acme", name: "rocket") { issue(number: 7) { id } } }')["repository"]["issue"]
    again = data(github_url, "query ($id: ID!) { node(id: $id) { ... on Issue { title author { login } } } }", id=issue["id"])
    assert again["node"] == {"title": "Crash when payload mass is zero", "author": {"login": "omar"}}
    assert errors(github_url, '{ node(id: "nope") { id } }') == ["Could not resolve to a node with the global id of 'nope'"]
    missing = post(github_url, {"query": '{ repository(owner: "acme", name: "nope") { id } }'})
    assert missing["data"] == {"repository": None} and missing["errors"][0]["extensions"] == {"type": "NOT_FOUND"}


def test_writes_change_what_later_reads_see_until_a_reset(github, github_url):
    ask = '{ repository(owner: "acme", name: "launchpad") { id stargazerCount'
    ask += ' label(name: "bug") { id } idea: label(name: "enhancement") { id } } }'
    repo = data(github_url, ask)["repository"]
    made = data(
        github_url,
        "mutation ($input: CreateIssueInput!) { createIssue(input: $input) { issue { number author { login } labels { totalCount } } } }",
        input={"repositoryId": repo["id"], "title": "Buttons overlap on small screens", "labelIds": [repo["label"]["id"]]},
    )
    assert made["createIssue"]["issue"] == {"number": 2, "author": {"login": "mira"}, "labels": {"totalCount": 1}}
    starred = data(github_url, "mutation ($id: ID!) { addStar(input: {starrableId: $id}) { starrable { stargazerCount } } }", id=repo["id"])
    assert starred["addStar"]["starrable"]["stargazerCount"] == repo["stargazerCount"] + 1
    read = '{ repository(owner: "acme", name: "launchpad") { stargazerCount issues(states: [OPEN]) { totalCount } } }'
    assert data(github_url, read)["repository"] == {"stargazerCount": 7, "issues": {"totalCount": 2}}
    issue = '{ repository(owner: "acme", name: "launchpad") { issue(number: 1) { id labels { totalCount } } } }'
    before = data(github_url, issue)["repository"]["issue"]
    labelling = "mutation ($input: AddLabelsToLabelableInput!) { addLabelsToLabelable(input: $input) { clientMutationId } }"
    refused = errors(github_url, labelling, input={"labelableId": before["id"], "labelIds": [repo["idea"]["id"], "nope"]})
    assert refused == ["Could not resolve to a node with the global id of 'nope'"]
    assert data(github_url, issue)["repository"]["issue"] == before  # a refused write changed nothing
    assert "the mutations served are" in errors(github_url, 'mutation { deleteIssue(input: {issueId: "x"}) { clientMutationId } }')[0]
    assert post(github_url.rsplit("/", 1)[0] + "/reset") == {"reset": True}
    assert data(github_url, read)["repository"] == {"stargazerCount": 6, "issues": {"totalCount": 1}}


#: Each question asked in one GraphQL query, as an agent with only a query tool would: the answers follow.
RAW_ANSWERS = [
    ('{ repository(owner: "acme", name: "rocket") { issues(states: [OPEN], labels: ["bug"]) { totalCount } } }', 5),
    (
        '{ repository(owner: "acme", name: "rocket") { pullRequests(states: [OPEN], first: 1,'
        " orderBy: {field: CREATED_AT, direction: ASC}) { nodes { author { login } } } } }",
        "raj",
    ),
    (
        '{ organization(login: "acme") { repositories(first: 1, orderBy: {field: STARGAZERS, direction: DESC}) { nodes { name } } } }',
        "engine",
    ),
    (
        '{ repository(owner: "acme", name: "engine") {'
        " releases(first: 1, orderBy: {field: CREATED_AT, direction: DESC}) { nodes { tagName } } } }",
        "v3.1.0",
    ),
    (
        '{ repository(owner: "acme", name: "rocket") {'
        " milestones(states: [OPEN]) { nodes { title issues(states: [OPEN]) { totalCount } } } } }",
        ["v1.2", 3, "v2.0", 4],
    ),
    (
        '{ repository(owner: "acme", name: "rocket") { pullRequest(number: 9) { reviews(states: [APPROVED], first: 5)'
        " { nodes { author { login } } } } } }",
        "lena",
    ),
]


@pytest.mark.parametrize(("query", "answer"), RAW_ANSWERS)
def test_a_query_tool_alone_reaches_the_same_answers(github, github_url, query, answer):
    def leaves(value: object) -> list[object]:
        if isinstance(value, dict):
            return [leaf for item in value.values() for leaf in leaves(item)]
        if isinstance(value, list):
            return [leaf for item in value for leaf in leaves(item)]
        return [value]

    assert leaves(data(github_url, query)) == (answer if isinstance(answer, list) else [answer])


def test_the_schemas_tolerated_problems_are_said_once_a_session(github):
    """GitHub's published schema has a dozen problems a lenient load tolerates; a terminal agent reads
    stderr with every command, so the shell says them in one line when a session starts, not every time."""
    first = dagtools("shell", str(TASKS), "--task", "open-bugs", "--session", "said", "-c", "held", env=github)
    assert first.returncode == 0 and first.stderr.count("dagtools: tolerated") == 1, first.stderr
    assert "-v lists them" in first.stderr
    played = dagtools("shell", str(TASKS), "--task", "open-bugs", "--session", "said", "-c", "Query_viewer", env=github)
    later = dagtools("shell", str(TASKS), "--task", "open-bugs", "--session", "said", "-c", "held", env=github)
    assert played.returncode == 0 and later.returncode == 0
    assert "tolerated" not in later.stderr, later.stderr
    listed = dagtools("shell", str(TASKS), "--task", "open-bugs", "--session", "said", "-v", "-c", "held", env=github)
    assert listed.stderr.count("dagtools: tolerated: ") >= 10  # -v lists each, whenever asked
