"""The kitchen example API: its committed SDL, and its immutable, id-based behaviour."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from examples.kitchen.api import schema

ROOT = Path(__file__).resolve().parents[1]
SDL_PATH = ROOT / "schemas" / "kitchen.graphql"
REGENERATE = 'python -c "from examples.kitchen.api import schema; print(schema)" > schemas/kitchen.graphql'


def run(query: str, **variables: Any) -> dict[str, Any]:
    """Execute ``query``; fail on any GraphQL error."""
    result = schema.execute_sync(query, variable_values=variables)
    assert result.errors is None, result.errors
    assert result.data is not None
    return result.data


def run_error(query: str, **variables: Any) -> str:
    """Execute ``query``, which must fail; return the error message."""
    result = schema.execute_sync(query, variable_values=variables)
    assert result.errors, f"expected an error, got {result.data}"
    return result.errors[0].message


def potato_id(variety: str = "Russet") -> str:
    return run("query($v: String!) { potato(variety: $v) { id } }", v=variety)["potato"]["id"]


def sink_id() -> str:
    return run("{ sink { id } }")["sink"]["id"]


def plate_id() -> str:
    return run("{ plate { id } }")["plate"]["id"]


def fries_id() -> str:
    return run("query($p: PotatoID!) { oven { bake(item: $p) { id } } }", p=potato_id())["oven"]["bake"]["id"]


POTATO = "query($id: PotatoID!) { loadPotatoFromID(id: $id) { id variety rinsed peeled cut description } }"


def load_potato(id: str) -> dict[str, Any]:
    return run(POTATO, id=id)["loadPotatoFromID"]


def test_committed_sdl_matches_schema() -> None:
    assert SDL_PATH.read_text() == str(schema) + "\n", f"{SDL_PATH} is stale; regenerate it from the repository root with: {REGENERATE}"


def test_seed_flow_through_ids() -> None:
    raw = potato_id()
    rinsed = run("query($p: PotatoID!, $s: SinkID!) { loadPotatoFromID(id: $p) { rinse(sink: $s) { id } } }", p=raw, s=sink_id())
    rinsed_id = rinsed["loadPotatoFromID"]["rinse"]["id"]
    peeled_id = run("query($p: PotatoID!) { loadPotatoFromID(id: $p) { peel { id } } }", p=rinsed_id)["loadPotatoFromID"]["peel"]["id"]
    sliced = run(
        "query($p: PotatoID!, $shape: SliceShape!) { loadPotatoFromID(id: $p) { slice(shape: $shape) { id cut } } }",
        p=peeled_id,
        shape="STICKS",
    )["loadPotatoFromID"]["slice"]
    assert sliced["cut"] == "STICKS"
    assert load_potato(sliced["id"]) == {
        "id": sliced["id"],
        "variety": "Russet",
        "rinsed": True,
        "peeled": True,
        "cut": "STICKS",
        "description": "a rinsed, peeled Russet potato cut into sticks",
    }

    oven_id = run("{ oven { id temperature } }")["oven"]["id"]
    fries = run(
        "query($o: OvenID!, $p: PotatoID!, $s: BakeSettings) "
        "{ loadOvenFromID(id: $o) { bake(item: $p, settings: $s) { id cut crispiness soggy } } }",
        o=oven_id,
        p=sliced["id"],
        s={"minutes": 25},
    )["loadOvenFromID"]["bake"]
    assert fries["cut"] == "STICKS"
    assert fries["crispiness"] == 75
    assert fries["soggy"] is False

    plated = run(
        "query($f: FriesID!, $pl: PlateID!) { loadFriesFromID(id: $f) { plate(plate: $pl) { id isEmpty description fries { id } } } }",
        f=fries["id"],
        pl=plate_id(),
    )["loadFriesFromID"]["plate"]
    assert plated["isEmpty"] is False
    assert plated["fries"]["id"] == fries["id"]
    assert plated["description"] == "a plate of crispy Russet fries cut into sticks (crispiness 75/100)"
    again = run("query($pl: PlateID!) { loadPlateFromID(id: $pl) { id fries { id crispiness } } }", pl=plated["id"])["loadPlateFromID"]
    assert again == {"id": plated["id"], "fries": {"id": fries["id"], "crispiness": 75}}


def test_ids_are_deterministic() -> None:
    assert potato_id() == potato_id()
    assert potato_id("Russet") != potato_id("Yukon Gold")
    assert sink_id() == sink_id()
    assert plate_id() == plate_id()
    query = "query($p: PotatoID!) { a: loadPotatoFromID(id: $p) { peel { id } } b: loadPotatoFromID(id: $p) { peel { id } } }"
    data = run(query, p=potato_id())
    assert data["a"]["peel"]["id"] == data["b"]["peel"]["id"]


def test_ids_encode_the_type_name_as_sorted_json() -> None:
    id = sink_id()
    assert json.loads(base64.urlsafe_b64decode(id + "=" * (-len(id) % 4))) == {"type": "Sink"}


def test_operations_return_new_objects() -> None:
    raw = potato_id()
    rinsed = run("query($p: PotatoID!, $s: SinkID!) { loadPotatoFromID(id: $p) { rinse(sink: $s) { id rinsed } } }", p=raw, s=sink_id())
    new = rinsed["loadPotatoFromID"]["rinse"]
    assert new["rinsed"] is True
    assert new["id"] != raw
    assert load_potato(raw)["rinsed"] is False
    assert load_potato(raw)["description"] == "an unrinsed, unpeeled, whole Russet potato"


def test_deprecated_wash_behaves_like_rinse() -> None:
    query = "query($p: PotatoID!, $s: SinkID!) { loadPotatoFromID(id: $p) { rinse(sink: $s) { id } wash(sink: $s) { id } } }"
    data = run(query, p=potato_id(), s=sink_id())["loadPotatoFromID"]
    assert data["wash"]["id"] == data["rinse"]["id"]


def test_potatoes_and_default_variety() -> None:
    data = run("{ potato { variety cut rinsed peeled } potatoes { variety } }")
    assert data["potato"] == {"variety": "Russet", "cut": "WHOLE", "rinsed": False, "peeled": False}
    assert [p["variety"] for p in data["potatoes"]] == ["Russet", "Yukon Gold", "King Edward"]


def test_peeling_twice_is_an_error() -> None:
    query = "query($p: PotatoID!) { loadPotatoFromID(id: $p) { peel { peel { id } } } }"
    assert run_error(query, p=potato_id()) == "This potato is already peeled."


@pytest.mark.parametrize("second", ["slice(shape: SLICES) { id }", "dice { id }"])
def test_cutting_twice_is_an_error(second: str) -> None:
    query = f"query($p: PotatoID!) {{ loadPotatoFromID(id: $p) {{ dice {{ {second} }} }} }}"
    assert run_error(query, p=potato_id()) == "This potato is already cut."


def test_dice_cuts_into_cubes() -> None:
    data = run("query($p: PotatoID!) { loadPotatoFromID(id: $p) { dice { cut } } }", p=potato_id())
    assert data["loadPotatoFromID"]["dice"]["cut"] == "CUBES"


@pytest.mark.parametrize("bad", ["", "not-an-id!", "eyJ0eXBlIjoiU2luayJ9extra", base64.urlsafe_b64encode(b"[1, 2]").decode()])
def test_malformed_id_is_an_error(bad: str) -> None:
    assert "not a Potato ID" in run_error(POTATO, id=bad)


def test_forged_state_is_rejected() -> None:
    forged = {"cut": "WHOLE", "peeled": "yes", "rinsed": False, "type": "Potato", "variety": "Russet"}
    raw = base64.urlsafe_b64encode(json.dumps(forged, sort_keys=True, separators=(",", ":")).encode()).decode().rstrip("=")
    assert "not a Potato ID" in run_error(POTATO, id=raw)


def test_id_of_another_type_is_an_error() -> None:
    message = run_error(POTATO, id=sink_id())
    assert "not a Potato ID" in message
    assert "Sink" in message
    rinse = "query($s: SinkID!, $f: FoodID!) { loadSinkFromID(id: $s) { rinse(item: $f) { description } } }"
    assert "not a Food ID" in run_error(rinse, s=sink_id(), f=plate_id())


def test_load_food_returns_the_concrete_type() -> None:
    query = "query($id: FoodID!) { loadFoodFromID(id: $id) { __typename description } }"
    assert run(query, id=potato_id())["loadFoodFromID"]["__typename"] == "Potato"
    assert run(query, id=fries_id())["loadFoodFromID"]["__typename"] == "Fries"


def test_sink_rinses_potatoes_and_soaks_fries() -> None:
    query = """query($s: SinkID!, $f: FoodID!) {
      loadSinkFromID(id: $s) { rinse(item: $f) { __typename ... on Potato { rinsed } ... on Fries { soggy description } } }
    }"""
    potato = run(query, s=sink_id(), f=potato_id())["loadSinkFromID"]["rinse"]
    assert potato == {"__typename": "Potato", "rinsed": True}
    fries = run(query, s=sink_id(), f=fries_id())["loadSinkFromID"]["rinse"]
    assert fries["__typename"] == "Fries"
    assert fries["soggy"] is True
    assert fries["description"].startswith("soggy ")


def test_baking_and_broiling_settings() -> None:
    query = """query($p: PotatoID!, $s: BakeSettings) {
      oven { default: bake(item: $p) { crispiness cut } tuned: bake(item: $p, settings: $s) { crispiness } broil(item: $p) { crispiness } }
    }"""
    oven = run(query, p=potato_id(), s={"minutes": 40, "fan": True})["oven"]
    assert oven["default"] == {"crispiness": 90, "cut": "WHOLE"}
    assert oven["tuned"]["crispiness"] == 100
    assert oven["broil"]["crispiness"] == 40


def test_empty_plate_and_full_plate() -> None:
    empty = run("{ plate { fries { id } isEmpty description } }")["plate"]
    assert empty == {"fries": None, "isEmpty": True, "description": "an empty plate"}
    full = run("query($f: FriesID!, $pl: PlateID!) { loadFriesFromID(id: $f) { plate(plate: $pl) { id } } }", f=fries_id(), pl=plate_id())
    full_id = full["loadFriesFromID"]["plate"]["id"]
    again = "query($f: FriesID!, $pl: PlateID!) { loadFriesFromID(id: $f) { plate(plate: $pl) { id } } }"
    assert run_error(again, f=fries_id(), pl=full_id) == "This plate already holds fries."


def test_manual_is_long() -> None:
    manual = run("{ oven { manual } }")["oven"]["manual"]
    assert len(manual) > 10000
    assert manual == run("{ oven { manual } }")["oven"]["manual"]


def test_tip_accumulates() -> None:
    first = run("mutation { tip(amount: 0) }")["tip"]
    assert run("mutation($a: Int!) { tip(amount: $a) }", a=5)["tip"] == first + 5
    assert run_error("mutation { tip(amount: -1) }") == "A tip cannot be negative."
