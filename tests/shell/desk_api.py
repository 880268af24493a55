"""A small issue tracker for the shell's tests: repositories, issues by state (an enum), authors, a field
that takes its time (to stop a call in flight) and a write (to be confirmed).

Served in process by `dagtools shell tests/shell/desk_api.py:schema`; the stars it counts live in this
module, so each shell process starts from none.
"""

from __future__ import annotations

import asyncio
from enum import Enum

import strawberry


@strawberry.enum(description="Whether an issue is still being worked on.")
class IssueState(Enum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"


@strawberry.type(description="Someone who writes issues.")
class User:
    login: str


@strawberry.type(description="A problem or a wish, written in a repository.")
class Issue:
    number: int
    title: str
    state: IssueState
    login: strawberry.Private[str]

    @strawberry.field(description="Who wrote the issue.")
    def author(self) -> User:
        return User(login=self.login)


ISSUES = [
    ("crash on start", IssueState.OPEN, "ada"),
    ("typo in the readme", IssueState.CLOSED, "bob"),
    ("slow search", IssueState.OPEN, "cy"),
    ("dark mode", IssueState.OPEN, "ada"),
]
STARS: dict[str, int] = {}


@strawberry.type(description="A repository of code and its issues.")
class Repository:
    owner: str
    name: str

    @strawberry.field(description="The repository's stars.")
    def stars(self) -> int:
        return STARS.get(f"{self.owner}/{self.name}", 0)

    @strawberry.field(description="The repository's issues, the first ones in a state.")
    def issues(self, first: int = 10, states: list[IssueState] | None = None) -> list[Issue]:
        found = [Issue(number=n, title=t, state=s, login=a) for n, (t, s, a) in enumerate(ISSUES, start=1) if not states or s in states]
        return found[:first]


@strawberry.type
class Query:
    @strawberry.field(description="Find a repository by its owner and name.")
    def repository(self, owner: str, name: str) -> Repository:
        return Repository(owner=owner, name=name)

    @strawberry.field(description="A repository, after waiting this many seconds.")
    async def slow_repository(self, seconds: float, name: str = "slow") -> Repository:
        await asyncio.sleep(min(seconds, 60.0))
        return Repository(owner="slow", name=name)


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Star a repository; answers its stars now.")
    def add_star(self, owner: str, name: str) -> int:
        key = f"{owner}/{name}"
        STARS[key] = STARS.get(key, 0) + 1
        return STARS[key]


schema = strawberry.Schema(query=Query, mutation=Mutation)
