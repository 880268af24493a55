"""Custom scalars and handles on a server the tests start: the library app on Ariadne (tests/pyservers).

What a scalar takes is read from its name and description (a JSON scalar takes any JSON value in every
provider rendering, a date says its format), a hash is the model's value sent as given, and a `Type#N`
for an object the session does not hold is refused before anything reaches the API.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import jsonschema
import pytest

from dagtools import Session, ToolCall, open_session
from dagtools.catalogue._render import FORMATS, render_tool
from tests.pyservers.library import Store, global_id, make_app
from tests.servers import Recorder, serve_asgi


@pytest.fixture(scope="module")
def library() -> Iterator[tuple[str, Recorder, list[Store]]]:
    """The Ariadne app under uvicorn; each test gets a fresh store through `fresh_library`."""
    app, store = make_app()
    stores = [store]
    recorder = Recorder(app)
    with serve_asgi(recorder) as url:
        recorder.url = url + "/graphql"
        yield recorder.url, recorder, stores


@pytest.fixture
async def session(library: tuple[str, Recorder, list[Store]]) -> AsyncIterator[tuple[Session, Recorder, Store]]:
    url, recorder, stores = library
    app, store = make_app()
    recorder.app = app  # a fresh app and store for this test, on the same server
    stores[0] = store
    async with await open_session(url, cache=False, mutations=True, max_active_tools=128) as opened:
        opened.select([name for name in opened.catalogue.names() if name.startswith(("Query_", "Mutation_", "Book_", "Commit_"))])
        recorder.requests.clear()
        yield opened, recorder, store


async def call(session: Session, tool: str, **arguments: Any) -> Any:
    result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
    assert not result.is_error, result.value
    return result.value


async def fails(session: Session, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(ToolCall(name=tool, arguments=arguments))
    assert result.is_error, result.value
    return str(result.value["error"])


def sent(recorder: Recorder) -> list[dict[str, Any]]:
    """The GraphQL requests the app received (introspection aside)."""
    return [r.json() for r in recorder.requests if not r.is_introspection]


# -- JSON: any value, in every rendering ---------------------------------------------------------------


async def test_a_json_object_reaches_the_api_as_an_object(session: tuple[Session, Recorder, Store]) -> None:
    opened, recorder, store = session
    metadata = {"shelf": "B2", "tags": ["classic", "sf"], "copies": 3, "signed": False}
    added = await call(opened, "Mutation_addBook", title="Roadside Picnic", publishedOn="1972-01-01", metadata=metadata)
    assert added["result"] == "Book#1"
    assert store.books[-1].metadata == metadata  # stored as the object, not as its text
    assert sent(recorder)[-1]["variables"] == {"v0": "Roadside Picnic", "v1": "1972-01-01", "v2": metadata}
    assert await call(opened, "Book_metadata", Book="Book#1") == {"result": metadata}


@pytest.mark.parametrize("format", FORMATS)
async def test_every_rendering_of_a_json_argument_takes_an_object(session: tuple[Session, Recorder, Store], format: str) -> None:
    """What the model may send under each provider's schema: the object itself where the format can
    say "any value", its JSON text where it cannot (strict mode, Gemini); the API gets the object."""
    opened, _, store = session
    metadata = {"shelf": "A1", "loaned": {"to": "Ada", "until": "2024-06-01"}}
    rendered = render_tool(opened.catalogue.tool("Mutation_setMetadata"), format)
    schema = rendered.get("parameters") or rendered.get("input_schema") or rendered.get("inputSchema") or rendered["function"]["parameters"]
    prop = schema["properties"]["metadata"]
    text_only = format in ("openai-strict", "gemini")
    value: Any = json.dumps(metadata) if text_only else metadata
    arguments = {"id": global_id("Book", 1), "metadata": value}
    if format == "openai-strict":
        arguments = {**{k: None for k in schema["properties"]}, **arguments}  # strict sends every property
    jsonschema.validate(arguments, schema)
    if text_only:
        assert "JSON text" in prop["description"] and "Any JSON value" not in prop["description"]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**arguments, "metadata": metadata}, schema)
    else:
        jsonschema.validate(42, prop)  # any JSON value, not only an object
        jsonschema.validate(["a", 1], prop)
    await call(opened, "Mutation_setMetadata", **{k: v for k, v in arguments.items() if v is not None})
    assert store.books[0].metadata == metadata


async def test_text_that_is_not_json_is_sent_as_text(session: tuple[Session, Recorder, Store]) -> None:
    opened, _, store = session
    await call(opened, "Mutation_setMetadata", id=global_id("Book", 2), metadata="{shelf: B2")
    assert store.books[1].metadata == "{shelf: B2"
    await call(opened, "Mutation_setMetadata", id=global_id("Book", 2), metadata="plain note")
    assert store.books[1].metadata == "plain note"
    missing = await fails(opened, "Mutation_setMetadata", id=global_id("Book", 2))
    assert "metadata: json" in missing  # the reminder of its parameters says it takes any JSON value


async def test_a_json_text_scalar_gets_the_text_of_an_object_the_model_sent(session: tuple[Session, Recorder, Store]) -> None:
    opened, recorder, store = session
    notes = opened.catalogue.tool("Mutation_setNotes").parameters["properties"]["notes"]
    assert notes["type"] == "string" and "JSON text" in notes["description"]
    await call(opened, "Mutation_setNotes", id=global_id("Book", 1), notes={"mood": "bleak", "stars": 4})
    assert json.loads(store.books[0].notes or "") == {"mood": "bleak", "stars": 4}
    await call(opened, "Mutation_setNotes", id=global_id("Book", 1), notes='["as", "text"]')
    assert store.books[0].notes == '["as", "text"]'  # text the model wrote stays text


# -- dates: the schema says the format -----------------------------------------------------------------


async def test_date_scalars_say_their_format(session: tuple[Session, Recorder, Store]) -> None:
    opened, recorder, store = session
    published = opened.catalogue.tool("Mutation_addBook").parameters["properties"]["publishedOn"]
    assert published["type"] == "string" and published["format"] == "date"
    assert "2024-05-01" in published["description"]
    jsonschema.validate("1972-01-01", published, format_checker=jsonschema.FormatChecker())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("May 1972", published, format_checker=jsonschema.FormatChecker())
    await call(opened, "Mutation_addBook", title="Roadside Picnic", publishedOn="1972-01-01")
    assert str(store.books[-1].published_on) == "1972-01-01"
    await call(opened, "Query_book", title="Dune")
    preview = (await call(opened, "Book_updatedAt"))["result"]
    assert preview == "2024-05-01T12:30:00"


# -- a hash is the model's value -----------------------------------------------------------------------


async def test_a_sha_is_sent_as_given_and_a_commit_lands(session: tuple[Session, Recorder, Store]) -> None:
    opened, recorder, store = session
    catalogue = opened.catalogue
    assert catalogue.dialect.name == "relay"
    defs = catalogue.tool("Mutation_createCommitOnBranch").parameters["$defs"]
    oid_schema = defs["CreateCommitOnBranchInput"]["properties"]["expectedHeadOid"]
    assert oid_schema["type"] == "string" and "#1" not in oid_schema["description"]  # a value, not a handle
    assert "GitObjectID: A Git object ID." in oid_schema["description"]
    await call(opened, "Query_book", title="Dune")
    await call(opened, "Book_head")
    oid = (await call(opened, "Commit_oid"))["result"]
    assert len(oid) == 40
    made = await call(
        opened,
        "Mutation_createCommitOnBranch",
        input={"branch": {"bookTitle": "Dune"}, "expectedHeadOid": oid, "message": {"headline": "Chapter two"}, "text": "More sand."},
    )
    assert "error" not in made
    assert sent(recorder)[-1]["variables"]["v0"]["expectedHeadOid"] == oid
    assert [c.message for c in store.books[0].commits] == ["First draft", "Chapter two"]


async def test_an_object_id_where_a_sha_goes_is_sent_as_text_and_the_api_refuses_it(session: tuple[Session, Recorder, Store]) -> None:
    """A Commit's global id is not its SHA: dagtools no longer swaps one for the other."""
    opened, recorder, store = session
    await call(opened, "Query_book", title="Dune")
    await call(opened, "Book_head")
    error = await fails(
        opened,
        "Mutation_createCommitOnBranch",
        input={"branch": {"bookTitle": "Dune"}, "expectedHeadOid": "Commit#1", "message": {"headline": "x"}, "text": "y"},
    )
    assert "40-hex SHA" in error
    assert sent(recorder)[-1]["variables"]["v0"]["expectedHeadOid"] == "Commit#1"
    assert len(store.books[0].commits) == 1


