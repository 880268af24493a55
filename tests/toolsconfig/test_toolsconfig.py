"""The tools config (seed 002): loading and validation, context fields, api/local/client tools, chat
persistence through the API, and the catalogue exported in the same format."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from dagtools import (
    ChatStore,
    ConfigError,
    LocalExecutor,
    RestApi,
    Session,
    ToolCall,
    attach_tools_config,
    compile_catalogue,
    export_tools_config,
    load_tools_config,
)
from dagtools.catalogue._render import FORMATS
from dagtools.cli._main import main
from tests.recording import RecordingExecutor
from tests.servers import serve_asgi, serve_schema

ROOT = Path(__file__).resolve().parents[2]
KITCHEN_TOOLS = ROOT / "examples" / "kitchen" / "tools.json"
CHAT_TOOLS = ROOT / "examples" / "chat" / "tools.json"
HOUSE = {"variety": "Yukon Gold"}


def fahrenheit(arguments: dict[str, Any]) -> float:
    return arguments["celsius"] * 9 / 5 + 32


def kitchen_session(executor: Any = None) -> Session:
    from examples.kitchen.api import schema

    return Session(compile_catalogue(schema._schema), executor or LocalExecutor(schema))


def api_entry(name: str = "GetThing", **changes: Any) -> dict[str, Any]:
    entry = {
        "type": "api",
        "function": {
            "name": name,
            "description": "A thing.",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        },
        "api": {"query": "query($id: ID!) { thing(id: $id) { name } }"},
    }
    entry.update(changes)
    return entry


async def call(session: Session, name: str, **arguments: Any):
    return await session.call_tool(ToolCall(name=name, arguments=arguments))


# -- loading and validation ----------------------------------------------------------------------------


def test_loads_the_kitchen_example_file():
    config = load_tools_config(KITCHEN_TOOLS)
    kinds = {entry.name: entry.type for entry in config}
    assert kinds == {
        "GetHousePotato": "api",
        "ListPotatoes": "api",
        "BakePotato": "api",
        "CelsiusToFahrenheit": "local",
        "ShowPlate": "client",
    }
    house = config.entry("GetHousePotato")
    assert house.context == ("variety",)
    assert house.api is not None and house.api.name == "default" and not house.api.is_rest
    assert house.model_parameters["properties"] == {} and "required" not in house.model_parameters
    assert house.parameters["required"] == ["variety"]  # the full schema keeps it, for the call
    assert config.save_chat_message is None and config.context_fields == ("variety",)


def test_loads_yaml_text_and_parsed_lists_and_sets_internal_entries_apart():
    text = (
        "- type: function\n"
        "  function: {name: Hello, parameters: {type: object, properties: {}}}\n"
        "- function: {name: Fetch, parameters: {type: object, properties: {}}}\n"
        "  api: {query: 'query { oven { id } }'}\n"
    )
    config = load_tools_config(text)
    assert [(e.name, e.type) for e in config] == [("Hello", "local"), ("Fetch", "api")]
    chat = load_tools_config(json.loads(CHAT_TOOLS.read_text()))
    assert len(chat) == 0
    assert chat.save_chat_message is not None and chat.get_chat_messages is not None
    assert load_tools_config({"tools": [api_entry()]}).entry("GetThing").type == "api"


def _with(path: str, value: Any) -> dict[str, Any]:
    entry = api_entry()
    target = entry
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[key]
    if value is KeyError:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return entry


REST = {"name": "orders", "path": "/orders/{id}", "method": "GET"}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("not an object", "must be an object"),
        ({"type": "api"}, "needs a `function` object with a `name`"),
        (_with("type", "graphql"), "unknown type 'graphql'"),
        (_with("function.name", "has space"), "a name must be 1 to 64"),
        (_with("extra", 1), "unknown key(s) extra"),
        (_with("function.parameters", {"type": "string"}), "must be a JSON Schema object"),
        (_with("function.parameters.required", ["nope"]), "must list names among its properties"),
        (_with("context", "id"), "`context` must be a list"),
        (_with("context", ["userId"]), "context field(s) userId are not among its parameters"),
        (_with("api", KeyError), "an api tool needs an `api` object"),
        (_with("api", {"name": "default"}), "exactly one of `query` (GraphQL) or `path`"),
        (_with("api", {"query": "query { a }", "path": "/a"}), "exactly one of"),
        (_with("api.query", "query($id: ID!) { thing(id: $id) { name }"), "is not valid GraphQL"),
        (_with("api.query", "query A { a } query B { b }"), "exactly one operation, not 2"),
        (_with("api.query", "query($id: ID!, $other: Int) { thing(id: $id) { name } }"), "$other are not among"),
        (_with("api.query", "query { things { name } }"), "parameter(s) id are not variables of its query"),
        (_with("api", {**REST, "method": "FETCH"}), "unknown REST method 'FETCH'"),
        (_with("api", {**REST, "path": "orders"}), "must be a string starting with /"),
        (_with("api", {**REST, "path": "/orders/{orderId}"}), "path parameter(s) orderId"),
        ({**api_entry(), "type": "local"}, "a local tool has no `api`"),
        ({**api_entry("InternalSaveChatMessage")}, "needs the parameter(s) role, content"),
        ({**api_entry("InternalGetChatMessages")}, "takes only context fields"),
        ({"type": "client", "function": {"name": "InternalGetChatMessages"}}, "must be an api tool"),
    ],
)
def test_validation_errors_name_the_entry(entry, message):
    with pytest.raises(ConfigError) as raised:
        load_tools_config([entry])
    assert message in str(raised.value)
    if isinstance(entry, dict) and isinstance(entry.get("function"), dict) and "name" in entry["function"]:
        assert repr(entry["function"]["name"]) in str(raised.value)


def test_a_name_defined_twice_and_files_that_are_not_configs():
    with pytest.raises(ConfigError, match="defined twice"):
        load_tools_config([api_entry(), api_entry()])
    with pytest.raises(ConfigError, match="must be a list of tool entries"):
        load_tools_config('{"type": "api"}')
    with pytest.raises(ConfigError, match="Could not read"):
        load_tools_config(Path("/nonexistent/tools.json"))


# -- attaching: context fields, api, local and client tools ------------------------------------------------


@pytest.mark.parametrize("format", FORMATS)
def test_context_fields_are_hidden_from_every_provider_rendering(format):
    session = kitchen_session()
    attach_tools_config(session, KITCHEN_TOOLS, context=HOUSE, handlers={"CelsiusToFahrenheit": fahrenheit})
    rendered = session.render_tools(format)
    house = next(t for t in rendered if "GetHousePotato" in json.dumps(t))
    assert '"variety"' not in json.dumps(house)  # the description may say the word; no property may
    bake = next(t for t in rendered if "BakePotato" in json.dumps(t))
    assert "potatoId" in json.dumps(bake)


async def test_context_values_are_filled_in_and_a_model_that_sets_one_is_refused_unsent():
    executor = RecordingExecutor(kitchen_session().executor)
    session = kitchen_session(executor)
    attach_tools_config(session, KITCHEN_TOOLS, context=HOUSE, handlers={"CelsiusToFahrenheit": fahrenheit})
    result = await call(session, "GetHousePotato")
    assert not result.is_error
    assert result.value["result"]["potato"]["variety"] == "Yukon Gold"
    document, variables = executor.sent[-1]
    assert variables == {"variety": "Yukon Gold"} and "Yukon" not in document  # a variable, never spliced
    sent = len(executor.sent)
    refused = await call(session, "GetHousePotato", variety="Russet")
    assert refused.is_error and "variety is set by the host" in refused.content
    assert len(executor.sent) == sent
    assert session.context.messages[-1].is_error  # the refusal is recorded like any result


async def test_a_missing_context_value_is_a_config_error_at_attach_and_an_error_result_later():
    session = kitchen_session()
    with pytest.raises(ConfigError, match="needs the context value"):
        attach_tools_config(session, KITCHEN_TOOLS, context={}, handlers={"CelsiusToFahrenheit": fahrenheit})
    assert "GetHousePotato" not in session.extra_tools  # nothing added when attaching fails
    context = dict(HOUSE)
    attach_tools_config(session, KITCHEN_TOOLS, context=context, handlers={"CelsiusToFahrenheit": fahrenheit})
    del context["variety"]  # read at call time, so a host that drops it gets a clear result, not a crash
    result = await call(session, "GetHousePotato")
    assert result.is_error and "the host has not set variety" in result.content


def test_attach_refuses_missing_handlers_stray_handlers_unknown_apis_and_taken_names():
    with pytest.raises(ConfigError, match="needs a callable"):
        attach_tools_config(kitchen_session(), KITCHEN_TOOLS, context=HOUSE)
    with pytest.raises(ConfigError, match="not local tools"):
        attach_tools_config(
            kitchen_session(), KITCHEN_TOOLS, context=HOUSE, handlers={"CelsiusToFahrenheit": fahrenheit, "ShowPlate": fahrenheit}
        )
    with pytest.raises(ConfigError, match="API 'shop', which is not registered"):
        attach_tools_config(kitchen_session(), [_with("api.name", "shop")])
    with pytest.raises(ConfigError, match="is a REST tool"):
        attach_tools_config(kitchen_session(), [_with("api", REST)], executors={"orders": LocalExecutor(kitchen_session().executor.schema)})
    taken = copy.deepcopy(api_entry("Query_oven"))
    with pytest.raises(ConfigError, match="tools named Query_oven already"):
        attach_tools_config(kitchen_session(), [taken])


async def test_graphql_tools_report_errors_and_check_arguments():
    session = kitchen_session()
    attach_tools_config(session, KITCHEN_TOOLS, context=HOUSE, handlers={"CelsiusToFahrenheit": fahrenheit})
    potato = (await call(session, "GetHousePotato")).value["result"]["potato"]["id"]
    fries = await call(session, "BakePotato", potatoId=potato, settings={"minutes": 25})
    assert fries.value["result"]["oven"]["bake"]["crispiness"] == 75
    bad = await call(session, "BakePotato", potatoId="not-an-id")
    assert bad.is_error and "BakePotato failed: not a Potato ID" in bad.content
    assert "needs potatoId" in (await call(session, "BakePotato")).content
    assert "has no parameter colour" in (await call(session, "ListPotatoes", colour="red")).content


async def test_graphql_tools_over_real_http(kitchen_server):
    session = kitchen_session()
    attached = attach_tools_config(
        session, KITCHEN_TOOLS, executors={"default": kitchen_server.url}, context=HOUSE, handlers={"CelsiusToFahrenheit": fahrenheit}
    )
    result = await call(session, "GetHousePotato")
    assert result.value["result"]["potato"]["variety"] == "Yukon Gold"
    listed = await call(session, "ListPotatoes")
    assert [p["variety"] for p in listed.value["result"]["potatoes"]] == ["Russet", "Yukon Gold", "King Edward"]
    sent = [r.json() for r in kitchen_server.requests]
    assert sent[0]["query"] == load_tools_config(KITCHEN_TOOLS).entry("GetHousePotato").api.query
    assert sent[0]["variables"] == {"variety": "Yukon Gold"}
    await attached.aclose()


async def test_local_and_client_tools_through_call_tool_and_tool_call_result():
    session = kitchen_session()
    seen: list[dict[str, Any]] = []

    async def convert(arguments: dict[str, Any]) -> float:
        seen.append(arguments)
        return fahrenheit(arguments)

    attach_tools_config(session, KITCHEN_TOOLS, context=HOUSE, handlers={"CelsiusToFahrenheit": convert})
    assert (await call(session, "CelsiusToFahrenheit", celsius=100)).value == 212
    assert seen == [{"celsius": 100}]
    pending = await call(session, "ShowPlate", description="crispy fries")
    assert pending.pending and not session.context.has_result(pending.call_id)
    session.tool_call_result(pending.call_id, "The diner smiled.")
    last = session.context.messages[-1]
    assert (last.role, last.name, last.content) == ("tool", "ShowPlate", "The diner smiled.")


# -- REST tools ------------------------------------------------------------------------------------------


async def _order(request: Request) -> Response:
    order_id = request.path_params["id"]
    if order_id == "missing":
        return JSONResponse({"detail": "no such order"}, status_code=404)
    return JSONResponse(
        {
            "id": order_id,
            "raw_path": request.scope["raw_path"].decode(),
            "customer": request.query_params.get("customerId"),
            "fields": request.query_params.getlist("fields"),
        }
    )


async def _create(request: Request) -> Response:
    return JSONResponse({"created": await request.json()}, status_code=201)


async def _delete(request: Request) -> Response:
    return Response(status_code=204)


REST_APP = Starlette(
    routes=[
        Route("/orders/{id:path}", _order, methods=["GET"]),
        Route("/orders", _create, methods=["POST"]),
        Route("/orders/{id}", _delete, methods=["DELETE"]),
    ]
)


def rest_config() -> list[dict[str, Any]]:
    def entry(name: str, path: str, method: str, properties: dict[str, Any], context: list[str]) -> dict[str, Any]:
        return {
            "type": "api",
            "context": context,
            "function": {"name": name, "description": name, "parameters": {"type": "object", "properties": properties}},
            "api": {"name": "orders", "path": path, "method": method},
        }

    text = {"type": "string"}
    return [
        entry("GetOrder", "/orders/{id}", "GET", {"id": text, "customerId": text, "fields": {"type": "array"}}, ["customerId"]),
        entry("CreateOrder", "/orders", "POST", {"item": text, "quantity": {"type": "integer"}, "customerId": text}, ["customerId"]),
        entry("CancelOrder", "/orders/{id}", "DELETE", {"id": text}, []),
    ]


async def test_rest_tools_against_a_loopback_app():
    with serve_asgi(REST_APP) as base:
        session = kitchen_session()
        attach_tools_config(session, rest_config(), executors={"orders": RestApi(base_url=base)}, context={"customerId": "c-42"})
        got = await call(session, "GetOrder", id="a?b c", fields=["total", "status"])
        assert got.value == {"result": {"id": "a?b c", "raw_path": "/orders/a%3Fb%20c", "customer": "c-42", "fields": ["total", "status"]}}
        created = await call(session, "CreateOrder", item="fries", quantity=2)
        assert created.value == {"result": {"created": {"item": "fries", "quantity": 2, "customerId": "c-42"}}}
        assert (await call(session, "CancelOrder", id="o-1")).value == {"result": None}
        missing = await call(session, "GetOrder", id="missing")
        assert missing.is_error
        assert "GET /orders/missing answered HTTP 404 Not Found" in missing.content and "no such order" in missing.content
        refused = await call(session, "CreateOrder", item="fries", customerId="c-1")
        assert refused.is_error and "set by the host" in refused.content


async def test_a_rest_api_registered_as_a_plain_url_and_one_that_is_down():
    with serve_asgi(REST_APP) as base:
        session = kitchen_session()
        attach_tools_config(session, rest_config(), executors={"orders": base}, context={"customerId": "c-42"})
        assert (await call(session, "GetOrder", id="o-7")).value["result"]["id"] == "o-7"
    down = await call(session, "GetOrder", id="o-7")  # the server is gone now
    assert down.is_error and "could not reach" in down.content


# -- chat persistence ------------------------------------------------------------------------------------


async def test_a_conversation_saved_in_one_session_continues_in_another():
    from examples.chat.api import make_schema

    chat = make_schema()
    store = ChatStore(CHAT_TOOLS, executors={"chat": LocalExecutor(chat)}, context={"userId": "u-1"})
    first = kitchen_session()
    attach_tools_config(first, KITCHEN_TOOLS, context=HOUSE, handlers={"CelsiusToFahrenheit": fahrenheit})
    assert await store.load(first) == 0
    first.context.add_user("Make me fries.")
    await first.call_tools(
        [ToolCall(name="GetHousePotato", id="a1"), ToolCall(name="CelsiusToFahrenheit", arguments={"celsius": 220}, id="a2")]
    )
    await call(first, "GetHousePotato", variety="Russet")  # an error result round-trips as one
    assert await store.save_new(first) == 6
    first.context.add_assistant("Here is your potato.")
    assert await store.save_new(first) == 1 and await store.save_new(first) == 0

    other = ChatStore(CHAT_TOOLS, executors={"chat": LocalExecutor(chat)}, context={"userId": "u-2"})
    await other.save_new(_with_message("Someone else."))

    second = kitchen_session()
    later = ChatStore(CHAT_TOOLS, executors={"chat": LocalExecutor(chat)}, context={"userId": "u-1"})
    assert await later.load(second) == 7
    assert second.context.messages == first.context.messages
    calls = second.context.messages[1].tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("a1", "GetHousePotato", {}), ("a2", "CelsiusToFahrenheit", {"celsius": 220})]
    second.context.add_user("Thanks!")
    assert await later.save_new(second) == 1  # only the new message: the loaded ones are stored already
    assert [m.user_id for m in chat.storage.messages].count("u-1") == 8


def _with_message(text: str):
    from dagtools import Context

    context = Context()
    context.add_user(text)
    return context


async def test_results_saved_without_tool_call_ids_are_paired_with_their_calls():
    from examples.chat.api import make_schema

    config = json.loads(CHAT_TOOLS.read_text())
    save = config[0]
    del save["function"]["parameters"]["properties"]["tool_call_id"]
    save["api"]["query"] = save["api"]["query"].replace(", $tool_call_id: String", "").replace(", toolCallId: $tool_call_id", "")
    chat = make_schema()
    store = ChatStore(config, executors={"chat": LocalExecutor(chat)}, context={"userId": "u"})
    session = kitchen_session()
    attach_tools_config(session, KITCHEN_TOOLS, context=HOUSE, handlers={"CelsiusToFahrenheit": fahrenheit})
    await session.call_tool(ToolCall(name="ListPotatoes", id="x9"))
    await store.save_new(session)
    assert chat.storage.messages[1].tool_call_id is None
    loaded = await store.messages()
    assert loaded[1].tool_call_id == "x9" and loaded == session.context.messages


def test_a_chat_store_needs_both_internal_entries_and_its_context():
    with pytest.raises(ConfigError, match="needs a InternalSaveChatMessage"):
        ChatStore(KITCHEN_TOOLS, executors={}, context={})
    with pytest.raises(ConfigError, match="needs the context value"):
        ChatStore(CHAT_TOOLS, executors={"chat": "http://127.0.0.1:9/graphql"}, context={})


async def test_a_chat_store_over_real_http():
    from examples.chat.api import make_schema

    chat = make_schema()
    with serve_schema(chat) as (url, _):
        store = ChatStore(CHAT_TOOLS, executors={"chat": url}, context={"userId": "u-h"})
        session = kitchen_session()
        session.context.add_user("hello")
        session.context.add_assistant("hi")
        assert await store.save_new(session) == 2
        again = kitchen_session()
        assert await store.load(again) == 2 and again.context.messages == session.context.messages
        await store.aclose()


# -- export ------------------------------------------------------------------------------------------------


async def test_exported_entries_load_and_give_the_catalogue_tools_data():
    from examples.chat.api import make_schema
    from examples.kitchen.api import schema

    catalogue = compile_catalogue(schema._schema)
    exported = export_tools_config(catalogue, names=["Potato_variety", "Oven_bake"])
    names = [e["function"]["name"] for e in exported]
    assert names == [n for n in catalogue.names() if n.startswith("Query_")] + ["Potato_variety", "Oven_bake"]
    config = load_tools_config(json.loads(json.dumps(exported)))
    assert len(config) == len(exported)

    kitchen = kitchen_session()
    kitchen.select(["Query_potato"])
    handle = await call(kitchen, "Query_potato", variety="King Edward")
    entry = kitchen.object(handle.value["result"])

    # The exported tools run in a session over another API, with the kitchen as their default API.
    standalone = Session(compile_catalogue(make_schema()._schema), LocalExecutor(schema))
    attach_tools_config(standalone, config)
    data = (await call(standalone, "Query_potato", variety="King Edward")).value["result"]["potato"]
    assert data["__typename"] == entry.type_name and data["id"] == entry.identity
    variety = await call(standalone, "Potato_variety", Potato=data["id"])
    assert variety.value == {"result": {"loadPotatoFromID": {"variety": "King Edward"}}}
    oven = (await call(standalone, "Query_oven")).value["result"]["oven"]["id"]
    baked = await call(standalone, "Oven_bake", Oven=oven, item=data["id"], settings={"minutes": 20})
    assert baked.value["result"]["loadOvenFromID"]["bake"]["__typename"] == "Fries"
    assert "Potato" not in json.dumps(config.entry("Query_potato").parameters)  # no Type#N handles


def test_export_refuses_unknown_names_and_the_cli_prints_the_config(capsys):
    from examples.kitchen.api import schema

    with pytest.raises(ConfigError, match="no tool 'Query_potatos'"):
        export_tools_config(compile_catalogue(schema._schema), names=["Query_potatos"])
    assert main(["tools", f"{ROOT / 'examples' / 'kitchen' / 'api.py'}:schema", "--format", "tools-config"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert load_tools_config(printed).entry("Query_potato").api.query.startswith("query Query_potato($variety")
