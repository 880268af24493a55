"""The world the GitHub-shaped test server answers from: an organization, its people, four repositories,
their issues, pull requests, labels, milestones, releases and stars, as plain dicts.

Every object is a dict holding its `__typename`, an `id` and its fields by their GraphQL names; objects
refer to each other directly (an issue's `author` is the user's dict, a repository's `issues` the list of
issue dicts), so the server's resolvers are generic: a field is read by name and a list becomes a Relay
connection. `make_world()` builds the same world every time: ids, dates and counts never change between
runs, and writes stamp times from a clock of their own, so state checks can name what they expect.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = ["World", "add_item", "global_id", "make_world"]

Obj = dict[str, Any]


def global_id(typename: str, key: str) -> str:
    """An opaque id in GitHub's manner: the same object always has the same one."""
    return base64.b64encode(f"{typename}:{key}".encode()).decode().rstrip("=")


@dataclass
class World:
    """The objects by id, the owners by login, and the viewer (who every write is made by)."""

    objects: dict[str, Obj] = field(default_factory=dict)
    owners: dict[str, Obj] = field(default_factory=dict)
    viewer: Obj = field(default_factory=dict)
    clock: datetime = datetime(2024, 6, 15, 12, 0, tzinfo=timezone.utc)

    def add(self, typename: str, key: str, **fields: Any) -> Obj:
        obj = {"__typename": typename, "id": global_id(typename, key), **fields}
        self.objects[obj["id"]] = obj
        return obj

    def now(self) -> str:
        """The time of a write: a minute after the previous one, so a replayed run stamps the same times."""
        self.clock += timedelta(minutes=1)
        return stamp(self.clock)

    def repository(self, owner: str, name: str) -> Obj | None:
        found = self.owners.get(owner.lower())
        return next((r for r in found["repositories"] if r["name"].lower() == name.lower()), None) if found else None


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _day(text: str) -> str:
    return f"{text}T09:30:00Z"


