"""An issue tracker in the Relay style: global ids, `node(id:)`, connections and payloads.

Repositories, issues, comments, labels, users and bots are `Node`s reached again through
`Query.node(id:)`; lists are connections (`edges { cursor node }`, `nodes`, `pageInfo`, `first` /
`after`). `Stats` is a value without identity, `SearchResult` a union and `Actor` an interface.
Unlike the kitchen, this API has mutable state: `make_schema()` builds a schema over a fresh
in-memory store, and `calls` on the schema counts resolver runs per mutation, so tests can tell how
often a mutation really ran.
"""

from __future__ import annotations

import base64
import binascii
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any

import strawberry

__all__ = ["make_schema", "schema"]


class TrackerError(Exception):
    """A refused operation; its message becomes the GraphQL error message."""


def to_global_id(type_name: str, key: int | str) -> str:
    return base64.b64encode(f"{type_name}:{key}".encode()).decode()


def from_global_id(id: str) -> tuple[str, str]:
    try:
        type_name, _, key = base64.b64decode(id.encode(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise TrackerError(f"{id!r} is not a global id.") from None
    if not key:
        raise TrackerError(f"{id!r} is not a global id.")
    return type_name, key


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:{index}".encode()).decode()


def _offset(after: str | None) -> int:
    if after is None:
        return 0
    try:
        prefix, _, index = base64.b64decode(after.encode(), validate=True).decode().partition(":")
        if prefix != "cursor":
            raise ValueError(after)
        return int(index) + 1
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise TrackerError(f"{after!r} is not a cursor from this API.") from None


# -- the store ---------------------------------------------------------------------------------------


@dataclass
class Store:
    """All records of one schema instance, plus how many times each mutation resolver ran."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    bots: dict[str, dict[str, Any]] = field(default_factory=dict)
    repositories: dict[str, dict[str, Any]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)

    @classmethod
    def seeded(cls) -> Store:
        store = cls()
        store.users = {
            login: {"login": login, "name": name}
            for login, name in [("ada", "Ada Lovelace"), ("alan", "Alan Turing"), ("grace", "Grace Hopper")]
        }
        store.bots = {"triage-bot": {"login": "triage-bot", "purpose": "labels new issues"}}
        store.labels = {
            name: {"name": name, "color": color} for name, color in [("bug", "d73a4a"), ("docs", "0075ca"), ("good first issue", "7057ff")]
        }
        store.repositories = {
            "engine": {"name": "engine", "description": "The analytical engine.", "owner": "ada"},
            "compiler": {"name": "compiler", "description": "The A-0 compiler.", "owner": "grace"},
        }
        titles = [
            ("engine", "Carry propagation is slow", "ada", ["bug"]),
            ("engine", "Document the mill", "alan", ["docs"]),
            ("engine", "Punch cards jam in the reader", "grace", ["bug", "good first issue"]),
            ("engine", "Add a store for 1,000 numbers", "ada", []),
            ("engine", "Bernoulli numbers example", "ada", ["docs"]),
            ("compiler", "Moth found in relay 70", "grace", ["bug"]),
            ("compiler", "Write the programming manual", "grace", ["docs"]),
        ]
        for number, (repo, title, author, labels) in enumerate(titles, start=1):
            store.issues[number] = {
                "number": number,
                "repository": repo,
                "title": title,
                "author": author,
                "body": f"{title}.",
                "state": "OPEN",
                "labels": labels,
            }
        store.issues[2]["state"] = "CLOSED"
        for key, (issue, author, body) in enumerate(
            [(1, "alan", "I can reproduce this."), (1, "triage-bot", "Labelled as bug."), (3, "ada", "Same here.")],
            start=1,
        ):
            store.comments[key] = {"id": key, "issue": issue, "author": author, "body": body}
        return store

    def actor(self, login: str) -> User | Bot:
        if login in self.users:
            return User(store=self, login=login)
        return Bot(store=self, login=login)

    def node(self, id: str) -> Any:
        type_name, key = from_global_id(id)
        table, make = _NODE_TYPES.get(type_name, (None, None))
        if table is None or make is None:
            return None
        records = getattr(self, table)
        lookup: Any = int(key) if table in ("issues", "comments") and key.isdigit() else key
        return make(self, lookup) if lookup in records else None


# -- shared types ------------------------------------------------------------------------------------


@strawberry.interface(description="An object with a global id, reachable again through Query.node.")
class Node:
    @strawberry.field(description="The object's global id.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(to_global_id(type(self).__name__, self.key()))

    def key(self) -> Any:
        raise NotImplementedError


@strawberry.type(description="Where a page of a connection ends, and whether more follow.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="Whether there are items after this page.")
    has_previous_page: bool = strawberry.field(description="Whether there are items before this page.")
    start_cursor: str | None = strawberry.field(description="The cursor of the first item of this page.")
    end_cursor: str | None = strawberry.field(description="The cursor of the last item; pass it as `after` for the next page.")


@strawberry.enum(description="Whether an issue is still open.")
class IssueState(Enum):
    OPEN = strawberry.enum_value("OPEN", description="Still to be done.")
    CLOSED = strawberry.enum_value("CLOSED", description="Done or dismissed.")


@strawberry.interface(description="Someone or something that can write issues and comments.")
class Actor:
    login: str = strawberry.field(description="The actor's login name.")


@strawberry.type(description="A person using the tracker.")
class User(Node, Actor):
    store: strawberry.Private[Store]
    login: str = strawberry.field(description="The user's login name.")

    def key(self) -> Any:
        return self.login

    @strawberry.field(description="The user's full name.")
    def name(self) -> str:
        return self.store.users[self.login]["name"]


@strawberry.type(description="An automated account.")
class Bot(Node, Actor):
    store: strawberry.Private[Store]
    login: str = strawberry.field(description="The bot's login name.")

    def key(self) -> Any:
        return self.login

    @strawberry.field(description="What the bot does.")
    def purpose(self) -> str:
        return self.store.bots[self.login]["purpose"]


@strawberry.type(description="A label that can be put on issues.")
class Label(Node):
    store: strawberry.Private[Store]
    name: str = strawberry.field(description='The label\'s name, such as "bug".')

    def key(self) -> Any:
        return self.name

    @strawberry.field(description="The label's colour as six hex digits.")
    def color(self) -> str:
        return self.store.labels[self.name]["color"]


@strawberry.type(description="A comment on an issue.")
class Comment(Node):
    store: strawberry.Private[Store]
    number: strawberry.Private[int]

    def key(self) -> Any:
        return self.number

    @strawberry.field(description="The comment's text.")
    def body(self) -> str:
        return self.store.comments[self.number]["body"]

    @strawberry.field(description="Who wrote the comment.")
    def author(self) -> Actor:
        return self.store.actor(self.store.comments[self.number]["author"])

    @strawberry.field(description="The issue the comment is on.")
    def issue(self) -> Issue:
        return Issue(store=self.store, number=self.store.comments[self.number]["issue"])


@strawberry.type(description="An edge in a connection of comments.")
class CommentEdge:
    cursor: str = strawberry.field(description="Where this edge sits, for `after`.")
    node: Comment = strawberry.field(description="The comment.")


@strawberry.type(description="A page of comments.")
class CommentConnection:
    edges: list[CommentEdge] = strawberry.field(description="The comments of this page with their cursors.")
    nodes: list[Comment] = strawberry.field(description="The comments of this page.")
    page_info: PageInfo = strawberry.field(description="Where this page ends.")
    total_count: int = strawberry.field(description="How many comments there are in all.")


@strawberry.type(description="An issue: a bug report, task or idea filed against a repository.")
class Issue(Node):
    store: strawberry.Private[Store]
    number: int = strawberry.field(description="The issue's number within its repository.")

    def key(self) -> Any:
        return self.number

    def record(self) -> dict[str, Any]:
        return self.store.issues[self.number]

    @strawberry.field(description="The issue's title.")
    def title(self) -> str:
        return self.record()["title"]

    @strawberry.field(description="The issue's text.")
    def body(self) -> str:
        return self.record()["body"]

    @strawberry.field(description="Whether the issue is open or closed.")
    def state(self) -> IssueState:
        return IssueState(self.record()["state"])

    @strawberry.field(description="Who filed the issue.")
    def author(self) -> Actor:
        return self.store.actor(self.record()["author"])

    @strawberry.field(description="The repository the issue belongs to.")
    def repository(self) -> Repository:
        return Repository(store=self.store, name=self.record()["repository"])

    @strawberry.field(description="The labels on the issue.")
    def labels(self) -> list[Label]:
        return [Label(store=self.store, name=n) for n in self.record()["labels"]]

    @strawberry.field(description="The issue's comments, oldest first.")
    def comments(
        self,
        first: Annotated[int, strawberry.argument(description="How many comments to return.")] = 10,
        after: Annotated[str | None, strawberry.argument(description="Return the comments after this cursor.")] = None,
    ) -> CommentConnection:
        items = [Comment(store=self.store, number=k) for k, c in self.store.comments.items() if c["issue"] == self.number]
        edges, page = _page(items, first, after)
        return CommentConnection(
            edges=[CommentEdge(cursor=c, node=n) for c, n in edges], nodes=[n for _, n in edges], page_info=page, total_count=len(items)
        )


@strawberry.type(description="An edge in a connection of issues.")
class IssueEdge:
    cursor: str = strawberry.field(description="Where this edge sits, for `after`.")
    node: Issue = strawberry.field(description="The issue.")


@strawberry.type(description="A page of issues.")
class IssueConnection:
    edges: list[IssueEdge] = strawberry.field(description="The issues of this page with their cursors.")
    nodes: list[Issue] = strawberry.field(description="The issues of this page.")
    page_info: PageInfo = strawberry.field(description="Where this page ends.")
    total_count: int = strawberry.field(description="How many issues match in all.")


@strawberry.type(description="Counts over a repository's issues: a value computed on each read, with no id.")
class Stats:
    open_issues: int = strawberry.field(description="How many issues are open.")
    closed_issues: int = strawberry.field(description="How many issues are closed.")
    comments: int = strawberry.field(description="How many comments there are on its issues.")


@strawberry.type(description="A repository of code with its issue tracker.")
class Repository(Node):
    store: strawberry.Private[Store]
    name: str = strawberry.field(description="The repository's name.")

    def key(self) -> Any:
        return self.name

    @strawberry.field(description="What the repository is for.")
    def description(self) -> str:
        return self.store.repositories[self.name]["description"]

    @strawberry.field(description="The user who owns the repository.")
    def owner(self) -> User:
        return User(store=self.store, login=self.store.repositories[self.name]["owner"])

    @strawberry.field(description="One issue by its number.")
    def issue(self, number: Annotated[int, strawberry.argument(description="The issue number.")]) -> Issue | None:
        record = self.store.issues.get(number)
        return Issue(store=self.store, number=number) if record and record["repository"] == self.name else None

    @strawberry.field(description="The repository's issues, oldest first.")
    def issues(
        self,
        first: Annotated[int, strawberry.argument(description="How many issues to return.")] = 10,
        after: Annotated[str | None, strawberry.argument(description="Return the issues after this cursor.")] = None,
        state: Annotated[IssueState | None, strawberry.argument(description="Only issues in this state.")] = None,
    ) -> IssueConnection:
        items = [
            Issue(store=self.store, number=n)
            for n, i in self.store.issues.items()
            if i["repository"] == self.name and (state is None or i["state"] == state.value)
        ]
        edges, page = _page(items, first, after)
        return IssueConnection(
            edges=[IssueEdge(cursor=c, node=n) for c, n in edges], nodes=[n for _, n in edges], page_info=page, total_count=len(items)
        )

    @strawberry.field(description="Counts of open and closed issues and of comments.")
    def stats(self) -> Stats:
        issues = [i for i in self.store.issues.values() if i["repository"] == self.name]
        numbers = {i["number"] for i in issues}
        return Stats(
            open_issues=sum(i["state"] == "OPEN" for i in issues),
            closed_issues=sum(i["state"] == "CLOSED" for i in issues),
            comments=sum(c["issue"] in numbers for c in self.store.comments.values()),
        )


def _page(items: list[Any], first: int, after: str | None) -> tuple[list[tuple[str, Any]], PageInfo]:
    if first < 0:
        raise TrackerError("first must not be negative.")
    start = _offset(after)
    chosen = [(_cursor(i), items[i]) for i in range(start, min(start + first, len(items)))]
    return chosen, PageInfo(
        has_next_page=start + first < len(items),
        has_previous_page=start > 0,
        start_cursor=chosen[0][0] if chosen else None,
        end_cursor=chosen[-1][0] if chosen else None,
    )


SearchResult = Annotated[Issue | Repository | User, strawberry.union("SearchResult", description="Something a search found.")]


@strawberry.type(description="What adding a comment did: the new comment and the issue's comment count.")
class AddCommentPayload:
    comment: Comment = strawberry.field(description="The new comment.")
    issue: Issue = strawberry.field(description="The issue commented on.")
    total_comments: int = strawberry.field(description="How many comments the issue has now.")


@strawberry.type(description="What closing an issue did.")
class CloseIssuePayload:
    issue_number: int = strawberry.field(description="The number of the closed issue.")
    was_open: bool = strawberry.field(description="Whether the issue was open before.")
    open_issues: int = strawberry.field(description="How many issues of its repository are open now.")


_NODE_TYPES: dict[str, tuple[str, Any]] = {
    "User": ("users", lambda s, k: User(store=s, login=k)),
    "Bot": ("bots", lambda s, k: Bot(store=s, login=k)),
    "Label": ("labels", lambda s, k: Label(store=s, name=k)),
    "Repository": ("repositories", lambda s, k: Repository(store=s, name=k)),
    "Issue": ("issues", lambda s, k: Issue(store=s, number=k)),
    "Comment": ("comments", lambda s, k: Comment(store=s, number=k)),
}


def _issue(store: Store, issue_id: str) -> Issue:
    node = store.node(issue_id)
    if not isinstance(node, Issue):
        raise TrackerError(f"{issue_id!r} is not the id of an issue.")
    return node


def make_schema() -> strawberry.Schema:
    """A schema over a fresh store; `schema.store.calls` counts how often each mutation ran."""
    store = Store.seeded()

    @strawberry.type(description="The issue tracker.")
    class Query:
        @strawberry.field(description="Any object by its global id.")
        def node(self, id: Annotated[strawberry.ID, strawberry.argument(description="The global id.")]) -> Node | None:
            return store.node(id)

        @strawberry.field(description="Several objects by their global ids, null where an id is unknown.")
        def nodes(self, ids: Annotated[list[strawberry.ID], strawberry.argument(description="The global ids.")]) -> list[Node | None]:
            return [store.node(i) for i in ids]

        @strawberry.field(description="A repository by its name.")
        def repository(self, name: Annotated[str, strawberry.argument(description="The repository name.")]) -> Repository | None:
            return Repository(store=store, name=name) if name in store.repositories else None

        @strawberry.field(description="Every repository.")
        def repositories(self) -> list[Repository]:
            return [Repository(store=store, name=n) for n in store.repositories]

        @strawberry.field(description="The signed-in user.")
        def viewer(self) -> User:
            return User(store=store, login="ada")

        @strawberry.field(description="Issues, repositories and users whose title, name or login contains the text.")
        def search(self, text: Annotated[str, strawberry.argument(description="What to look for.")]) -> list[SearchResult]:
            needle = text.lower()
            found: list[Any] = [Issue(store=store, number=n) for n, i in store.issues.items() if needle in i["title"].lower()]
            found += [Repository(store=store, name=n) for n in store.repositories if needle in n]
            found += [User(store=store, login=u) for u in store.users if needle in u]
            return found

    @strawberry.type(description="Changes to the tracker.")
    class Mutation:
        @strawberry.mutation(description="Files a new issue in a repository.")
        def create_issue(
            self,
            repository_id: Annotated[strawberry.ID, strawberry.argument(description="The repository's global id.")],
            title: Annotated[str, strawberry.argument(description="The issue's title.")],
            body: Annotated[str, strawberry.argument(description="The issue's text.")] = "",
        ) -> Issue:
            store.calls["createIssue"] += 1
            repository = store.node(repository_id)
            if not isinstance(repository, Repository):
                raise TrackerError(f"{repository_id!r} is not the id of a repository.")
            number = max(store.issues, default=0) + 1
            store.issues[number] = {
                "number": number,
                "repository": repository.name,
                "title": title,
                "author": "ada",
                "body": body,
                "state": "OPEN",
                "labels": [],
            }
            return Issue(store=store, number=number)

        @strawberry.mutation(description="Adds a comment to an issue.")
        def add_comment(
            self,
            issue_id: Annotated[strawberry.ID, strawberry.argument(description="The issue's global id.")],
            body: Annotated[str, strawberry.argument(description="The comment's text.")],
        ) -> AddCommentPayload:
            store.calls["addComment"] += 1
            issue = _issue(store, issue_id)
            key = max(store.comments, default=0) + 1
            store.comments[key] = {"id": key, "issue": issue.number, "author": "ada", "body": body}
            total = sum(c["issue"] == issue.number for c in store.comments.values())
            return AddCommentPayload(comment=Comment(store=store, number=key), issue=issue, total_comments=total)

        @strawberry.mutation(description="Closes an issue.")
        def close_issue(
            self, issue_id: Annotated[strawberry.ID, strawberry.argument(description="The issue's global id.")]
        ) -> CloseIssuePayload:
            store.calls["closeIssue"] += 1
            issue = _issue(store, issue_id)
            record = issue.record()
            was_open = record["state"] == "OPEN"
            record["state"] = "CLOSED"
            open_issues = sum(i["state"] == "OPEN" and i["repository"] == record["repository"] for i in store.issues.values())
            return CloseIssuePayload(issue_number=issue.number, was_open=was_open, open_issues=open_issues)

    built = strawberry.Schema(query=Query, mutation=Mutation, types=[User, Bot, Label, Comment, Issue, Repository])
    built.store = store  # type: ignore[attr-defined]
    return built


schema = make_schema()
