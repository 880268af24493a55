"""Catalogue search reads the schema's structure, not only its words: which side of a relation a need
asks for, a list of events as a history, a list of the owner's own type as its parts, a field about
roles or permissions, and a type's other names from the fields that return it. The schema here is
written for the test, so no word of it was seen when the search was tuned."""

from __future__ import annotations

from graphql import build_schema

from dagtools import compile_catalogue
from dagtools.catalogue._search import catalogue_search

SDL = """
type Query {
  shoppers(first: Int): [Account!]!
  parcel(code: String!): Parcel
  crate(id: ID!): Crate
  store: Store
}
type Store { id: ID! badges: [Badge!]! }
"A person with a login."
type Account {
  id: ID!
  handle: String!
  parcels: [Parcel!]!
  stamps: [Stamp!]!
  badges: [Badge!]!
  grants: [Grant!]!
}
type Parcel {
  id: ID!
  weight: Int
  sender: Account
  recipients: [Account!]!
  happenings: [ParcelEvent!]!
}
type ParcelEvent { id: ID! at: String note: String }
type Stamp { id: ID! label: String }
type Badge { id: ID! label: String }
"Held for a crate."
type Grant { id: ID! role: String crate: Crate }
type Crate { id: ID! name: String inner: [Crate!]! sizes: [Int!]! }
"""


def _top(query: str, count: int = 3) -> list[str]:
    catalogue = compile_catalogue(build_schema(SDL))
    return [hit.name for hit in catalogue_search(catalogue).search(query, limit=count)]


def test_the_first_type_a_need_names_is_what_it_wants_and_the_later_one_where_from():
    found = _top("the account that sent a parcel", 4)
    assert found.index("Parcel_sender") < found.index("Account_parcels")
    assert _top("parcels of an account", 1) == ["Account_parcels"]


def test_a_list_of_events_is_a_history():
    assert "Parcel_happenings" in _top("the history of a parcel")


def test_a_list_of_the_owners_own_type_holds_its_parts():
    assert "Crate_inner" in _top("sub crates of a crate")
    assert "Crate_inner" in _top("subcrates")


def test_a_role_or_permission_says_who_may_do_something():
    assert _top("what an account is allowed to do", 1) == ["Account_grants"]


def test_a_type_is_also_called_by_the_fields_that_return_it():
    # `shoppers` returns Account, so a shopper's badges are an Account's, not a Store's
    assert _top("badges of a shopper", 1) == ["Account_badges"]


PLACES = """
type Query { crate(id: ID!): Crate tray(id: ID!): Tray shelf(id: ID!): Shelf }
type Box { id: ID! tags: [Tag!]! crate: Crate }
type Crate { id: ID! tags: [Tag!]! boxes: [Box!]! }
type Tray { id: ID! labels: [Sticker!]! shelf: Shelf }
type Shelf { id: ID! labels: [String!]! crates: [Crate!]! trays: [Tray!]! }
type Tag { id: ID! }
type Sticker { id: ID! }
"""


def _places(query: str) -> list[str]:
    catalogue = compile_catalogue(build_schema(PLACES))
    return [hit.name for hit in catalogue_search(catalogue).search(query, limit=4)]


def test_a_fields_place_counts_before_its_words():
    # The same words, the same shape: a type three others point at (Crate) before one only Crate
    # points at (Box), where the names alone would put Box first.
    found = _places("tags")
    assert found.index("Crate_tags") < found.index("Box_tags")
    # The same words on types as central: objects (a Tray's Stickers) before plain values (a Shelf's strings).
    found = _places("labels")
    assert found.index("Tray_labels") < found.index("Shelf_labels")
