"""The session: the seed transcript, IDs and handles, previews, lists, long values, selectTools, save."""

from __future__ import annotations

import json

import pytest
import strawberry

from dagtools import ToolCall, open_session
from dagtools.session._metatools import estimate_tokens
from tests.conftest import FORGE, shared_catalogue
from tests.kitchen import call, kitchen_session
from tests.previews import rows


async def test_seed_transcript_call_for_call():
    s = await kitchen_session()
    assert [e.id for e in s.registry] == ["Oven#1", "Potato#1", "Sink#1", "Plate#1"]
    assert (await call(s, "selectTools", tools=["Potato_rinse", "Potato_peel", "Potato_slice", "Oven_bake"])).value == "ok"
    assert (await call(s, "Potato_rinse", Potato="Potato#1", sink="Sink#1")).value == {"result": "Potato#2"}
    assert (await call(s, "Potato_peel", Potato="Potato#2")).value == {"result": "Potato#3"}
    assert (await call(s, "Potato_slice", Potato="Potato#3", shape="STICKS")).value == {"result": "Potato#4"}
    assert (await call(s, "Oven_bake", Oven="Oven#1", item="Potato#4")).value == {"result": "Fries#1"}
    assert (await call(s, "selectTools", tools=["Fries_plate"])).value == "ok"
    assert (await call(s, "Fries_plate", Fries="Fries#1", plate="Plate#1")).value == {"result": "Plate#2"}
    result = await call(s, "save", fries="Plate#2")
    assert not result.is_error
    assert s.saved == {"fries": "Plate#2"} and s.done
    assert s.object("Plate#2").expression == "Fries#1.plate(plate: Plate#1)"
    assert s.object("Potato#4").expression == 'Potato#3.slice(shape: "STICKS")'


async def test_same_handle_same_id_and_objects_stay_immutable():
    s = await kitchen_session()
    s.select(["Potato_rinse", "Potato_rinsed"])
    first = await call(s, "Potato_rinse", Potato="Potato#1", sink="Sink#1")
    again = await call(s, "Potato_rinse", Potato="Potato#1", sink="Sink#1")
    assert first.value == again.value == {"result": "Potato#2"}
    assert (await call(s, "Potato_rinsed", Potato="Potato#1")).value == {"result": False}
    assert (await call(s, "Potato_rinsed", Potato="Potato#2")).value == {"result": True}


async def test_the_object_parameter_defaults_to_the_most_recent():
    s = await kitchen_session()
    s.select(["Potato_rinse", "Potato_peel"])
    await call(s, "Potato_rinse", sink="Sink#1")  # Potato#1 -> Potato#2
    result = await call(s, "Potato_peel")
    assert s.object(result.value["result"]).expression == "Potato#2.peel"


async def test_identity_keeps_documents_short():
    s = await kitchen_session()
    s.select(["Potato_rinse", "Potato_peel", "Potato_slice"])
    await call(s, "Potato_rinse", sink="Sink#1")
    await call(s, "Potato_peel")
    entry = s.object((await call(s, "Potato_slice", shape="STICKS")).value["result"])
    assert [step.field for step in entry.handle.steps] == ["loadPotatoFromID"]


async def test_interface_results_narrow_to_the_concrete_type():
    s = await kitchen_session()
    s.select(["Sink_rinse"])
    assert (await call(s, "Sink_rinse", item="Potato#1")).value == {"result": "Potato#2"}


async def test_previews_of_cheap_scalars():
    s = await kitchen_session(previews=True)
    s.select(["Potato_peel"])
    result = await call(s, "Potato_peel")
    assert result.value["result"] == "Potato#2"
    preview = result.value["preview"]
    assert {k: preview[k] for k in ("variety", "rinsed", "peeled", "cut")} == {
        "variety": "Russet",
        "rinsed": False,
        "peeled": True,
        "cut": "WHOLE",
    }
    assert "id" not in preview  # ids are the session's business, not the model's
    assert result.value["preview"]["peeled"] is True


