"""Answers that came back in part and mutation payloads, in process and over HTTP (graphql-core).

A small shop API whose failures sit where real ones do: a nullable `revenue` refused on a shop, a
product whose non-null `title` fails inside a connection (its node comes back null), a `rating`
that fails on one member of a union where the document aliases it (`rating_Product`), and payloads
with `userErrors`, with `success: false`, and with more objects than a result shows. Errors below
the asked field are notes naming the field as the model knows it; errors on the asked field fail the
call; a payload says why a write did nothing, within the result budget.
"""

from __future__ import annotations

import json
from typing import Any

from graphql import GraphQLError, build_schema

from dagtools import Session, ToolCall, compile_catalogue
from tests.previews import rows
from tests.transports import Transport, call

SDL = """
type Query {
  shop(id: Int!): Shop
  product(id: Int!): Product
  search(text: String!): [Hit]
}
union Hit = Shop | Product
type Shop {
  id: Int!
  name: String!
  rating: Int
  revenue: Float
  products(first: Int, after: String): ProductConnection
}
type Product {
  id: Int!
  title: String!
  rating: Float
  price: Float
}
type ProductConnection { edges: [ProductEdge] pageInfo: PageInfo! totalCount: Int }
type ProductEdge { cursor: String node: Product }
type PageInfo { hasNextPage: Boolean! endCursor: String }
type UserError { message: String! field: [String!] }
type CreateProductPayload { product: Product userErrors: [UserError!]! }
type ImportPayload { log: String products: [Product!]! }
type DeletePayload { success: Boolean! lastSyncId: Float! }
type Mutation {
  deleteProduct(id: Int!): DeletePayload!
  createProduct(title: String!, price: Float!): CreateProductPayload!
  importProducts(count: Int!): ImportPayload!
}
"""

PRODUCTS = [
    {"id": 1, "title": "Kettle", "rating": 4.5, "price": 30.0},
    {"id": 2, "title": None, "rating": 3.0, "price": 12.0},  # a broken row: its non-null title fails
    {"id": 3, "title": "Teapot", "rating": None, "price": 25.0},  # its rating is refused
]
SHOP = {"id": 1, "name": "Corner Shop", "rating": 4}


def _fail(message: str, code: str | None = None) -> GraphQLError:
    return GraphQLError(message, extensions={"code": code} if code else None)


def make_schema() -> Any:
    schema = build_schema(SDL)
    products = [dict(p) for p in PRODUCTS]

    def title(product: dict[str, Any], _info: Any) -> str:
        if product["title"] is None:
            raise _fail(f"Product {product['id']} has no title on record")
        return product["title"]

    def rating(product: dict[str, Any], _info: Any) -> float:
        if product["rating"] is None:
            raise _fail("Ratings are hidden for this product", "FORBIDDEN")
        return product["rating"]

    def revenue(_shop: Any, _info: Any) -> float:
        raise _fail("Not allowed to see revenue", "FORBIDDEN")

    def page(_shop: Any, _info: Any, first: int = 10, after: str | None = None) -> dict[str, Any]:
        rows = products[:first]
        edges = [{"cursor": str(p["id"]), "node": p} for p in rows]
        return {"edges": edges, "pageInfo": {"hasNextPage": False, "endCursor": None}, "totalCount": len(products)}

    def create(_root: Any, _info: Any, title: str, price: float) -> dict[str, Any]:
        errors = []
        if not title.strip():
            errors.append({"message": "Title can't be blank", "field": ["title"]})
        if price <= 0:
            errors.append({"message": "Price must be positive", "field": ["price"]})
        if errors:
            return {"product": None, "userErrors": errors}
        row = {"id": len(products) + 1, "title": title, "rating": 5.0, "price": price}
        products.append(row)
        return {"product": row, "userErrors": []}

    def import_products(_root: Any, _info: Any, count: int) -> dict[str, Any]:
        rows = [{"id": len(products) + 1 + i, "title": f"Imported {i}", "rating": 3.0, "price": 1.0 + i} for i in range(count)]
        products.extend(rows)
        return {"log": "imported " * 100, "products": rows}

    query = schema.query_type
    query.fields["shop"].resolve = lambda _r, _i, id: SHOP if id == 1 else None
    query.fields["product"].resolve = lambda _r, _i, id: next((p for p in products if p["id"] == id), None)
    query.fields["search"].resolve = lambda _r, _i, text: [SHOP, products[2], products[0]]
    schema.get_type("Hit").resolve_type = lambda value, *_: "Shop" if "name" in value else "Product"
    schema.get_type("Shop").fields["revenue"].resolve = revenue
    schema.get_type("Shop").fields["products"].resolve = page
    schema.get_type("Product").fields["title"].resolve = title
    schema.get_type("Product").fields["rating"].resolve = rating
    schema.mutation_type.fields["createProduct"].resolve = create
    schema.mutation_type.fields["importProducts"].resolve = import_products
    schema.mutation_type.fields["deleteProduct"].resolve = lambda _r, _i, id: {"success": id <= len(products), "lastSyncId": 7.0}
    return schema


def shop_session(transport: Transport, **options: Any) -> Session:
    schema = make_schema()
    session = Session(compile_catalogue(schema, **options), transport.executor(schema))
    session.select(session.catalogue.names())
    return session