# -- a handle for an object not held -------------------------------------------------------------------


async def test_node_with_a_type_n_not_held_is_refused_before_sending(session: tuple[Session, Recorder, Store]) -> None:
    opened, recorder, _ = session
    error = await fails(opened, "Query_node", id="Book#1")
    assert "Book#1" in error and "no Book" in error and "nothing was sent" in error
    assert "Query_books" in error  # what hands one out
    assert sent(recorder) == []  # the API never saw the text "Book#1" as an id
    await call(opened, "Query_book", title="Dune")
    recorder.requests.clear()
    error = await fails(opened, "Mutation_setMetadata", id="Book#4", metadata={})
    assert "holds only Book#1, so nothing was sent. Use it," in error and "Query_books" in error
    assert sent(recorder) == []


async def test_a_held_type_n_in_an_id_argument_sends_the_objects_global_id(session: tuple[Session, Recorder, Store]) -> None:
    opened, recorder, store = session
    await call(opened, "Query_book", title="Kindred")
    node = await call(opened, "Query_node", id="Book#1")
    assert node["result"] == "Book#1"
    assert global_id("Book", 3) in sent(recorder)[-1]["variables"].values()
    await call(opened, "Mutation_setMetadata", id="Book#1", metadata={"shelf": "C3"})
    assert store.books[2].metadata == {"shelf": "C3"}
    raw = await call(opened, "Query_node", id=global_id("Book", 2))  # the API's own id is taken as it is
    assert raw["result"] == "Book#2"