#: login, name, location; the first four belong to acme, the last is the viewer.
_PEOPLE = [
    ("lena", "Lena Park", "Berlin"),
    ("omar", "Omar Haddad", "Amman"),
    ("kim", "Kim Sato", "Osaka"),
    ("raj", "Raj Patel", "Pune"),
    ("mira", "Mira Chen", "Toronto"),
]
#: name, description, language, created, stargazers (the first N of the people, then fans), owner.
_REPOSITORIES = [
    ("rocket", "Flight software for small launch vehicles.", "Rust", "2022-03-14", 23, "acme"),
    ("engine", "Combustion simulation engine.", "C++", "2021-08-02", 31, "acme"),
    ("launchpad", "Web console for launch operations.", "TypeScript", "2023-01-20", 6, "acme"),
    ("dotfiles", "My shell and editor settings.", "Shell", "2020-05-05", 2, "lena"),
]
_LABELS = [
    ("bug", "d73a4a", "Something isn't working"),
    ("enhancement", "a2eeef", "New feature or request"),
    ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("performance", "fbca04", "Makes something faster"),
]
#: repository: (number, title, state, due, created)
_MILESTONES = {
    "rocket": [
        (1, "v1.1", "CLOSED", "2024-01-31", "2023-12-01"),
        (2, "v1.2", "OPEN", "2024-05-31", "2024-01-15"),
        (3, "v2.0", "OPEN", "2024-09-30", "2024-01-15"),
    ],
    "engine": [(1, "3.1", "OPEN", "2024-06-30", "2024-03-11")],
}
#: repository: (number, title, state, labels, author, created, milestone title, commenters)
_ISSUES = {
    "rocket": [
        (1, "Launch sequence hangs at T-minus 3", "CLOSED", ["bug"], "lena", "2024-01-05", "v1.1", ["omar", "lena"]),
        (2, "Add telemetry export to CSV", "OPEN", ["enhancement"], "omar", "2024-01-12", "v2.0", []),
        (4, "Fuel gauge reads negative after refuel", "OPEN", ["bug"], "kim", "2024-02-02", "v1.2", ["lena", "omar", "kim"]),
        (5, "Document the abort API", "OPEN", ["documentation", "good first issue"], "raj", "2024-02-10", None, []),
        (7, "Crash when payload mass is zero", "OPEN", ["bug"], "omar", "2024-02-20", "v1.2", ["raj"]),
        (8, "Slow trajectory solver on large grids", "OPEN", ["performance", "bug"], "lena", "2024-03-01", "v2.0", ["kim"]),
        (10, "Typo in README install steps", "CLOSED", ["documentation"], "kim", "2024-03-08", None, []),
        (11, "Support metric and imperial units", "OPEN", ["enhancement"], "raj", "2024-03-15", "v2.0", ["lena", "raj"]),
        (12, "Countdown clock drifts by a second per hour", "OPEN", ["bug"], "lena", "2024-04-01", "v1.2", []),
        (14, "Add dark mode to mission console", "OPEN", ["enhancement", "good first issue"], "kim", "2024-04-11", "v2.0", []),
        (15, "Staging fails on ARM builds", "CLOSED", ["bug"], "omar", "2024-04-20", "v1.2", ["kim"]),
        (16, "Retry flaky ground-station handshake", "OPEN", ["bug"], "raj", "2024-05-02", None, ["omar"]),
        (18, "Heat shield telemetry is missing units", "CLOSED", ["bug"], "kim", "2024-05-12", "v1.2", []),
    ],
    "engine": [
        (1, "Injector model ignores ambient pressure", "CLOSED", ["bug"], "omar", "2024-02-01", None, ["lena"]),
        (2, "Export results as HDF5", "OPEN", ["enhancement"], "lena", "2024-03-20", "3.1", []),
        (3, "Segfault when the mesh file is empty", "OPEN", ["bug"], "kim", "2024-04-02", "3.1", ["raj", "omar"]),
        (4, "Explain the units of the config file", "OPEN", ["documentation"], "raj", "2024-05-15", None, []),
    ],
    "launchpad": [
        (1, "Login page flashes on reload", "OPEN", ["bug"], "raj", "2024-04-09", None, []),
    ],
}
#: repository: (number, title, state, draft, author, created, head branch, reviews as (login, state))
_PULLS = {
    "rocket": [
        (3, "Bump solver dependency", "MERGED", False, "kim", "2024-01-08", "bump-solver", [("lena", "APPROVED")]),
        (6, "Telemetry CSV exporter", "OPEN", True, "raj", "2024-02-14", "csv-export", [("omar", "COMMENTED")]),
        (
            9,
            "Fix fuel gauge sign error",
            "OPEN",
            False,
            "omar",
            "2024-03-03",
            "fuel-sign",
            [("kim", "CHANGES_REQUESTED"), ("lena", "APPROVED")],
        ),
        (13, "Add unit conversion layer", "MERGED", False, "lena", "2024-04-05", "units", [("omar", "APPROVED"), ("raj", "COMMENTED")]),
        (17, "Handshake retry with backoff", "OPEN", False, "kim", "2024-05-06", "handshake-retry", []),
        (
            19,
            "Experimental rewrite of the scheduler",
            "CLOSED",
            False,
            "raj",
            "2024-05-10",
            "scheduler-rewrite",
            [("lena", "CHANGES_REQUESTED")],
        ),
    ],
    "engine": [
        (5, "Read ambient pressure in the injector model", "MERGED", False, "lena", "2024-02-03", "ambient", [("omar", "APPROVED")]),
    ],
}
#: repository: (tag, name, created, prerelease), in the order they were entered, not by date.
_RELEASES = {
    "rocket": [("v1.1.0", "1.1.0", "2024-02-01", False), ("v1.2.0-beta", "1.2.0 beta", "2024-05-20", True)],
    "engine": [
        ("v3.0.0", "3.0.0", "2024-03-10", False),
        ("v2.9.0", "2.9.0", "2023-11-02", False),
        ("v3.1.0", "3.1.0", "2024-05-22", False),
    ],
}


def make_world() -> World:
    """The world as it is before anyone writes to it."""
    world = World()
    people = [
        world.add(
            "User", login, login=login, name=name, location=location, createdAt=_day("2019-04-01"), bio=f"{name.split()[0]} builds things."
        )
        for login, name, location in _PEOPLE
    ]
    fans = [world.add("User", f"fan{n:02d}", login=f"fan{n:02d}", name=f"Fan {n}", createdAt=_day("2020-01-01")) for n in range(1, 28)]
    for user in people + fans:
        user.update(repositories=[], starredRepositories=[], organizations=[], url=f"https://github.com/{user['login']}")
        world.owners[user["login"]] = user
    world.viewer = people[4]
    acme = world.add(
        "Organization",
        "acme",
        login="acme",
        name="Acme Rockets",
        description="Open source launch software.",
        location="Cape Town",
        url="https://github.com/acme",
        createdAt=_day("2021-06-01"),
        repositories=[],
        membersWithRole=people[:4],
    )
    world.owners["acme"] = acme
    for person in people[:4]:
        person["organizations"].append(acme)
    for name, description, language, created, stars, owner_login in _REPOSITORIES:
        _add_repository(world, world.owners[owner_login], name, description, language, created, (people[:4] + fans)[:stars])
    return world


