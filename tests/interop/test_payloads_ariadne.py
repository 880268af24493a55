"""Payloads and partial answers on Ariadne (a Python GraphQL server family), served by uvicorn.

A library API written the Ariadne way (schema-first SDL, bindables, snake_case resolvers through
`convert_names_case`): `borrowBook` answers a payload with `userErrors` and refuses a book already
out; `returnBook` answers a payload whose `loan` has a `status` enum; `Member.fines` is refused
(`FORBIDDEN`) while the member's other fields resolve; `Shelf.books` is a list whose second book
fails. What the model reads is the same contract as on any server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from importlib.metadata import version
from typing import Any

import pytest

from dagtools import HttpExecutor, Session, ToolCall, open_session
from tests.servers import serve_asgi

ariadne = pytest.importorskip("ariadne", reason="Ariadne is not installed (the test extra installs it)")

SERVER = f"ariadne {version('ariadne')} (graphql-core {version('graphql-core')}, uvicorn {version('uvicorn')})"

SDL = """
enum LoanStatus { OUT RETURNED }
type Query { member(id: Int!): Member, shelf(name: String!): Shelf, book(id: Int!): Book, loan(id: Int!): Loan }
type Member { id: Int!, name: String!, fines: Float }
type Shelf { name: String!, books: [Book] }
type Book { id: Int!, title: String!, available: Boolean! }
type Loan { id: Int!, status: LoanStatus!, book: Book }
type UserError { message: String!, field: [String!] }
type BorrowBookPayload { loan: Loan, userErrors: [UserError!]! }
type ReturnBookPayload { loan: Loan }
type Mutation {
  borrowBook(memberId: Int!, bookId: Int!): BorrowBookPayload!
  returnBook(loanId: Int!): ReturnBookPayload
}
"""


def make_app() -> Any:
    from ariadne import MutationType, ObjectType, QueryType, make_executable_schema
    from ariadne.asgi import GraphQL
    from graphql import GraphQLError

    books = {1: {"id": 1, "title": "Middlemarch", "available": True}, 2: {"id": 2, "title": None, "available": True}}
    books[3] = {"id": 3, "title": "Bleak House", "available": False}
    loans: dict[int, dict[str, Any]] = {}
    query, mutation, member, book = QueryType(), MutationType(), ObjectType("Member"), ObjectType("Book")

    @query.field("member")
    def resolve_member(*_: Any, id: int) -> dict[str, Any] | None:
        return {"id": 1, "name": "Ada"} if id == 1 else None

    @query.field("shelf")
    def resolve_shelf(*_: Any, name: str) -> dict[str, Any]:
        return {"name": name, "books": [books[1], books[2], books[3]]}

    @query.field("book")
    def resolve_book(*_: Any, id: int) -> dict[str, Any] | None:
        return books.get(id)

    @member.field("fines")
    def resolve_fines(*_: Any) -> float:
        raise GraphQLError("Only librarians see fines", extensions={"code": "FORBIDDEN"})

    @book.field("title")
    def resolve_title(row: dict[str, Any], *_: Any) -> str:
        if row["title"] is None:
            raise GraphQLError(f"Book {row['id']} is being catalogued")
        return row["title"]

    @mutation.field("borrowBook")
    def borrow(*_: Any, member_id: int, book_id: int) -> dict[str, Any]:
        wanted = books.get(book_id)
        if wanted is None or not wanted["available"]:
            return {"loan": None, "user_errors": [{"message": "That book is out on loan", "field": ["bookId"]}]}
        wanted["available"] = False
        loan = loans[len(loans) + 1] = {"id": len(loans) + 1, "status": "OUT", "book": wanted}
        return {"loan": loan, "user_errors": []}

    @mutation.field("returnBook")
    def give_back(*_: Any, loan_id: int) -> dict[str, Any]:
        loan = loans.get(loan_id)
        if loan is None:
            raise GraphQLError(f"No loan {loan_id}", extensions={"code": "NOT_FOUND"})
        loan["status"] = "RETURNED"
        loan["book"]["available"] = True
        return {"loan": loan}

    query.set_field("loan", lambda *_, id: loans.get(id))
    schema = make_executable_schema(SDL, query, mutation, member, book, convert_names_case=True)
    return GraphQL(schema, debug=False)


@pytest.fixture(scope="module")
def library_url() -> Iterator[str]:
    with serve_asgi(make_app()) as base:
        yield f"{base}/"


@pytest.fixture
async def opened(library_url: str) -> AsyncIterator[Session]:
    executor = HttpExecutor(library_url, retries=0)
    session = await open_session(library_url, executor=executor, cache=False, mutations=True, max_active_tools=128)
    session.select(session.catalogue.names())
    yield session
    await executor.aclose()


async def call(session: Session, tool: str, /, **arguments: Any) -> Any:
    result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
    assert not result.is_error, (result.value, SERVER)
    return result.value


async def test_payload_shows_the_loan_then_the_refusal(opened: Session) -> None:
    borrowed = await call(opened, "Mutation_borrowBook", memberId=1, bookId=1)
    loan = borrowed["preview"]["loan"]
    assert borrowed["preview"]["userErrors"] == [] and borrowed["objects"][loan]["status"] == "OUT"
    refused = await call(opened, "Mutation_borrowBook", memberId=1, bookId=1)
    assert refused["preview"]["loan"] is None
    assert "refused with 1 error" in refused["note"] and "bookId: That book is out on loan" in refused["note"]
    returned = await call(opened, "Mutation_returnBook", loanId=1)
    assert returned["preview"]["loan"] == loan and returned["objects"][loan]["status"] == "RETURNED"
    failed = await opened.call_tool(ToolCall(name="Mutation_returnBook", arguments={"loanId": 99}))
    assert failed.is_error and "NOT_FOUND: No loan 99 (at returnBook)" in failed.value["error"], SERVER


async def test_refused_field_and_failed_item_are_notes(opened: Session) -> None:
    ada = await call(opened, "Query_member", id=1)
    assert ada["preview"] == {"name": "Ada", "id": 1}
    assert "fines (FORBIDDEN: Only librarians see fines)" in ada["note"]
    fines = await opened.call_tool(ToolCall(name="Member_fines", arguments={}))
    assert fines.is_error and "Only librarians see fines" in fines.value["error"]
    shelf = await call(opened, "Query_shelf", name="Novels")
    books = await call(opened, "Shelf_books")
    assert books["result"][1] is None and books["result"][0] is not None and books["result"][2] is not None
    assert "item 1 (Book 2 is being catalogued)" in books["note"], (books, shelf, SERVER)