# -- GitHub's real schema, at the catalogue ------------------------------------------------------------


@pytest.fixture(scope="module")
def github() -> Any:
    from tests.conftest import shared_catalogue

    return shared_catalogue("github.schema.graphql", mutations=True)


def _arguments_of(schema: Any) -> Iterator[tuple[str, Any]]:
    """Every field (previews read scalars the dialect takes for object IDs as handles), every argument
    of every field, and every input field: (where, the argument)."""
    from graphql import GraphQLInputObjectType, GraphQLObjectType

    for type_ in schema.type_map.values():
        if isinstance(type_, GraphQLObjectType):
            for field_name, field in type_.fields.items():
                yield f"{type_.name}.{field_name}", field
                for name, arg in field.args.items():
                    yield f"{type_.name}.{field_name}({name})", arg
        elif isinstance(type_, GraphQLInputObjectType):
            for name, input_field in type_.fields.items():
                yield f"{type_.name}.{name}", input_field


@pytest.mark.public_schemas
def test_github_hashes_and_other_scalars_never_take_handles(github: Any) -> None:
    from graphql import get_named_type

    dialect = github.dialect
    custom = {"GitObjectID", "GitSSHRemote", "X509Certificate", "GitRefname", "URI", "Base64String", "BigInt"}
    seen: set[str] = set()
    for where, arg in _arguments_of(github.schema):
        named = get_named_type(arg.type).name
        if named in custom:
            seen.add(named)
            assert dialect.object_argument(arg, where.rsplit(".", 1)[-1]) is None, where
            assert not dialect.takes_handle(arg), where
    assert {"GitObjectID", "URI", "GitSSHRemote", "X509Certificate"} <= seen


@pytest.mark.public_schemas
def test_github_create_commit_on_branch_takes_a_raw_sha(github: Any) -> None:
    from dagtools.calls._arguments import bind_arguments
    from dagtools.registry._registry import Registry

    tool = github.tool("Mutation_createCommitOnBranch")
    defs = tool.parameters["$defs"]
    oid = defs["CreateCommitOnBranchInput"]["properties"]["expectedHeadOid"]
    said = "The git commit oid expected at the head of the branch prior to the commit\nGitObjectID: A Git object ID."
    assert oid == {"type": "string", "description": said}
    assert "describeTools Mutation_createCommitOnBranch.input.fileChanges" in json.dumps(defs["FileChanges"])
    sha = "0123456789abcdef0123456789abcdef01234567"
    arguments = {
        "input": {
            "branch": {"repositoryNameWithOwner": "octo/hello", "branchName": "main"},
            "expectedHeadOid": sha,
            "message": {"headline": "Add a file"},
            "fileChanges": {"additions": [{"path": "README.md", "contents": "SGVsbG8="}]},
        }
    }
    bound = bind_arguments(github, Registry(), tool, arguments)
    assert bound.values == arguments  # every value as the model gave it: nothing there names an object


@pytest.mark.public_schemas
def test_github_scalars_are_described_from_their_name_and_description(github: Any) -> None:
    from dagtools.catalogue._scalars import scalar_kind

    names = ("Date", "DateTime", "GitTimestamp", "URI", "BigInt", "GitObjectID", "HTML")
    kinds = {name: scalar_kind(github.schema.get_type(name)) for name in names}
    assert kinds == {
        "Date": "date",
        "DateTime": "date-time",
        "GitTimestamp": "date-time",
        "URI": "string",
        "BigInt": "string",  # "encoded as a string"
        "GitObjectID": "string",
        "HTML": "string",
    }
    since = github.tool("Repository_issues").parameters["properties"]["filterBy"]["properties"]["since"]
    assert since["type"] == "string" and since["format"] == "date-time"
    spelled = github.renderer().type(github.schema.get_type("DateTime"))
    assert spelled["format"] == "date-time" and "2024-05-01T12:30:00Z" in spelled["description"]


@pytest.mark.public_schemas
async def test_github_node_with_a_type_n_not_held_is_refused(github: Any) -> None:
    from dagtools.executors._base import SchemaOnlyExecutor

    session = Session(github, SchemaOnlyExecutor())
    session.select(["Query_node"])
    result = await session.call_tool(ToolCall(name="Query_node", arguments={"id": "Issue#1"}))
    assert result.is_error
    assert "this session holds no Issue yet, so nothing was sent" in result.value["error"]
    assert "Repository_issue" in result.value["error"] or "Query_" in result.value["error"]


@pytest.mark.public_schemas
def test_dagger_typed_ids_still_take_handles() -> None:
    from dagtools import compile_catalogue
    from tests.conftest import load_shared

    catalogue = compile_catalogue(load_shared("dagger-v0.19.11.graphqls").schema)
    with_exec = catalogue.arguments(catalogue.ref("Container_withDirectory"))
    assert catalogue.dialect.object_argument(with_exec["source"], "source") == "Directory"
    assert "Directory#1" in json.dumps(catalogue.tool("Container_withDirectory").parameters["properties"]["source"])