async def test_lists_of_objects_give_lists_of_ids():
    s = await kitchen_session(previews=True)
    s.select(["Query_potatoes", "Potato_variety"])
    result = await call(s, "Query_potatoes")
    ids = result.value["result"]
    assert ids[0] == "Potato#1"  # the raw Russet the host gave is the same object
    assert len(ids) == 3 and len(set(ids)) == 3
    assert rows(result.value)[ids[1]]["variety"] == "Yukon Gold"
    assert (await call(s, "Potato_variety", Potato=ids[2])).value == {"result": "King Edward"}


async def test_long_values_are_cut_with_a_note_and_read_on():
    s = await kitchen_session()
    s.select(["Oven_manual"])
    result = await call(s, "Oven_manual")
    text = result.value["result"]
    assert len(text) == 4000
    assert 'readResult(ref: "Oven#1.manual", offset: 4000)' in result.value["truncated"]
    assert "readResult" in [t.name for t in s.tools()]
    pieces = [text]
    offset = 4000
    while True:
        more = await call(s, "readResult", ref="Oven#1.manual", offset=offset)
        pieces.append(more.value["result"])
        if "truncated" not in more.value:
            break
        offset += len(more.value["result"])
    from examples.kitchen.api import schema

    full = schema.execute_sync("{ oven { manual } }").data["oven"]["manual"]
    assert "".join(pieces) == full


async def test_inputs_from_chains_with_arguments_and_plain_values():
    from examples.kitchen.api import schema

    s = await open_session(
        schema,
        inputs={
            "gold": {"field": 'potato(variety: "Yukon Gold")', "description": "A golden potato."},
            "budget": {"value": 3, "description": "How many calls you may make."},
        },
    )
    description = s.tools()[0].description
    assert "- Potato#1: A golden potato." in description
    assert "- budget: 3 (How many calls you may make.)" in description
    s.select(["Potato_variety"])
    assert (await call(s, "Potato_variety")).value == {"result": "Yukon Gold"}


async def test_select_tools_lists_objects_and_selectable_tools_like_the_seed():
    s = await kitchen_session()
    select, save = s.tools()[:2]
    assert select.name == "selectTools" and save.name == "save"
    assert "Available objects:\n- Oven#1: An oven you can use for cooking.\n- Potato#1: The raw potato" in select.description
    for name in ("Oven_bake", "Potato_slice", "Sink_rinse", "Query_potato"):
        assert f"- {name}\n" in select.description
    assert "Fries_plate" not in select.description  # no Fries yet
    assert save.parameters["properties"]["fries"]["description"].startswith('Plate ID, such as "Plate#1".')
    assert "- fries (Plate): The baked french fries, on a plate." in save.description


async def test_select_tools_wildcard_and_cap_evicts_least_recently_used():
    s = await kitchen_session(max_active_tools=3)
    s.select(["Potato_peel", "Potato_rinse", "Potato_slice"])
    await call(s, "Potato_peel")  # most recently used: stays
    result = await call(s, "selectTools", tools=["Potato_dice"])
    assert "dropped: Potato_rinse" in result.value
    assert set(s.active_tools) == {"Potato_peel", "Potato_slice", "Potato_dice"}
    error = await call(s, "selectTools", tools=["Potato_*"])
    assert error.is_error and "at most 3" in error.value["error"]
    roomy = await kitchen_session()
    await call(roomy, "selectTools", tools=["Potato_*"])
    assert {"Potato_rinse", "Potato_peel", "Potato_slice", "Potato_dice", "Potato_cut"} <= set(roomy.active_tools)


async def test_save_checks_scalars_and_lists():
    s = await kitchen_session(outputs={"note": {"type": "String!"}, "potatoes": {"type": "[Potato!]"}, "cut": {"type": "Cut"}})
    bad = await call(s, "save", note=3, potatoes=["Potato#1"], cut="CHUNKS")
    assert bad.is_error and "note:" in bad.value["error"] and "cut:" in bad.value["error"]
    assert not s.done and s.saved == {}
    good = await call(s, "save", note="done", potatoes=["Potato#1", "1"], cut="STICKS")
    assert not good.is_error
    assert s.saved == {"note": "done", "potatoes": ["Potato#1", "Potato#1"], "cut": "STICKS"}


