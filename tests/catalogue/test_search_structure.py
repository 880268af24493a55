"""Catalogue search reads the schema's structure, not only its words: which side of a relation a need
asks for, a list of events as a history, a list of the owner's own type as its parts, a field about
roles or permissions, and a type's other names from the fields that return it. The schema here is
written for the test, so no word of it was seen when the search was tuned."""

from __future__ import annotations

from graphql import build_schema

from dagtools import compile_catalogue
from dagtools.catalogue._ranking import RANKING, neutral, weights
from dagtools.catalogue._search import SearchIndex, catalogue_entries, catalogue_search

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


PAYLOADS = """
type Query { board(id: ID!): Board exportFiles: [ExportFile!]! products: [Product!]! }
type Board { id: ID! columns: [Column!]! }
type Column { id: ID! name: String cards: [Card!]! }
type Card { id: ID! note: String column: Column }
type Product { id: ID! name: String }
type ExportFile { id: ID! url: String products: [Product!]! }
type CardEdge { cursor: String! node: Card }
type MoveCardPayload { cardEdge: CardEdge movedCard: Card warnings: [String!]! }
type ArchiveCardPayload { archivedCard: Card }
type ExportProducts { exportFile: ExportFile errors: [ExportError!]! }
type ExportError { field: String message: String code: String }
input MoveCardInput { cardId: ID! columnId: ID! }
input ExportProductsInput { scope: String }
type Mutation {
  "Moves a card to another place."
  moveCard(input: MoveCardInput!): MoveCardPayload
  "Export products to csv file."
  exportProducts(input: ExportProductsInput!): ExportProducts
  "Archives a card."
  archiveCard(id: ID!): ArchiveCardPayload @deprecated(reason: "Cards are deleted now.")
}
"""


def _payloads(query: str, *, include_deprecated: bool = False, names: list[str] | None = None) -> list[str]:
    catalogue = compile_catalogue(build_schema(PAYLOADS), mutations=True, include_deprecated=include_deprecated)
    return [hit.name for hit in catalogue_search(catalogue).search(query, limit=5, names=names)]


def test_a_mutation_ranks_above_the_fields_of_its_own_payload():
    # A payload's field is read only after its mutation is called: for words that reach both, the call
    # comes first, where by words alone `MoveCardPayload_movedCard` and `ExportProducts_errors` led.
    found = _payloads("the moved card")
    assert found.index("Mutation_moveCard") < found.index("MoveCardPayload_movedCard")
    found = _payloads("export errors")
    assert found.index("Mutation_exportProducts") < found.index("ExportProducts_errors")
    # words the mutation does not share lift nothing, and a search among a few names stays among them
    assert "Mutation_moveCard" not in _payloads("warnings")
    assert _payloads("export errors", names=["ExportProducts_errors", "Query_exportFiles"])[0] == "ExportProducts_errors"


def test_the_payload_of_a_mutation_left_out_is_no_tool():
    # A deprecated mutation is left out unless asked for; its payload is then handed out by nothing,
    # so its fields are no tools a search could offer in the mutation's place.
    catalogue = compile_catalogue(build_schema(PAYLOADS), mutations=True)
    assert "Mutation_archiveCard" not in catalogue.names()
    assert [n for n in catalogue.names() if n.startswith("ArchiveCardPayload_")] == []
    assert "ArchiveCardPayload_archivedCard" not in _payloads("archive a card")
    assert _payloads("archive a card", include_deprecated=True)[0] == "Mutation_archiveCard"


def test_every_figure_and_word_table_of_the_ranking_says_why_and_what_neutral_is():
    # One home for what the search weighs: each field with the need it serves and what the bench
    # measured at its neutral value, and that value a ranking can be built with.
    for weight in weights():
        assert weight.why.endswith(".") and len(weight.why.split()) >= 8, weight.name
        measured = "->" in weight.why or "no figure moves" in weight.why.lower() or "does not measure" in weight.why
        assert measured or weight.value == weight.neutral, f"{weight.name}: say what the bench measures at {weight.neutral!r}"
        catalogue = compile_catalogue(build_schema(PLACES))
        neutral_ranking = neutral(RANKING, weight.name)
        assert getattr(neutral_ranking, weight.name) == weight.neutral
        SearchIndex(catalogue_entries(catalogue, neutral_ranking), neutral_ranking).search("labels of a tray")
