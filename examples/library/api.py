"""A small library: authors and their books, with one mutation. The API of the tutorial."""

from __future__ import annotations

import strawberry

AUTHORS = {"1": "Ursula K. Le Guin", "2": "Italo Calvino"}
BOOKS = {
    "1": ("A Wizard of Earthsea", 1968, "1"),
    "2": ("The Dispossessed", 1974, "1"),
    "3": ("Invisible Cities", 1972, "2"),
}


@strawberry.type(description="A writer of books.")
class Author:
    id: strawberry.ID
    name: str

    @strawberry.field(description="The books this author wrote, oldest first.")
    def books(self) -> list[Book]:
        return sorted((book(i) for i, (_, _, by) in BOOKS.items() if by == self.id), key=lambda b: b.year)


@strawberry.type(description="A book on the library's shelves.")
class Book:
    id: strawberry.ID
    title: str
    year: int
    author_id: strawberry.Private[str]

    @strawberry.field(description="Who wrote the book.")
    def author(self) -> Author:
        return Author(id=strawberry.ID(self.author_id), name=AUTHORS[self.author_id])


def book(id: str) -> Book:
    title, year, author_id = BOOKS[id]
    return Book(id=strawberry.ID(id), title=title, year=year, author_id=author_id)


@strawberry.type
class Query:
    @strawberry.field(description="Every author, by name.")
    def authors(self) -> list[Author]:
        return sorted((Author(id=strawberry.ID(i), name=n) for i, n in AUTHORS.items()), key=lambda a: a.name)

    @strawberry.field(description="The books whose title contains these words (all books without them).")
    def books(self, title: str = "") -> list[Book]:
        return [book(i) for i, (t, _, _) in BOOKS.items() if title.lower() in t.lower()]


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Put a new book on the shelves.")
    def add_book(self, title: str, year: int, author_id: strawberry.ID) -> Book:
        if author_id not in AUTHORS:
            raise ValueError(f"There is no author {author_id}; Query.authors lists them.")
        new = str(len(BOOKS) + 1)
        BOOKS[new] = (title, year, str(author_id))
        return book(new)


schema = strawberry.Schema(query=Query, mutation=Mutation)