async def test_context_records_calls_and_results_only_through_call_tool():
    s = await kitchen_session()
    await s.execute(ToolCall(name="selectTools", arguments={"tools": ["Potato_peel"]}))
    assert len(s.context) == 0
    result = await s.call_tool(ToolCall(name="Potato_peel", arguments={}, id="peel"))
    roles = [m.role for m in s.context]
    assert roles == ["assistant", "tool"]
    assert s.context.messages[0].tool_calls[0].id == "peel"
    assert s.context.messages[1].tool_call_id == "peel" and s.context.messages[1].content == result.content


async def test_client_tools_wait_for_their_result():
    from dagtools import Tool

    s = await kitchen_session()
    s.add_tool(
        Tool(
            name="askUser",
            description="Ask the user a question.",
            parameters={"type": "object", "properties": {"question": {"type": "string"}}},
        )
    )
    pending = await s.call_tool(ToolCall(name="askUser", arguments={"question": "Salt?"}, id="q1"))
    assert pending.pending and not s.context.has_result("q1")
    s.tool_call_result("q1", "Yes, please.")
    assert s.context.messages[-1].content == "Yes, please."
    with pytest.raises(Exception, match="No client tool call 'q1'"):
        s.tool_call_result("q1", "again")


async def test_local_tools_run_and_tell_the_model_its_mistakes(caplog):
    from dagtools import Tool, ToolCallError

    s = await kitchen_session()
    spec = {"type": "object", "properties": {"city": {"type": "string"}}}

    def weather(arguments):
        if not arguments.get("city"):
            raise ToolCallError("weather needs a city, such as Paris.")
        return "sunny"

    s.add_tool(Tool(name="now", description="The time.", parameters=spec), lambda args: "noon")
    s.add_tool(Tool(name="weather", description="The weather.", parameters=spec), weather)
    assert (await call(s, "now")).value == "noon"
    with caplog.at_level("ERROR", logger="dagtools"):
        failed = await call(s, "weather")
    assert failed.is_error and failed.value["error"] == "weather needs a city, such as Paris."  # the model's to fix
    assert not caplog.records  # a mistake of the model's is no bug: nothing logged
    assert s.context.has_result(failed.call_id)


async def test_a_host_tools_bug_raises_and_is_logged_with_its_traceback(caplog):
    from dagtools import Tool

    s = await kitchen_session()
    s.select(["Query_potato"])
    spec = {"type": "object", "properties": {}}
    s.add_tool(Tool(name="lookup", description="Looks something up.", parameters=spec), lambda args: {}["missing"])
    messages = len(s.context)
    with caplog.at_level("ERROR", logger="dagtools"), pytest.raises(KeyError, match="missing"):
        await s.call_tools([ToolCall(name="Query_potato", arguments={}), ToolCall(name="lookup", arguments={})])
    [record] = [r for r in caplog.records if r.name == "dagtools"]
    assert record.levelname == "ERROR" and "lookup" in record.getMessage() and record.exc_info[0] is KeyError
    assert len(s.context) == messages  # no call left without its result in the conversation
    assert not (await call(s, "Query_potato")).is_error  # the session goes on


async def test_mutations_are_refused_unless_allowed():
    s = await kitchen_session()
    refused = await call(s, "Mutation_tip", amount=1)
    assert refused.is_error and "does not allow mutations" in refused.value["error"]
    allowed = await kitchen_session(mutations=["tip"])
    allowed.select(["Mutation_tip"])
    first = (await call(allowed, "Mutation_tip", amount=2)).value["result"]
    second = (await call(allowed, "Mutation_tip", amount=3)).value["result"]
    assert second == first + 3


def test_a_large_apis_initial_toolset_fits_the_budget():
    from dagtools.executors._base import SchemaOnlyExecutor
    from dagtools.session._session import Session

    catalogue = shared_catalogue(FORGE)  # GitHub-sized
    session = Session(catalogue, SchemaOnlyExecutor())
    rendered = json.dumps(session.render_tools("openai"))
    assert estimate_tokens(rendered) <= 2000
    assert "- Query_*: repository, user, " in rendered  # the root tools grouped, those handing out the most-used objects first


