"""A root lookup given a list where its argument takes one value reads each value, in one request,
and answers keyed by the value asked (calls/_each.py)."""

from __future__ import annotations

from typing import Any

from dagtools import Session, ToolCall
from dagtools.calls._each import EACH_REQUEST, MAX_EACH
from tests.transports import Transport, relay_session


async def called(session: Session, tool: str, /, **arguments: Any) -> Any:
    return await session.call_tool(ToolCall(name=tool, arguments=arguments))


async def test_several_keys_are_read_in_one_request_keyed_by_the_value_asked(transport: Transport) -> None:
    session, _, executor = relay_session(transport, relay_ids=False)
    before = len(executor.sent)
    found = await called(session, "Query_repository", name=["engine", "nowhere", "compiler"])
    assert not found.is_error, found.value
    assert len(executor.sent) == before + 1  # one request, as aliases would send it
    assert found.value["result"] == {"engine": "Repository#1", "compiler": "Repository#2"}
    assert found.value["preview"]["Repository#2"]["name"] == "compiler"
    assert "nothing at name nowhere" in found.value["note"]
    again = await called(session, "Query_repository", name="engine")  # the same object as read alone
    assert again.value["result"] == "Repository#1"


async def test_many_keys_go_a_request_for_each_fifty_and_what_found_nothing_is_said_as_runs(transport: Transport) -> None:
    session, _, executor = relay_session(transport, relay_ids=False)
    before = len(executor.sent)
    names = ["engine", *(str(n) for n in range(1, 120)), "nowhere", "7", "130", "compiler"]
    found = await called(session, "Query_repository", name=names)
    assert not found.is_error, found.value
    asked = len(dict.fromkeys(names))  # "7" twice is one lookup
    assert len(executor.sent) == before + -(-asked // EACH_REQUEST)
    assert found.value["result"] == {"engine": "Repository#1", "compiler": "Repository#2"}
    assert found.value["note"].startswith("null: nothing at name 1-119, nowhere, 130.")


async def test_a_bad_value_is_its_own_error_and_too_many_change_nothing(transport: Transport) -> None:
    session, _, executor = relay_session(transport, relay_ids=False)
    mixed = await called(session, "Query_repository", name=["engine", {"x": 1}])
    assert mixed.is_error  # a value that is no key is no lookup: the call is refused as it was
    held, sent = len(session.registry), len(executor.sent)
    many = await called(session, "Query_repository", name=[f"r{n}" for n in range(MAX_EACH + 1)])
    assert many.is_error and f"at most {MAX_EACH}" in many.value["error"]
    assert (len(session.registry), len(executor.sent)) == (held, sent)


async def test_a_list_on_a_field_of_an_object_is_no_lookup(transport: Transport) -> None:
    session, _, _ = relay_session(transport, relay_ids=False)
    await called(session, "Query_repository", name="engine")
    refused = await called(session, "Repository_issue", number=[1, 2])
    assert refused.is_error  # only the roots' lookups take several keys


def test_a_lookup_that_is_the_only_way_to_a_type_says_so_when_none_was_found() -> None:
    """No list of agencies and no field that gives one: keys are the only way, and a lookup that
    found none says to try others instead of leaving the model to search for a list."""
    from graphql import build_schema

    from dagtools.calls._each import merge_each, only_by
    from dagtools.catalogue import compile_catalogue

    sdl = """
        type Query { employer(id: ID!): Employer, companies: [Company!]! }
        union Employer = Company | Agency
        type Company { id: ID!, name: String }
        type Agency { id: ID!, name: String, feePercent: Int }
    """
    catalogue = compile_catalogue(build_schema(sdl))
    assert only_by(catalogue, "Query_employer", "id") == ["Agency"]
    companies = merge_each("id", ["1", "3"], [{"result": "Company#1"}, {"result": None}], ["Agency"])
    assert (
        companies["note"]
        == "null: nothing at id 3. None is an Agency: no tool lists Agency objects or their ids; look up other ids to find them."
    )
    agency = merge_each("id", ["100"], [{"result": "Agency#1"}], ["Agency"])
    assert "note" not in agency
    reached = compile_catalogue(build_schema(sdl.replace("name: String }", "name: String, agency: Agency }", 1)))
    assert only_by(reached, "Query_employer", "id") == []  # a company gives its agency: another way to one
