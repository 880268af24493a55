"""A root lookup that returns an interface or a union is the identity of each member that carries its key.

Many servers (TypeGraphQL's `session(id:): Session`, graphene's unions, gateways) give a type no lookup
of its own: without this, an object of it could only be reached by the chain that found it, and a
write that returns it could not be told apart from a copy.
"""

from __future__ import annotations

from graphql import build_schema

from dagtools.load._dialect import Identity, detect_dialect

SDL = """
interface Session { id: ID!, title: String! }
type Workshop implements Session { id: ID!, title: String!, seatsLeft: Int! }
type Talk implements Session { id: ID!, title: String!, speaker: String! }
type Room { id: ID!, name: String! }
type Kit { code: String!, name: String! }
union Bookable = Room | Kit
type Badge { id: ID!, holder: String! }
union Found = Badge | Room
type Query {
  session(id: ID!): Session
  bookable(id: ID!): Bookable
  talk(id: ID!): Talk
  search(id: ID!): [Found!]!
  anything(text: String!): Found
  badgeByNumber(sessionId: ID!): Session
}
"""


def test_an_interface_or_union_lookup_is_the_identity_of_members_with_its_key() -> None:
    dialect = detect_dialect(build_schema(SDL))
    assert dialect.name == "plain"
    assert dialect.identity("Workshop") == Identity(field="id", root_field="session", argument="id")
    assert dialect.identity("Room") == Identity(field="id", root_field="bookable", argument="id")
    assert dialect.identity("Talk") == Identity(field="id", root_field="talk", argument="id"), "a lookup of the type itself comes first"
    assert dialect.identity("Kit") is None, "Kit has no `id`: bookable(id:) cannot fetch it by a key it carries"
    assert dialect.identity("Badge") is None, "a list is not a lookup, and `text` is no field of Badge"
