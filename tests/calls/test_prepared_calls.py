"""A call that names its object is bound once and reused: the same results and documents as binding
it afresh, while calls whose object is the most recent of its type, and values of another JSON type,
are bound again."""

from __future__ import annotations

from tests.kitchen import call, kitchen_session


async def test_a_repeated_call_gives_the_same_result_and_document() -> None:
    session = await kitchen_session()
    session.select(["Potato_rinse", "Potato_variety"])
    first = await call(session, "Potato_rinse", Potato="Potato#1", sink="Sink#1")
    again = await call(session, "Potato_rinse", Potato="Potato#1", sink="Sink#1")
    assert first.value == again.value == {"result": "Potato#2"}
    tool = session.fields.get("Potato_rinse")
    assert tool is not None
    prepared = session.fields.prepare(tool, {"Potato": "Potato#1", "sink": "Sink#1"})
    fresh = session.fields.calls.queries.build(prepared.steps)
    assert session.fields.calls.document(prepared) == fresh


async def test_a_defaulted_object_follows_the_most_recent_one() -> None:
    session = await kitchen_session()
    session.select(["Potato_peel", "Query_potato"])
    assert (await call(session, "Potato_peel")).value["result"] == "Potato#2"
    await call(session, "Query_potato", variety="Yukon Gold")  # Potato#3, now the most recent
    assert (await call(session, "Potato_peel")).value["result"] == "Potato#4"


async def test_values_of_another_type_are_checked_again() -> None:
    session = await kitchen_session()
    session.select(["Oven_bake"])
    good = await call(session, "Oven_bake", Oven="Oven#1", item="Potato#1", settings={"minutes": 30})
    assert not good.is_error, good.value
    bad = await call(session, "Oven_bake", Oven="Oven#1", item="Potato#1", settings={"minutes": True})
    assert bad.is_error and "settings.minutes" in bad.value["error"]
    wrong = await call(session, "Oven_bake", Oven="Oven#1", item="Sink#1", settings={"minutes": 30})
    assert wrong.is_error and "Sink#1" in wrong.value["error"]


async def test_an_object_read_again_is_the_same_id_and_the_most_recent() -> None:
    session = await kitchen_session()
    session.select(["Potato_peel", "Query_potato", "Potato_variety"])
    assert (await call(session, "Potato_peel", Potato="Potato#1")).value["result"] == "Potato#2"
    await call(session, "Query_potato", variety="Yukon Gold")  # Potato#3
    assert (await call(session, "Potato_peel", Potato="Potato#1")).value["result"] == "Potato#2"
    assert session.registry.latest("Potato").id == "Potato#2"
    assert (await call(session, "Potato_variety")).value == {"result": "Russet"}
