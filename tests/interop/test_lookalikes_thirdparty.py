"""Objects that look alike are not one object, on servers someone else wrote: every ID reads its own.

- tests/js/warehouse.js: Apollo Gateway composing two Apollo Federation subgraphs. Stock levels are
  values with no id (two levels of 0 in one warehouse, a product out of stock in both), `Money` a value
  type both subgraphs declare, `products(skip:, take:)` a page type without id, and writes that answer
  a level, or a payload listing every level counted.
- tests/js/orders.js: a schema built code-first with Pothos, served by Apollo Server. Order lines are
  values (most of them 1 x 5.0), deliveries a union and adjustments an interface of value types that
  repeat (two 2 kg DPD parcels, two 10% discounts), `orders(skip:, take:)` another page type without
  id, and `reorder`, a write whose payload lists lines equal to the old order's.

The test knows which object each ID was minted as, from the data; each ID is then read through a
field that only that object answers (its product, its warehouse, its page's items, its tracking code),
in the session that minted it, through `callChain`, and after a save and restore of the session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from dagtools import Session
from dagtools.session._state import SessionState
from tests.previews import rows
from tests.thirdparty import Open, _version, attempt, start_node_server

VERSIONS = {
    "warehouse": f"@apollo/gateway {_version('@apollo/gateway')} over @apollo/subgraph {_version('@apollo/subgraph')}"
    f" on @apollo/server {_version('@apollo/server')} (graphql {_version('graphql')})",
    "orders": f"@pothos/core {_version('@pothos/core')} on @apollo/server {_version('@apollo/server')}",
}


class Server:
    def __init__(self, base: str) -> None:
        self.base = base
        self.url = f"{base}/graphql"

    def reset(self) -> None:
        httpx.post(f"{self.base}/reset", timeout=10).raise_for_status()


@pytest.fixture(scope="module")
def warehouse_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_node_server("warehouse.js", "@apollo/gateway", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def orders_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_node_server("orders.js", "@pothos/core", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def warehouse(warehouse_base: str) -> Server:
    """The federated warehouse with its stock as it started."""
    server = Server(warehouse_base)
    server.reset()
    return server


@pytest.fixture
def orders(orders_base: str) -> Server:
    """The Pothos orders API with its data as it started."""
    server = Server(orders_base)
    server.reset()
    return server


async def call(session: Session, tool: str, /, **arguments: Any) -> Any:
    result = await attempt(session, tool, **arguments)
    assert not result.is_error, (tool, arguments, result.value, VERSIONS)
    return result.value


async def restored(session: Session) -> Session:
    """The session as a store gives it back: its state through JSON, into a new session on one executor."""
    state = SessionState.from_json(json.loads(json.dumps(session.state().to_json())))
    again = Session(session.catalogue, session.executor)
    again.restore(state)
    return again


# [sku, quantity, bin] of warehouse W1's stock, in its order: P1/P4 and P2/P6 read alike.
W1 = [
    ("P1", 0, "A1"),
    ("P2", 4, "A2"),
    ("P3", 12, "B1"),
    ("P4", 0, "A1"),
    ("P5", 7, "C3"),
    ("P6", 4, "A2"),
    ("P7", 3, "B2"),
    ("P8", 9, "B2"),
]


async def product_sku(session: Session, level: str) -> str:
    product = (await call(session, "StockLevel_product", StockLevel=level))["result"]
    return str((await call(session, "Product_sku", Product=product))["result"])


async def test_eight_stock_levels_are_eight_ids_each_with_its_own_product(warehouse: Server, opened: Open) -> None:
    session = await opened(warehouse.url)
    await call(session, "Query_warehouse", id="W1")
    stock = await call(session, "Warehouse_stock")
    levels = stock["result"]
    assert len(levels) == 8 and len(set(levels)) == 8, stock
    assert [rows(stock)[level]["quantity"] for level in levels] == [q for _, q, _ in W1]
    for level, (sku, _, _) in zip(levels, W1, strict=True):
        assert await product_sku(session, level) == sku
    # The same list read again: the same places with the same values, the same IDs.
    assert (await call(session, "Warehouse_stock"))["result"] == levels
    again = await restored(session)
    again.select(again.catalogue.names())
    for level, (sku, _, _) in reversed(list(zip(levels, W1, strict=True))):
        assert await product_sku(again, level) == sku


async def test_a_products_two_empty_levels_are_two_ids_in_their_own_warehouses(warehouse: Server, opened: Open) -> None:
    session = await opened(warehouse.url)
    await call(session, "Query_product", sku="P1")
    levels = (await call(session, "Product_stockLevels"))["result"]
    assert len(levels) == 2 and levels[0] != levels[1], levels
    names = []
    for level in levels:
        house = (await call(session, "StockLevel_warehouse", StockLevel=level))["result"]
        names.append((await call(session, "Warehouse_name", Warehouse=house))["result"])
    assert names == ["Leeds", "Bristol"]


async def test_two_pages_that_read_alike_are_two_pages(warehouse: Server, opened: Open) -> None:
    session = await opened(warehouse.url)
    first = await call(session, "Query_products", skip=0, take=3)
    second = await call(session, "Query_products", skip=3, take=3)
    assert first["result"] != second["result"], (first, second)
    skus = []
    for page in (first["result"], second["result"]):
        items = (await call(session, "ProductPage_items", ProductPage=page))["result"]
        skus.append([(await call(session, "Product_sku", Product=item))["result"] for item in items])
    assert skus == [["P1", "P2", "P3"], ["P4", "P5", "P6"]]


async def test_equal_money_values_are_each_read_where_they_were_found(warehouse: Server, opened: Open) -> None:
    session = await opened(warehouse.url)
    await call(session, "Query_warehouse", id="W1")
    levels = (await call(session, "Warehouse_stock"))["result"]
    costs = [(await call(session, "StockLevel_unitCost", StockLevel=level))["result"] for level in (levels[0], levels[3])]
    assert costs[0] != costs[1]  # EUR 4.50 twice: two levels' costs, not one object
    product = (await call(session, "Query_product", sku="P2"))["result"]
    price = (await call(session, "Product_price", Product=product))["result"]
    assert price not in costs  # EUR 4.50 again, as a price this time
    assert (await call(session, "Money_amount", Money=price))["result"] == 4.5


async def test_a_chain_mints_each_look_alike_on_its_own(warehouse: Server, opened: Open) -> None:
    session = await opened(warehouse.url)
    chain = await call(
        session,
        "callChain",
        steps=[{"tool": "Query_warehouse", "arguments": {"id": "W1"}}, {"tool": "Warehouse_stock"}],
    )
    found = json.dumps(chain)
    levels = sorted(set(part for part in found.replace('"', " ").split() if part.startswith("StockLevel#")), key=lambda i: int(i[11:]))
    assert len(levels) == 8, chain
    skus = {await product_sku(session, level) for level in levels}
    assert skus == {sku for sku, _, _ in W1}


async def test_writes_that_answer_equal_levels_answer_distinct_ids(warehouse: Server, opened: Open) -> None:
    session = await opened(warehouse.url, mutations=True)
    once = await call(session, "Mutation_adjustStock", warehouseId="W1", sku="P1", delta=0)
    twice = await call(session, "Mutation_adjustStock", warehouseId="W1", sku="P4", delta=0)
    assert once["result"] != twice["result"], (once, twice)  # 0 in bin A1 at 4.50, twice: two levels
    taken = await call(session, "Mutation_stockTake", warehouseId="W1")
    counted = (await call(session, "StockTake_levels", StockTake=taken["result"]))["result"]
    assert len(set(counted)) == 8, counted
    assert not set(counted) & {once["result"], twice["result"]}
    assert (await call(session, "StockTake_levels", StockTake=taken["result"]))["result"] == counted  # read again: the same
    for level, (_, quantity, bin_) in zip(counted, W1, strict=True):
        assert (await call(session, "StockLevel_quantity", StockLevel=level))["result"] == quantity
        assert (await call(session, "StockLevel_bin", StockLevel=level))["result"] == bin_


# -- the Pothos orders API ---------------------------------------------------------------------------------


async def test_order_lines_that_read_alike_each_answer_their_own_product(orders: Server, opened: Open) -> None:
    session = await opened(orders.url)
    names = []
    for order, expected in (("o1", ["Oat milk", "Rye bread", "Apples"]), ("o2", ["Rye bread", "Coffee beans"])):
        await call(session, "Query_order", id=order)
        lines = (await call(session, "Order_lines"))["result"]
        assert len(set(lines)) == len(expected)
        for line in lines:
            product = (await call(session, "OrderLine_product", OrderLine=line))["result"]
            names.append((await call(session, "Product_name", Product=product))["result"])
        assert names[-len(expected) :] == expected
    assert len({*names}) == 4


async def test_union_and_interface_members_that_read_alike_are_told_apart(orders: Server, opened: Open) -> None:
    session = await opened(orders.url)
    deliveries = await call(session, "Query_deliveries")
    ids = deliveries["result"]
    assert len(set(ids)) == 6 and sum(i.startswith("Parcel#") for i in ids) == 4, deliveries
    parcels = [i for i in ids if i.startswith("Parcel#")]
    codes = [(await call(session, "Parcel_tracking", Parcel=p, format="long"))["result"] for p in parcels]
    assert [code.split("-")[1] for code in codes] == ["o1", "o2", "o5", "o6"]
    numbers = []
    for parcel in parcels:
        order = (await call(session, "Parcel_order", Parcel=parcel))["result"]
        numbers.append((await call(session, "Order_number", Order=order))["result"])
    assert numbers == [1001, 1002, 1005, 1006]

    discounts = []
    for order in ("o1", "o2", "o4"):  # three 10% discounts of -0.5
        await call(session, "Query_order", id=order)
        adjustments = (await call(session, "Order_adjustments"))["result"]
        discounts.append(next(a for a in adjustments if a.startswith("Discount#")))
    assert len(set(discounts)) == 3
    explained = [(await call(session, "Discount_explain", Discount=d, lang="de"))["result"] for d in discounts]
    assert [text.rsplit(" ", 1)[1] for text in explained] == ["o1", "o2", "o4"]


async def test_pages_of_orders_that_read_alike_are_two_pages(orders: Server, opened: Open) -> None:
    session = await opened(orders.url)
    pages = [(await call(session, "Query_orders", skip=skip, take=2))["result"] for skip in (0, 2)]
    assert pages[0] != pages[1]
    again = await restored(session)
    again.select(again.catalogue.names())
    for page, expected in zip(pages, ([1001, 1002], [1003, 1004]), strict=True):
        items = (await call(again, "OrderPage_items", OrderPage=page))["result"]
        assert [(await call(again, "Order_number", Order=item))["result"] for item in items] == expected


async def test_a_reorders_lines_are_not_the_old_orders_lines(orders: Server, opened: Open) -> None:
    session = await opened(orders.url, mutations=True)
    await call(session, "Query_order", id="o5")
    old = (await call(session, "Order_lines"))["result"]
    made = await call(session, "Mutation_reorder", orderId="o5")
    lines = (await call(session, "ReorderPayload_lines", ReorderPayload=made["result"]))["result"]
    assert len(set(lines)) == 2 and not set(lines) & set(old), (old, lines)
    again = await call(session, "Mutation_reorder", orderId="o5")
    more = (await call(session, "ReorderPayload_lines", ReorderPayload=again["result"]))["result"]
    assert again["result"] != made["result"] and not set(more) & set(lines)
    for line, name in zip(old, ("Oat milk", "Rye bread"), strict=True):  # the old lines still read their own order
        order = (await call(session, "OrderLine_order", OrderLine=line))["result"]
        assert (await call(session, "Order_number", Order=order))["result"] == 1005
        product = (await call(session, "OrderLine_product", OrderLine=line))["result"]
        assert (await call(session, "Product_name", Product=product))["result"] == name