def _add_repository(world: World, owner: Obj, name: str, description: str, language: str, created: str, stargazers: list[Obj]) -> None:
    key = f"{owner['login']}/{name}"
    repo = world.add(
        "Repository",
        key,
        name=name,
        nameWithOwner=key,
        owner=owner,
        description=description,
        url=f"https://github.com/{key}",
        primaryLanguage=world.add("Language", language, name=language, color="#dea584"),
        createdAt=_day(created),
        pushedAt=_day("2024-06-01"),
        updatedAt=_day("2024-06-01"),
        visibility="PUBLIC",
        hasIssuesEnabled=True,
        defaultBranchRef={"__typename": "Ref", "id": global_id("Ref", f"{key}:main"), "name": "main", "prefix": "refs/heads/"},
        stargazers=stargazers,
        issues=[],
        pullRequests=[],
        milestones=[],
        releases=[],
    )
    owner["repositories"].append(repo)
    for fan in stargazers:
        fan["starredRepositories"].append(repo)
    users = world.owners
    repo["labels"] = [
        world.add("Label", f"{key}:{n}", name=n, color=c, description=d, repository=repo, isDefault=True) for n, c, d in _LABELS
    ]
    labels = {label["name"]: label for label in repo["labels"]}
    for number, title, state, due, created in _MILESTONES.get(name, []):
        milestone = world.add(
            "Milestone",
            f"{key}:{number}",
            number=number,
            title=title,
            state=state,
            dueOn=_day(due),
            createdAt=_day(created),
            repository=repo,
            url=f"https://github.com/{key}/milestone/{number}",
            issues=[],
            pullRequests=[],
        )
        repo["milestones"].append(milestone)
    milestones = {m["title"]: m for m in repo["milestones"]}
    for number, title, state, names, author, created, milestone_title, commenters in _ISSUES.get(name, []):
        issue = add_item(world, "Issue", repo, number, title, users[author], created, [labels[n] for n in names])
        issue.update(state=state, stateReason="COMPLETED" if state == "CLOSED" else None)
        if state == "CLOSED":
            issue["closedAt"] = _day(created[:8] + "28")
        issue["comments"] = [_comment(world, issue, users[login], n, created) for n, login in enumerate(commenters, 1)]
        if milestone_title:
            issue["milestone"] = milestones[milestone_title]
            milestones[milestone_title]["issues"].append(issue)
        repo["issues"].append(issue)
    for number, title, state, draft, author, created, head, reviews in _PULLS.get(name, []):
        pull = add_item(world, "PullRequest", repo, number, title, users[author], created, [])
        pull.update(state=state, isDraft=draft, merged=state == "MERGED", baseRefName="main", headRefName=head, comments=[])
        pull.update(additions=40 + 13 * number, deletions=7 * number, changedFiles=1 + number % 5)
        if state == "MERGED":
            pull.update(mergedAt=_day(created[:8] + "27"), mergedBy=users["lena"])
        pull["reviews"] = [
            world.add(
                "PullRequestReview",
                f"{key}#{number}:{n}",
                author=users[login],
                state=review_state,
                body="Looks good to me." if review_state == "APPROVED" else "A few things to change.",
                submittedAt=_day(created),
                createdAt=_day(created),
                pullRequest=pull,
            )
            for n, (login, review_state) in enumerate(reviews, 1)
        ]
        repo["pullRequests"].append(pull)
    for tag, title, created, prerelease in _RELEASES.get(name, []):
        repo["releases"].append(
            world.add(
                "Release",
                f"{key}@{tag}",
                tagName=tag,
                name=title,
                createdAt=_day(created),
                publishedAt=_day(created),
                isPrerelease=prerelease,
                isDraft=False,
                author=users["lena"],
                description=f"Release {title}.",
                url=f"https://github.com/{key}/releases/tag/{tag}",
                repository=repo,
            )
        )


def add_item(world: World, typename: str, repo: Obj, number: int, title: str, author: Obj, created: str, labels: list[Obj]) -> Obj:
    """An issue or a pull request: they share a repository's numbers and most fields."""
    kind = "issues" if typename == "Issue" else "pull"
    return world.add(
        typename,
        f"{repo['nameWithOwner']}#{number}",
        number=number,
        title=title,
        body=f"{title}.",
        author=author,
        createdAt=_day(created),
        updatedAt=_day(created),
        labels=labels,
        assignees=[],
        repository=repo,
        url=f"{repo['url']}/{kind}/{number}",
        locked=False,
    )


def _comment(world: World, issue: Obj, author: Obj, n: int, created: str) -> Obj:
    return world.add(
        "IssueComment",
        f"{issue['repository']['nameWithOwner']}#{issue['number']}:{n}",
        body=f"Comment {n} on #{issue['number']}.",
        author=author,
        createdAt=f"{created}T1{n}:00:00Z",
        issue=issue,
        repository=issue["repository"],
        url=f"{issue['url']}#issuecomment-{n}",
    )
