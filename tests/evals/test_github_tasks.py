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
