"""A small library API on Ariadne (schema first): custom scalars of every kind dagtools reads, and a
Relay `Node` interface.

- `JSON` (any JSON value, as `graphql-type-json` serves it): a book's `metadata`, set by `addBook` and
  `setMetadata`; the app keeps exactly the value it received, so a test can tell an object from its text.
- `JSONString` (graphene's): JSON carried as text; the app refuses anything but a string.
- `Date` and `DateTime`: parsed strictly as ISO 8601 (`date.fromisoformat`), as typed servers do.
- `GitObjectID`: a 40-hex SHA, beside a `GitObject` interface as on GitHub. Each book keeps its text
  in commits, like a branch; `createCommitOnBranch` takes `expectedHeadOid` as GitHub's does and refuses anything but the head's SHA.
- `Node` with `node(id: ID!)`: global ids are base64 of `Type:key`, and an id that names nothing is null.

`make_app()` returns a fresh app and its store, so every test starts from the same three books.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ariadne import InterfaceType, MutationType, ObjectType, QueryType, ScalarType, make_executable_schema
from ariadne.asgi import GraphQL
from graphql import GraphQLError

SDL = '''
"""The `JSON` scalar type represents JSON values as specified by ECMA-404."""
scalar JSON

"""Allows use of a JSON String for input / output from the GraphQL schema."""
scalar JSONString

"""An ISO-8601 encoded date string."""
scalar Date

"""An ISO-8601 encoded UTC date string."""
scalar DateTime

"""A Git object ID."""
scalar GitObjectID

"""An object with a global ID."""
interface Node {
  id: ID!
}

"""A book in the library."""
type Book implements Node {
  id: ID!
  title: String!
  publishedOn: Date
  updatedAt: DateTime
  """Anything the cataloguer noted, as they gave it."""
  metadata: JSON
  """The cataloguer's notes, as JSON text."""
  notes: JSONString
  """The latest commit of the book's text."""
  head: Commit!
}

"""A Git object, named by its SHA (so `GitObjectID` holds a type's name, as on GitHub)."""
interface GitObject {
  oid: GitObjectID!
}

"""One revision of a book's text."""
type Commit implements Node & GitObject {
  id: ID!
  """The commit's SHA."""
  oid: GitObjectID!
  message: String!
  text: String!
}

type Query {
  """Fetches an object given its ID."""
  node(id: ID!): Node
  """Every book, in the order they were added."""
  books: [Book!]!
  """A book by its title."""
  book(title: String!): Book
}

input CommitMessage {
  headline: String!
  body: String
}

"""The branch to commit to: a book's, by its title."""
input CommittableBranch {
  bookTitle: String!
}

input CreateCommitOnBranchInput {
  branch: CommittableBranch!
  """The git commit oid expected at the head of the branch prior to the commit."""
  expectedHeadOid: GitObjectID!
  message: CommitMessage!
  """The book's new text."""
  text: String!
}

type CreateCommitOnBranchPayload {
  commit: Commit
}