def test_select_tools_description_stays_in_budget_with_many_objects_of_many_types():
    from dagtools import Handle, Step
    from dagtools.executors._base import SchemaOnlyExecutor
    from dagtools.session._session import Session

    catalogue = shared_catalogue(FORGE)  # GitHub-sized
    session = Session(catalogue, SchemaOnlyExecutor())
    for type_name in ("Repository", "Issue", "PullRequest", "User", "Organization", "Commit", "Team", "Project"):
        for n in range(200):
            session.registry.mint(type_name, Handle((Step.of("node", {"id": f"{type_name}{n}"}),)), expression=f"node(id: {n})")
    description = session.tools()[0].description
    assert estimate_tokens(description) <= 1500 + 200
    assert "Repository#200" in description and "Repository_*" in description


@strawberry.type
class Note:
    title: str
    body: str


@strawberry.type
class NoteQuery:
    @strawberry.field
    def note(self) -> Note:
        return Note(title="Long", body="x" * 1000)


async def test_previews_cut_long_text():
    session = await open_session(strawberry.Schema(query=NoteQuery))
    session.select(["Query_note", "Note_body"])
    preview = (await call(session, "Query_note")).value["preview"]
    assert preview["title"] == "Long" and len(preview["body"]) == 80 and preview["body"].endswith("…")
    assert (await call(session, "Note_body")).value == {"result": "x" * 1000}


def test_a_context_knows_its_calls_however_the_host_edits_its_messages():
    from dagtools import Message
    from dagtools.session._context import Context

    context = Context()
    context.add_assistant(tool_calls=(ToolCall(id="a", name="Query_potato", arguments={}),))
    assert context.has_call("a") and not context.has_call("b") and not context.has_call("")
    context.add_assistant(tool_calls=(ToolCall(id="b", name="Potato_peel", arguments={}),))
    assert context.has_call("b")
    context.messages.insert(0, Message(role="assistant", tool_calls=(ToolCall(id="c", name="Query_oven", arguments={}),)))
    assert context.has_call("c") and context.has_call("a")
    del context.messages[1:]  # the host drops all but the first
    assert context.has_call("c") and not context.has_call("a") and not context.has_call("b")
    context.messages[:] = [Message(role="user", content="again")]
    assert not context.has_call("c")


def test_select_tools_lists_objects_made_alike_on_one_line() -> None:
    from graphql import build_schema

    from dagtools import Handle, Step, compile_catalogue
    from dagtools.executors._base import SchemaOnlyExecutor
    from dagtools.session._session import Session

    sdl = """
      type Planet { name: String }
      type Person { name: String  homeworld: Planet }
      type Starship { name: String  pilots: [Person] }
      type Query { starship(starshipID: ID): Starship  person(personID: ID): Person  planet(planetID: ID): Planet }
    """
    session = Session(compile_catalogue(build_schema(sdl)), SchemaOnlyExecutor())
    mint = session.registry.mint
    mint("Starship", Handle((Step.of("starship", {"starshipID": "10"}),)), expression='starship(starshipID: "10")')
    for n in range(4):
        mint("Person", Handle((Step.of("person", {"personID": str(n)}),)), expression=f"Starship#1.pilotConnection[{n}]")
    for n in range(1, 5):
        mint("Planet", Handle((Step.of("planet", {"planetID": str(n)}),)), expression=f"Person#{n}.homeworld")
    mint("Planet", Handle((Step.of("planet", {"planetID": "9"}),)), expression="Person#2.homeworld")
    description = session.tools()[0].description
    assert '- Starship#1: starship(starshipID: "10")\n' in description
    assert "- Person#1 to Person#4: Starship#1.pilotConnection[0..3]\n" in description
    assert "- Planet#1 to Planet#4: Person#1..4.homeworld\n- Planet#5: Person#2.homeworld\n" in description
    assert "Person#2:" not in description  # each object is still named, by the range it is in
