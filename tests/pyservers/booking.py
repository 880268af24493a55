"""A room-booking API on Ariadne (schema first, graphql-core underneath), for `serve_asgi`.

Its shapes are the ones that make a handle hard to trust:
- `Slot` is a value object: no id, just `startsAt`, `free` and a `room`. `slots(day:)` lists the day's
  free slots first, then the taken ones, so booking a slot moves it to the end and every later free
  slot one place up.
- `Review` has an `id` but no root field fetches one by it: a review is reached through `addReview`
  or the `reviews` list (newest first, so it grows at the top).
- Errors name what went wrong in `extensions`: a `code` and the offending `field`.

`app()` builds a fresh app with its own data, so each test module starts from the same state.
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType, make_executable_schema
from ariadne.asgi import GraphQL
from graphql import GraphQLError

__all__ = ["SDL", "app"]

SDL = """
type Query {
  "The day's slots: free ones first, then taken ones, each group by start time."
  slots(day: String!): [Slot!]!
  "Reviews, newest first."
  reviews: [Review!]!
}

type Mutation {
  "Book the slot starting at `startsAt`."
  book(day: String!, startsAt: String!, name: String!): Booking!
  "Add a review; it goes to the top of `reviews`."
  addReview(stars: Int!, text: String!): Review!
}

"A bookable half hour: a value, with no id of its own."
type Slot {
  startsAt: String!
  free: Boolean!
  room: Room!
  "The price in a currency."
  price(currency: String = "EUR"): Float!
}

type Room {
  name: String!
  floor: Int!
}

type Booking {
  reference: String!
  slot: Slot!
}

type Review {
  id: ID!
  stars: Int!
  text: String!
  author: Author!
}

type Author {
  name: String!
}
"""

_ROOMS = {"09:00": ("Oak", 1), "09:30": ("Oak", 1), "10:00": ("Elm", 2), "10:30": ("Elm", 2), "11:00": ("Ash", 3)}
_RATES = {"EUR": 1.0, "USD": 1.1}


def app() -> GraphQL:
    """A fresh booking app: five free slots on 2030-01-01 and two reviews."""
    taken: dict[str, str] = {}
    reviews: list[dict[str, Any]] = [
        {"id": "r2", "stars": 4, "text": "Quiet rooms.", "author": "Ana"},
        {"id": "r1", "stars": 2, "text": "Coffee was cold.", "author": "Ben"},
    ]
    counter = {"review": 2, "booking": 0}
    query, mutation, slot = QueryType(), MutationType(), ObjectType("Slot")
    review = ObjectType("Review")

    def slot_of(starts_at: str) -> dict[str, Any]:
        return {"startsAt": starts_at, "free": starts_at not in taken}

    @query.field("slots")
    def resolve_slots(_: Any, info: Any, day: str) -> list[dict[str, Any]]:
        if day != "2030-01-01":
            raise GraphQLError(f"no slots on {day}", extensions={"code": "NOT_FOUND", "field": "day"})
        listed = [slot_of(s) for s in sorted(_ROOMS)]
        return sorted(listed, key=lambda s: (not s["free"], s["startsAt"]))

    @query.field("reviews")
    def resolve_reviews(*_: Any) -> list[dict[str, Any]]:
        return list(reviews)

    @mutation.field("book")
    def resolve_book(_: Any, info: Any, day: str, startsAt: str, name: str) -> dict[str, Any]:  # noqa: N803 - the schema's name
        if startsAt not in _ROOMS:
            raise GraphQLError(f"there is no slot at {startsAt}", extensions={"code": "NOT_FOUND", "field": "startsAt"})
        if startsAt in taken:
            raise GraphQLError("That slot is taken.", extensions={"code": "CONFLICT", "field": "startsAt", "takenBy": taken[startsAt]})
        taken[startsAt] = name
        counter["booking"] += 1
        return {"reference": f"B{counter['booking']}", "slot": slot_of(startsAt)}

    @mutation.field("addReview")
    def resolve_add_review(_: Any, info: Any, stars: int, text: str) -> dict[str, Any]:
        if not 1 <= stars <= 5:
            raise GraphQLError("stars must be from 1 to 5", extensions={"code": "BAD_USER_INPUT", "field": "stars"})
        counter["review"] += 1
        added = {"id": f"r{counter['review']}", "stars": stars, "text": text, "author": "You"}
        reviews.insert(0, added)
        return added

    @slot.field("room")
    def resolve_room(value: dict[str, Any], info: Any) -> dict[str, Any]:
        name, floor = _ROOMS[value["startsAt"]]
        return {"name": name, "floor": floor}

    @slot.field("price")
    def resolve_price(value: dict[str, Any], info: Any, currency: str = "EUR") -> float:
        base = 20.0 + 5 * sorted(_ROOMS).index(value["startsAt"])
        return round(base * _RATES[currency], 2)

    @review.field("author")
    def resolve_author(value: dict[str, Any], info: Any) -> dict[str, Any]:
        return {"name": value["author"]}

    schema = make_executable_schema(SDL, query, mutation, slot, review)
    return GraphQL(schema)