type Mutation {
  """Add a book."""
  addBook(title: String!, publishedOn: Date!, metadata: JSON): Book!
  """Replace what the cataloguer noted about a book."""
  setMetadata(id: ID!, metadata: JSON!): Book!
  """Replace a book's notes."""
  setNotes(id: ID!, notes: JSONString!): Book!
  """Append a commit to a book's branch, if its head is still the one expected."""
  createCommitOnBranch(input: CreateCommitOnBranchInput!): CreateCommitOnBranchPayload!
}
'''


@dataclass
class CommitRow:
    key: int
    message: str
    text: str

    @property
    def oid(self) -> str:
        return hashlib.sha1(f"{self.key}:{self.message}:{self.text}".encode()).hexdigest()


@dataclass
class BookRow:
    key: int
    title: str
    published_on: date
    metadata: Any = None
    notes: str | None = None
    updated_at: datetime = field(default_factory=lambda: datetime(2024, 5, 1, 12, 30))
    commits: list[CommitRow] = field(default_factory=list)


@dataclass
class Store:
    """What the app holds, for tests to look at directly."""

    books: list[BookRow] = field(default_factory=list)
    commits: dict[int, CommitRow] = field(default_factory=dict)

    def commit(self, book: BookRow, message: str, text: str) -> CommitRow:
        row = CommitRow(key=len(self.commits) + 1, message=message, text=text)
        self.commits[row.key] = row
        book.commits.append(row)
        return row


def global_id(type_name: str, key: int) -> str:
    return base64.b64encode(f"{type_name}:{key}".encode()).decode()


def _from_global_id(value: str) -> tuple[str, int] | None:
    try:
        type_name, key = base64.b64decode(value.encode(), validate=True).decode().split(":")
        return type_name, int(key)
    except ValueError:
        return None


def _iso_date(value: Any) -> date:
    if not isinstance(value, str):
        raise GraphQLError(f"Date must be an ISO-8601 string, not {value!r}")
    return date.fromisoformat(value)


def _iso_datetime(value: Any) -> datetime:
    if not isinstance(value, str):
        raise GraphQLError(f"DateTime must be an ISO-8601 string, not {value!r}")
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _json_text(value: Any) -> str:
    """As graphene's JSONString: text that parses as JSON, kept as the text."""
    if not isinstance(value, str):
        raise GraphQLError(f"JSONString must be a string of JSON, not {type(value).__name__}")
    json.loads(value)
    return value


def _sha(value: Any) -> str:
    if not isinstance(value, str) or len(value) != 40 or any(c not in "0123456789abcdef" for c in value):
        raise GraphQLError(f"GitObjectID must be a 40-hex SHA, not {value!r}")
    return value


def make_app() -> tuple[Any, Store]:
    store = Store()
    for key, (title, year) in enumerate([("Dune", 1965), ("Solaris", 1961), ("Kindred", 1979)], start=1):
        book = BookRow(key=key, title=title, published_on=date(year, 1, 1))
        store.books.append(book)
        store.commit(book, "First draft", f"{title}, chapter one.")

    json_scalar = ScalarType("JSON", serializer=lambda v: v, value_parser=lambda v: v)
    json_string = ScalarType("JSONString", serializer=lambda v: v, value_parser=_json_text)
    date_scalar = ScalarType("Date", serializer=lambda v: v.isoformat(), value_parser=_iso_date)
    datetime_scalar = ScalarType("DateTime", serializer=lambda v: v.isoformat().replace("+00:00", "Z"), value_parser=_iso_datetime)
    sha_scalar = ScalarType("GitObjectID", serializer=lambda v: v, value_parser=_sha)

    def find(title: str) -> BookRow | None:
        return next((b for b in store.books if b.title == title), None)

    def by_id(value: str) -> BookRow | CommitRow | None:
        parsed = _from_global_id(value)
        if parsed is None:
            return None
        type_name, key = parsed
        if type_name == "Book":
            return next((b for b in store.books if b.key == key), None)
        return store.commits.get(key) if type_name == "Commit" else None

    query = QueryType()
    query.set_field("node", lambda _obj, _info, id: by_id(id))
    query.set_field("books", lambda *_: store.books)
    query.set_field("book", lambda _obj, _info, title: find(title))

    node = InterfaceType("Node")
    node.set_type_resolver(lambda obj, *_: "Book" if isinstance(obj, BookRow) else "Commit")
    git_object = InterfaceType("GitObject")
    git_object.set_type_resolver(lambda *_: "Commit")

    book = ObjectType("Book")
    book.set_field("id", lambda obj, *_: global_id("Book", obj.key))
    book.set_field("publishedOn", lambda obj, *_: obj.published_on)
    book.set_field("updatedAt", lambda obj, *_: obj.updated_at)
    book.set_field("head", lambda obj, *_: obj.commits[-1])

    commit = ObjectType("Commit")
    commit.set_field("id", lambda obj, *_: global_id("Commit", obj.key))
    commit.set_field("oid", lambda obj, *_: obj.oid)

    mutation = MutationType()

    @mutation.field("addBook")
    def add_book(_obj: Any, _info: Any, title: str, publishedOn: date, metadata: Any = None) -> BookRow:  # noqa: N803
        row = BookRow(key=len(store.books) + 1, title=title, published_on=publishedOn, metadata=metadata)
        store.books.append(row)
        store.commit(row, "New book", "")
        return row

    @mutation.field("setMetadata")
    def set_metadata(_obj: Any, _info: Any, id: str, metadata: Any) -> BookRow:
        row = by_id(id)
        if not isinstance(row, BookRow):
            raise GraphQLError(f"No book has the id {id!r}")
        row.metadata = metadata
        return row

    @mutation.field("setNotes")
    def set_notes(_obj: Any, _info: Any, id: str, notes: str) -> BookRow:
        row = by_id(id)
        if not isinstance(row, BookRow):
            raise GraphQLError(f"No book has the id {id!r}")
        row.notes = notes
        return row

    @mutation.field("createCommitOnBranch")
    def create_commit(_obj: Any, _info: Any, input: dict[str, Any]) -> dict[str, Any]:
        row = find(input["branch"]["bookTitle"])
        if row is None:
            raise GraphQLError(f"No branch for the book {input['branch']['bookTitle']!r}")
        if input["expectedHeadOid"] != row.commits[-1].oid:
            raise GraphQLError(f"Expected branch to point to {input['expectedHeadOid']} but it did not")
        return {"commit": store.commit(row, input["message"]["headline"], input["text"])}

    scalars = [json_scalar, json_string, date_scalar, datetime_scalar, sha_scalar]
    schema = make_executable_schema(SDL, query, mutation, node, git_object, book, commit, *scalars)
    return GraphQL(schema), store