async def test_a_refused_preview_field_is_left_out_with_a_note(transport: Transport) -> None:
    session = shop_session(transport)
    shop = await call(session, "Query_shop", id=1)
    assert shop["result"] == "Shop#1" and "revenue" not in shop["preview"] and shop["preview"]["name"] == "Corner Shop"
    assert "revenue (FORBIDDEN: Not allowed to see revenue)" in shop["note"]
    refused = await session.call_tool(ToolCall(name="Shop_revenue", arguments={}))
    assert refused.is_error and "FORBIDDEN: Not allowed to see revenue (at shop.revenue)" in refused.value["error"]


async def test_a_page_keeps_the_nodes_it_could_read(transport: Transport) -> None:
    session = shop_session(transport)
    await call(session, "Query_shop", id=1)
    page = await call(session, "Shop_products", first=3)
    assert page["result"][0].startswith("Product#") and page["result"][1] is None and page["totalCount"] == 3
    note = page["note"]
    assert "item 1 (Product 2 has no title on record)" in note  # edges[1].node, as the model counts items
    assert "null in the list" in note
    assert "item 2.rating (FORBIDDEN: Ratings are hidden for this product)" in note
    assert rows(page)[page["result"][2]].get("rating") is None  # a table's cell: nothing read, the note says why


async def test_an_aliased_field_is_named_as_the_model_knows_it(transport: Transport) -> None:
    session = shop_session(transport)
    hits = await call(session, "Query_search", text="t")
    assert [h.split("#")[0] for h in hits["result"]] == ["Shop", "Product", "Product"]
    assert "item 1.rating (FORBIDDEN: Ratings are hidden for this product)" in hits["note"]
    assert "rating_" not in hits["note"]
    assert rows(hits)[hits["result"][2]]["rating"] == 4.5


async def test_a_payload_shows_user_errors_and_the_product_made(transport: Transport) -> None:
    session = shop_session(transport, mutations=True)
    refused = await call(session, "Mutation_createProduct", title=" ", price=0)
    assert refused["preview"]["product"] is None
    assert refused["preview"]["userErrors"][0] == {"message": "Title can't be blank", "field": ["title"]}
    assert "refused with 2 errors" in refused["note"] and "price: Price must be positive" in refused["note"]
    made = await call(session, "Mutation_createProduct", title="Mug", price=8.5)
    product = made["preview"]["product"]
    assert made["preview"]["userErrors"] == [] and made["objects"][product]["title"] == "Mug"
    assert "note" not in made


async def test_a_payload_that_says_it_failed_is_not_read_as_success(transport: Transport) -> None:
    session = shop_session(transport, mutations=True)
    failed = await call(session, "Mutation_deleteProduct", id=99)
    assert failed["preview"] == {"success": False, "lastSyncId": 7.0}
    assert "DeletePayload#1.success is false: the API says the write did not succeed" in failed["note"]
    done = await call(session, "Mutation_deleteProduct", id=1)
    assert done["preview"]["success"] is True and "note" not in done


async def test_a_big_payload_stays_within_the_budget_and_says_what_reads_the_rest(transport: Transport) -> None:
    session = shop_session(transport, mutations=True)
    imported = await call(session, "Mutation_importProducts", count=30)
    assert len(imported["preview"]["products"]) == 10 and len(rows(imported, "objects")) == 10
    assert imported["preview"]["log"].endswith("…") and len(imported["preview"]["log"]) == 160
    note = imported["note"]
    assert "ImportPayload#1.products (first 10 of 30)" in note and "ImportPayload_products" in note
    assert len(json.dumps(imported)) <= session.long_values.budget * 1.25
    everything = await call(session, "ImportPayload_products")  # from the snapshot: every product
    assert len(everything["result"]) == 30 and everything["result"][:10] == imported["preview"]["products"]


async def test_a_failing_dagger_pipeline_fails_its_call_even_where_sync_is_nullable() -> None:
    """`sync` is read beside the asked field only to make a lazy pipeline fail now: never a note."""
    from dagtools import LocalExecutor

    schema = build_schema("""
    scalar ContainerID
    type Query { container: Container! loadContainerFromID(id: ContainerID!): Container }
    type Container { id: ContainerID! withExec(args: [String!]!): Container sync: ContainerID }
    """)

    def container(commands: tuple[str, ...]) -> dict[str, Any]:
        def sync(_info: Any) -> str:
            if "false" in commands:
                raise GraphQLError("process 'false' exited with 1")
            return "|".join(commands)

        return {"id": "|".join(commands), "sync": sync, "withExec": lambda _info, args: container(commands + tuple(args))}

    root = {"container": lambda _info: container(()), "loadContainerFromID": lambda _info, id: container(tuple(id.split("|")))}
    session = Session(compile_catalogue(schema, dialect="dagger"), LocalExecutor(schema, root_value=root))
    session.select(["Query_container", "Container_withExec"])
    assert (await session.call_tool(ToolCall(name="Query_container"))).value == {"result": "Container#1"}
    bad = await session.call_tool(ToolCall(name="Container_withExec", arguments={"args": ["false"]}))
    assert bad.is_error and "exited with 1" in bad.value["error"]
    assert len(session.registry) == 1
