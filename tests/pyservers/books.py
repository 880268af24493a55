"""A books API on Ariadne (Python, schema-first), for tests and benches: `app()` is its ASGI app.

What it has that previews must handle: `search(text:)` returns 1 ("Dune"), 5 ("Foundation") or all
25 books (""); a book has a long `summary`, short scalars, a computed `averageRating`, a database
row number (`databaseId`) and a foreign key (`authorId`) whose object the `author` field reads;
Dune has a thread of 7 comments with `body`, `databaseId`, `fullDatabaseId` and `authorId`.
"""

from __future__ import annotations

from typing import Any

from ariadne import ObjectType, QueryType, make_executable_schema
from ariadne.asgi import GraphQL

__all__ = ["BOOKS", "SDL", "app", "schema"]

SDL = """
enum Genre { SCIENCE_FICTION FANTASY MYSTERY }

type Query {
  "Books whose title contains the text (every book for an empty text)."
  search(text: String!): [Book!]!
  book(id: ID!): Book
  author(id: ID!): Author
}

type Book {
  id: ID!
  databaseId: Int!
  title: String!
  "What the book is about, a paragraph or more."
  summary: String
  isbn: String!
  year: Int!
  pages: Int!
  genre: Genre!
  language: String!
  "The mean rating of the book's comments, computed when asked."
  averageRating: Float
  ratingsCount: Int!
  authorId: ID!
  author: Author!
  publishedAt: String
  comments: [Comment!]!
}

type Comment {
  id: ID!
  databaseId: Int!
  fullDatabaseId: String!
  body: String!
  rating: Int!
  authorId: ID!
  author: Author!
}

type Author {
  id: ID!
  name: String!
  born: Int
}
"""

_AUTHORS = {"1": {"id": "1", "name": "Frank Herbert", "born": 1920}, "2": {"id": "2", "name": "Isaac Asimov", "born": 1920}}
_AUTHORS.update({str(n): {"id": str(n), "name": f"Author {n}", "born": 1900 + n} for n in range(3, 21)})


def _title(n: int) -> str:
    if n == 1:
        return "Dune"
    if n <= 6:
        return f"Foundation, part {n - 1}"
    return f"Tale number {n}"


def _comments(n: int) -> list[dict[str, Any]]:
    if n != 1:
        return [
            {"id": f"c{n}", "databaseId": 9000 + n, "fullDatabaseId": str(90000000000 + n), "body": "Fine.", "rating": 3, "authorId": "3"}
        ]
    bodies = [
        "Read it twice; the ecology is the real hero of this book.",
        "Slow start, then impossible to put down.",
        "The appendices are worth the price alone.",
        "I expected more of the sequels after this one, and I was wrong about that in the end.",
        "A desert planet, a noble house, a prophecy: " + "it is all here and it all works. " * 4,
        "Too long for me.",
        "Paul's choices age well, better than most heroes of the decade, and the politics still feel current now.",
    ]
    return [
        {
            "id": f"c1-{i}",
            "databaseId": 1000 + i,
            "fullDatabaseId": str(1000000000000 + i),
            "body": body,
            "rating": 2 + i % 4,
            "authorId": str(3 + i),
        }
        for i, body in enumerate(bodies)
    ]


BOOKS = [
    {
        "id": str(n),
        "databaseId": 7000 + n,
        "title": _title(n),
        "summary": f"{_title(n)} follows a family and a world through a long change; " + "the story turns and turns again. " * 6,
        "isbn": f"978-0-{n:03d}-00000-{n % 10}",
        "year": 1950 + n,
        "pages": 200 + 7 * n,
        "genre": ("SCIENCE_FICTION", "FANTASY", "MYSTERY")[n % 3],
        "language": "en",
        "authorId": "1" if n == 1 else "2" if n <= 6 else str(3 + n % 18),
        "publishedAt": f"{1950 + n}-06-01",
        "comments": _comments(n),
    }
    for n in range(1, 26)
]
_BY_ID = {book["id"]: book for book in BOOKS}


def schema() -> Any:
    query = QueryType()
    query.set_field("search", lambda _obj, _info, text: [b for b in BOOKS if text.lower() in b["title"].lower()])
    query.set_field("book", lambda _obj, _info, id: _BY_ID.get(id))
    query.set_field("author", lambda _obj, _info, id: _AUTHORS.get(id))
    book = ObjectType("Book")
    book.set_field("averageRating", lambda obj, _info: round(sum(c["rating"] for c in obj["comments"]) / len(obj["comments"]), 2))
    book.set_field("ratingsCount", lambda obj, _info: len(obj["comments"]))
    book.set_field("author", lambda obj, _info: _AUTHORS[obj["authorId"]])
    comment = ObjectType("Comment")
    comment.set_field("author", lambda obj, _info: _AUTHORS[obj["authorId"]])
    return make_executable_schema(SDL, query, book, comment)


def app() -> GraphQL:
    """The API as an ASGI app; it answers GraphQL at any path."""
    return GraphQL(schema())
