"""load_schema: every kind of source, lenient repair of published schemas, and the error messages."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Awaitable
from functools import cache
from pathlib import Path

import pytest
import strawberry
from graphql import (
    GraphQLSchema,
    build_schema,
    execute,
    experimental_execute_incrementally,
    get_introspection_query,
    graphql_sync,
    introspection_from_schema,
    parse,
    print_schema,
)

from dagtools._errors import SchemaLoadError
from dagtools.load._sources import LoadedSchema, load_schema, schema_fingerprint
from dagtools.load._warm_start import load_cached
from tests.conftest import shared_schema_names, shared_schema_path

SMALL_SDL = """
type Query {
  hello(name: String = "world"): String
  count: Int!
}
"""


@strawberry.type
class Query:
    @strawberry.field
    def hello(self, name: str = "world") -> str:
        return f"Hello {name}"


STRAWBERRY_SCHEMA = strawberry.Schema(query=Query)


@cache
def load_shared(name: str) -> LoadedSchema:
    """Each public schema is built once per test session: the big ones take about a second."""
    return load_schema(shared_schema_path(name))


def typename(schema: GraphQLSchema) -> dict:
    """Run `{ __typename }`; graphql-core's plain execute refuses schemas that declare @defer or @stream."""
    document = parse("{ __typename }")
    if schema.get_directive("defer") or schema.get_directive("stream"):
        result = experimental_execute_incrementally(schema, document)
    else:
        result = execute(schema, document)
    assert not isinstance(result, Awaitable) and result.errors is None, result
    return result.data


def small_introspection() -> dict:
    return introspection_from_schema(build_schema(SMALL_SDL))


# --- the public schemas -----------------------------------------------------------------------


@pytest.mark.parametrize("name", shared_schema_names())
def test_every_shared_schema_loads(name: str) -> None:
    loaded = load_shared(name)
    assert loaded.schema.query_type is not None
    assert loaded.origin == str(shared_schema_path(name))
    assert all(isinstance(w, str) and w for w in loaded.warnings)
    assert loaded.strawberry_schema is None
    # Lenient schemas must stay executable even when graphql-core found problems in them.
    assert typename(loaded.schema) == {"__typename": loaded.schema.query_type.name}


@pytest.mark.public_schemas
def test_github_sdl_lenient_keeps_the_first_of_a_repeated_field() -> None:
    loaded = load_shared("github.schema.graphql")
    assert "EnterpriseOwnerInfo.repositoryDeployKeySetting is defined twice; kept the first definition" in loaded.warnings
    assert "repositoryDeployKeySetting" in loaded.schema.get_type("EnterpriseOwnerInfo").fields
    result = graphql_sync(loaded.schema, "{ __typename }")
    assert result.errors is None
    assert result.data == {"__typename": "Query"}


@pytest.mark.public_schemas
def test_github_sdl_strict_names_the_repeated_field() -> None:
    path = shared_schema_path("github.schema.graphql")
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(path, lenient=False)
    message = str(raised.value)
    assert str(path) in message
    assert "EnterpriseOwnerInfo.repositoryDeployKeySetting" in message
    assert re.search(r"github\.schema\.graphql:\d+:\d+: Field 'EnterpriseOwnerInfo\.repositoryDeployKeySetting'", message)
    assert "lenient=True" in message


@pytest.mark.public_schemas
def test_github_introspection_validation_errors_become_warnings() -> None:
    loaded = load_shared("github.schema.json")
    assert any("must not be deprecated" in w for w in loaded.warnings)
    with pytest.raises(SchemaLoadError, match="must not be deprecated"):
        load_schema(shared_schema_path("github.schema.json"), lenient=False)


# --- introspection results --------------------------------------------------------------------


@pytest.mark.parametrize("wrap", [lambda i: i, lambda i: {"data": i}], ids=["bare", "data-wrapped"])
def test_introspection_dict_in_both_wrappings(wrap) -> None:
    loaded = load_schema(wrap(small_introspection()))
    assert loaded.origin == "introspection result"
    assert loaded.warnings == ()
    assert set(loaded.schema.query_type.fields) == {"hello", "count"}


@pytest.mark.parametrize("wrap", [lambda i: i, lambda i: {"data": i}], ids=["bare", "data-wrapped"])
def test_introspection_json_file_in_both_wrappings(tmp_path: Path, wrap) -> None:
    path = tmp_path / "api.json"
    path.write_text(json.dumps(wrap(small_introspection())))
    loaded = load_schema(path)
    assert loaded.origin == str(path)
    assert set(loaded.schema.query_type.fields) == {"hello", "count"}
    assert load_schema(str(path)).origin == str(path)


def test_introspection_response_with_partial_errors_warns() -> None:
    loaded = load_schema({"data": small_introspection(), "errors": [{"message": "field x is private"}]})
    assert loaded.warnings == ("the introspection response also carried errors: field x is private",)


# --- text and files ---------------------------------------------------------------------------


def test_sdl_string() -> None:
    loaded = load_schema(SMALL_SDL)
    assert loaded.origin == "SDL string"
    assert loaded.warnings == ()
    assert graphql_sync(loaded.schema, "{ __typename }").data == {"__typename": "Query"}


def test_json_string() -> None:
    loaded = load_schema(json.dumps({"data": small_introspection()}))
    assert loaded.origin == "introspection JSON string"
    assert set(loaded.schema.query_type.fields) == {"hello", "count"}


@pytest.mark.parametrize("suffix", [".graphql", ".graphqls", ".gql", ".sdl", ".txt"])
def test_sdl_file_any_extension(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"api{suffix}"
    path.write_text(SMALL_SDL)
    assert set(load_schema(path).schema.query_type.fields) == {"hello", "count"}


def test_file_content_is_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "api.graphql"  # holds JSON despite its name
    path.write_text(json.dumps(small_introspection()))
    assert set(load_schema(path).schema.query_type.fields) == {"hello", "count"}


# --- lenient repair ---------------------------------------------------------------------------


REPEATED_SDL = """
type Query {
  a: Int
  a: String
  b(x: Int, x: String): Int
  e: Color
}
type Query { z: Int }
enum Color { RED RED GREEN }
input Filter { on: Boolean on: Boolean on: Int }
interface Named { name: String name: String }
directive @tag(name: String, name: Int) on FIELD_DEFINITION
directive @tag on OBJECT
extend type Query { a: Int, c: Int }
"""


def test_lenient_repair_drops_every_kind_of_repeat() -> None:
    loaded = load_schema(REPEATED_SDL)
    assert loaded.warnings == (
        "Query.a is defined 3 times; kept the first definition",
        "Query.b(x:) is defined twice; kept the first definition",
        "type Query is defined twice; kept the first definition",
        "Color.RED is defined twice; kept the first definition",
        "Filter.on is defined 3 times; kept the first definition",
        "Named.name is defined twice; kept the first definition",
        "@tag(name:) is defined twice; kept the first definition",
        "@tag is defined twice; kept the first definition",
    )
    schema = loaded.schema
    query = schema.query_type
    assert list(query.fields) == ["a", "b", "e", "c"]
    assert str(query.fields["a"].type) == "Int"
    assert str(query.fields["b"].args["x"].type) == "Int"
    assert list(schema.get_type("Color").values) == ["RED", "GREEN"]
    assert str(schema.get_type("Filter").fields["on"].type) == "Boolean"
    assert [str(loc) for loc in schema.get_directive("tag").locations] == ["DirectiveLocation.FIELD_DEFINITION"]


def test_strict_mode_lists_every_repeat_with_its_position() -> None:
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(REPEATED_SDL, lenient=False)
    message = str(raised.value)
    assert "SDL string:3:3: Field 'Query.a' can only be defined once." in message
    assert "Enum value 'Color.RED' can only be defined once." in message


def test_unrepairable_sdl_still_fails_with_positions() -> None:
    with pytest.raises(SchemaLoadError) as raised:
        load_schema("type Query { a: Missing a: Int }")
    assert str(raised.value) == (
        "SDL string cannot be built into a schema:\n  SDL string:1:17: Unknown type 'Missing'.\nFix the SDL at these places."
    )


def test_tolerable_sdl_errors_become_warnings() -> None:
    loaded = load_schema("type Query { a: Int @unknown }")
    assert loaded.warnings == ("Unknown directive '@unknown'. (line 1, column 21)",)
    with pytest.raises(SchemaLoadError, match=r"SDL string:1:21: Unknown directive '@unknown'\."):
        load_schema("type Query { a: Int @unknown }", lenient=False)


def test_invalid_graphql_schema_object_is_tolerated_only_when_lenient() -> None:
    sdl = "type Query { a: I } interface I { x: Int } type T implements I { y: Int }"
    warned = load_schema(build_schema(sdl, assume_valid_sdl=True))
    assert warned.warnings == ("Interface field I.x expected but T does not provide it. (line 1, column 35)",)
    assert graphql_sync(warned.schema, "{ __typename }").errors is None
    expected = r"GraphQLSchema is not a valid schema:\n  GraphQLSchema:1:35: Interface field I.x"
    with pytest.raises(SchemaLoadError, match=expected):
        load_schema(build_schema(sdl, assume_valid_sdl=True), lenient=False)


# --- Python objects ---------------------------------------------------------------------------


def test_graphql_schema_object() -> None:
    schema = build_schema(SMALL_SDL)
    loaded = load_schema(schema)
    assert loaded.schema is schema
    assert loaded.origin == "GraphQLSchema"
    assert loaded.strawberry_schema is None


def test_strawberry_schema_object() -> None:
    loaded = load_schema(STRAWBERRY_SCHEMA)
    assert loaded.origin == "strawberry Schema"
    assert loaded.strawberry_schema is STRAWBERRY_SCHEMA
    assert loaded.schema is STRAWBERRY_SCHEMA._schema
    assert graphql_sync(loaded.schema, '{ hello(name: "you") }').data == {"hello": "Hello you"}


def test_loaded_schema_is_returned_as_is() -> None:
    loaded = load_schema(SMALL_SDL)
    assert load_schema(loaded) is loaded


# --- path/to/file.py:attribute ----------------------------------------------------------------


def write(path: Path, code: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(code))
    return path


STRAWBERRY_FILE = """
    import strawberry

    @strawberry.type
    class Query:
        @strawberry.field
        def ping(self) -> str:
            return "pong"

    schema = strawberry.Schema(query=Query)

    class Holder:
        inner = schema
"""


def test_python_file_with_a_strawberry_schema(tmp_path: Path) -> None:
    path = write(tmp_path / "api.py", STRAWBERRY_FILE)
    loaded = load_schema(f"{path}:schema")
    assert loaded.origin == f"{path}:schema"
    assert type(loaded.strawberry_schema).__name__ == "Schema"
    assert loaded.schema is loaded.strawberry_schema._schema
    assert graphql_sync(loaded.schema, "{ ping }").data == {"ping": "pong"}
    # A dotted attribute reaches into objects of the module.
    assert load_schema(f"{path}:Holder.inner").origin == f"{path}:Holder.inner"


def test_python_file_with_a_callable(tmp_path: Path) -> None:
    path = write(
        tmp_path / "factory.py",
        f"""
        from graphql import build_schema

        def make_schema():
            return build_schema({SMALL_SDL!r})

        def make_introspection():
            from graphql import introspection_from_schema
            return introspection_from_schema(make_schema())

        SDL = {SMALL_SDL!r}
        """,
    )
    for attribute in ("make_schema", "make_introspection", "SDL"):
        loaded = load_schema(f"{path}:{attribute}")
        assert loaded.origin == f"{path}:{attribute}"
        assert set(loaded.schema.query_type.fields) == {"hello", "count"}
        assert loaded.strawberry_schema is None


def test_python_file_schema_problems_name_the_attribute(tmp_path: Path) -> None:
    path = write(
        tmp_path / "api.py",
        """
        from graphql import build_schema

        schema = build_schema(
            "type Query { a: I } interface I { x: Int } type T implements I { y: Int }", assume_valid_sdl=True
        )
        """,
    )
    assert load_schema(f"{path}:schema").warnings == ("Interface field I.x expected but T does not provide it. (line 1, column 35)",)
    with pytest.raises(SchemaLoadError, match=rf"^{re.escape(str(path))}:schema is not a valid schema:\n"):
        load_schema(f"{path}:schema", lenient=False)


def test_python_file_inside_a_package_can_use_relative_imports(tmp_path: Path) -> None:
    package = f"schemapkg_{tmp_path.name}"
    write(tmp_path / package / "__init__.py", "")
    write(tmp_path / package / "types.py", "SDL = 'type Query { relative: Int }'\n")
    path = write(
        tmp_path / package / "api.py",
        """
        from graphql import build_schema
        from .types import SDL

        schema = build_schema(SDL)
        """,
    )
    assert list(load_schema(f"{path}:schema").schema.query_type.fields) == ["relative"]


def test_python_file_is_imported_afresh_under_a_stable_name(tmp_path: Path) -> None:
    code = "from graphql import build_schema\nschema = build_schema('type Query { %s: Int }')\n"
    path = write(tmp_path / "api.py", code % "a")
    first = load_schema(f"{path}:schema")
    write(path, code % "b")
    second = load_schema(f"{path}:schema")
    assert list(first.schema.query_type.fields) == ["a"]
    assert list(second.schema.query_type.fields) == ["b"]


# --- errors -----------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.graphql"
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(str(missing))
    assert str(raised.value) == (
        f"Schema file {str(missing)!r} does not exist (looked in {tmp_path}). "
        "Check the path, or pass SDL text or an introspection result instead."
    )
    with pytest.raises(SchemaLoadError, match="does not exist. Check the path."):
        load_schema(missing)


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(SchemaLoadError, match="is a directory. Pass the path of an SDL or introspection JSON file."):
        load_schema(tmp_path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.graphql"
    path.write_text("\n")
    with pytest.raises(SchemaLoadError, match=r"empty\.graphql is empty\. Expected SDL"):
        load_schema(path)


def test_invalid_json_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"data": {"__schema": ')
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(path)
    message = str(raised.value)
    assert message.startswith(f"{path} is not valid JSON (line 1, column 23: Expecting value).")
    assert "Expected an introspection result" in message


def test_json_that_is_not_an_introspection_result(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"name": "not a schema", "version": 2}')
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(path)
    assert str(raised.value) == (
        f"{path} is JSON but not an introspection result (top-level keys: 'name', 'version'). "
        'Expected {"data": {"__schema": ...}} or {"__schema": ...}, the answer to the introspection query.'
    )
    path.write_text("[1, 2]")
    with pytest.raises(SchemaLoadError, match="other.json holds a JSON list, not an introspection result"):
        load_schema(path)


def test_failed_introspection_response() -> None:
    with pytest.raises(SchemaLoadError) as raised:
        load_schema({"data": None, "errors": [{"message": "introspection is disabled"}]})
    assert str(raised.value) == (
        "introspection result is an introspection response that failed: introspection is disabled. "
        "Fix the request (authentication, introspection enabled on the server) and fetch it again."
    )


def test_truncated_introspection_result() -> None:
    with pytest.raises(SchemaLoadError, match=r"not a usable introspection result: it lacks the key 'types'\. Re-run"):
        load_schema({"__schema": {"queryType": {"name": "Query"}}})


def test_sdl_syntax_error_gives_line_and_column() -> None:
    with pytest.raises(SchemaLoadError) as raised:
        load_schema("type Query {\n  a: Int\n  b Int\n}")
    assert str(raised.value) == (
        "SDL string is not valid SDL at line 3, column 5: Syntax Error: Expected ':', found Name 'Int'. "
        "Fix the syntax there, or pass an introspection JSON file instead."
    )


def test_sdl_file_syntax_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "api.graphql"
    path.write_text("type Query {\n  a: Int\n")
    with pytest.raises(SchemaLoadError, match=rf"^{re.escape(str(path))} is not valid SDL at line 3, column 1: "):
        load_schema(path)


def test_python_file_without_the_attribute(tmp_path: Path) -> None:
    path = write(tmp_path / "api.py", STRAWBERRY_FILE)
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(f"{path}:schmea")
    assert str(raised.value) == (
        f"Cannot load {path}:schmea: {path} has no attribute 'schmea' ('schmea' is missing). "
        f"Schemas it defines: schema. Name a module-level schema, e.g. '{path}:schema'."
    )


def test_python_attribute_of_the_wrong_kind(tmp_path: Path) -> None:
    path = write(tmp_path / "api.py", STRAWBERRY_FILE + "\n    NUMBER = 3\n")
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(f"{path}:NUMBER")
    assert str(raised.value) == (
        f"Cannot load {path}:NUMBER: 'NUMBER' is an int, not a schema. It must be a strawberry.Schema, a graphql "
        "GraphQLSchema, an introspection result dict, SDL text, or a zero-argument function returning one of these."
    )
    with pytest.raises(SchemaLoadError, match="'Query' is the class Query, not a schema"):
        load_schema(f"{path}:Query")


def test_python_callable_that_needs_arguments_or_fails(tmp_path: Path) -> None:
    path = write(
        tmp_path / "api.py",
        """
        def needs(x):
            return x

        def broken():
            raise RuntimeError("database is down")
        """,
    )
    with pytest.raises(SchemaLoadError, match=r"api\.py:needs: it is a function that needs arguments\."):
        load_schema(f"{path}:needs")
    with pytest.raises(SchemaLoadError, match=r"api\.py:broken: calling it raised RuntimeError: database is down$"):
        load_schema(f"{path}:broken")


def test_python_file_that_fails_to_import(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.py", "import not_a_module_anywhere_12345\n")
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(f"{path}:schema")
    assert str(raised.value) == (
        f"Cannot load {path}:schema: importing bad.py raised ModuleNotFoundError: No module named 'not_a_module_anywhere_12345'"
    )
    write(path, "schema = (\n")
    with pytest.raises(SchemaLoadError, match=r"importing bad\.py raised SyntaxError: .*\(bad\.py, line 1\)$"):
        load_schema(f"{path}:schema")


def test_python_file_missing(tmp_path: Path) -> None:
    with pytest.raises(SchemaLoadError, match=r"Python file '.*gone\.py' does not exist"):
        load_schema(f"{tmp_path / 'gone.py'}:schema")


def test_python_file_without_attribute_suffix(tmp_path: Path) -> None:
    path = write(tmp_path / "api.py", STRAWBERRY_FILE)
    expected = rf"is a Python file: name the schema inside it as '{re.escape(str(path))}:attribute'"
    with pytest.raises(SchemaLoadError, match=expected):
        load_schema(str(path))


def test_url_that_does_not_answer(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a loopback port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/graphql"
    with pytest.raises(SchemaLoadError, match=rf"^Cannot load the schema of {re.escape(url)}: .*could not be reached"):
        load_schema(url, cache_dir=tmp_path, timeout=2)


def test_unsupported_source_type() -> None:
    with pytest.raises(SchemaLoadError, match=r"^Cannot load a schema from an int\. Pass a GraphQLSchema"):
        load_schema(42)


# --- fingerprint ------------------------------------------------------------------------------


def test_schema_fingerprint() -> None:
    first = schema_fingerprint(build_schema(SMALL_SDL))
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert schema_fingerprint(load_schema(SMALL_SDL).schema) == first
    assert schema_fingerprint(load_schema({"data": small_introspection()}).schema) == first
    assert schema_fingerprint(build_schema("type Query { other: Int }")) != first


def test_introspection_query_runs_on_a_loaded_schema() -> None:
    loaded = load_schema(STRAWBERRY_SCHEMA)
    result = graphql_sync(loaded.schema, get_introspection_query())
    assert result.errors is None
    assert isinstance(load_schema(result.data).schema, GraphQLSchema)
    assert print_schema(load_schema(result.data).schema) == print_schema(loaded.schema)


@pytest.mark.parametrize("word", ["kitchen", "swapi", "schema.graphq"])
def test_a_bare_word_is_looked_for_as_a_file_not_read_as_schema_text(word, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SchemaLoadError, match=rf"Schema file '{word}' does not exist") as raised:
        load_schema(word)
    assert "SDL" not in str(raised.value).split("Check the path")[0]


@pytest.mark.parametrize(
    ("source", "meant"),
    [
        ("htp://api.example.com/graphql", "http://api.example.com/graphql"),
        ("htps://api.example.com/graphql", "https://api.example.com/graphql"),
        ("ws://127.0.0.1:4000/graphql", "http://127.0.0.1:4000/graphql"),
        ("file:///srv/api/schema.graphql", "/srv/api/schema.graphql"),
    ],
)
def test_an_address_dagtools_cannot_read_suggests_the_one_it_can(source, meant):
    with pytest.raises(SchemaLoadError, match="is not an address dagtools can read") as raised:
        load_schema(source)
    assert str(raised.value).endswith(f"Did you mean {meant}?")


@pytest.mark.parametrize(
    ("source", "meant"),
    [
        ("127.0.0.1:8000/graphql", "http://127.0.0.1:8000/graphql"),
        ("localhost:4000", "http://localhost:4000"),
        ("[::1]:8080/graphql", "http://[::1]:8080/graphql"),
        ("api.github.com/graphql", "https://api.github.com/graphql"),
        ("countries.example.org:8443/gql", "http://countries.example.org:8443/gql"),
    ],
)
def test_an_address_written_without_its_scheme_suggests_the_url(source, meant, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no such file here, so it can only be an address
    with pytest.raises(SchemaLoadError, match="a URL starts with http:// or https://") as raised:
        load_schema(source)
    assert str(raised.value).endswith(f"Did you mean {meant}?")


@pytest.mark.parametrize("source", ["schemas/github.graphql", "github.graphql", "kitchen"])
def test_a_missing_file_is_still_called_a_missing_file(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SchemaLoadError, match="does not exist") as raised:
        load_schema(source)
    assert "Did you mean" not in str(raised.value)


@pytest.mark.parametrize("name", ["mcp.yaml", "fries.YML"])
def test_a_yaml_file_given_as_the_schema_says_where_it_goes(name, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGTOOLS_CACHE_DIR", str(tmp_path / "cache"))
    # `dagtools mcp mcp.yaml` without --config, or a call script in the schema's place: YAML is never
    # a schema, so the message says where such a file goes instead of reporting an SDL syntax error.
    path = tmp_path / name
    path.write_text("source: api.py:schema\ntools: fixed\n")
    for load in (load_schema, load_cached):  # dagtools mcp reads files through the compiled cache
        with pytest.raises(SchemaLoadError) as raised:
            load(str(path))
        said = str(raised.value)
        assert "is a YAML file, not a schema" in said and f"dagtools mcp --config {path}" in said
        assert "Syntax Error" not in said


# --- what a slip in a schema file or its path is told ----------------------------------------


@pytest.mark.parametrize("lenient", [True, False])
def test_an_unknown_type_gets_the_names_meant_built_in_scalars_included(lenient: bool) -> None:
    sdl = "type Query { count: Integer, on: Bool, size: Long, name: Strng, things: [Thng] }\ntype Thing { id: ID }\n"
    with pytest.raises(SchemaLoadError) as raised:
        load_schema(sdl, lenient=lenient)
    said = str(raised.value)
    for line in (
        "Unknown type 'Integer'. Did you mean 'Int'?",
        "Unknown type 'Bool'. Did you mean 'Boolean'?",
        "Unknown type 'Long'. Did you mean 'Int'?",
        "Unknown type 'Strng'. Did you mean 'String'",  # graphql-core's own, kept as it was
        "Unknown type 'Thng'. Did you mean 'Thing'?",
    ):
        assert line in said, said
    assert said.count("Did you mean") == 5


def test_a_missing_schema_file_names_the_close_files_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "kitchen.graphql", "type Query { a: Int }")
    write(tmp_path / "api.py", "schema = 'type Query { a: Int }'")
    (tmp_path / "kitchen.graphql.d").mkdir()  # a folder is no file to suggest
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SchemaLoadError, match=r"does not exist \(looked in .*\)\. Did you mean kitchen\.graphql\? Check the path"):
        load_schema("kitchn.graphql")
    with pytest.raises(SchemaLoadError, match=r"Did you mean \./kitchen\.graphql\?"):
        load_schema("./kitchn.graphql")
    with pytest.raises(SchemaLoadError, match=rf"Did you mean {re.escape(str(tmp_path))}/api\.py\?"):
        load_schema(f"{tmp_path}/apj.py:schema")
    with pytest.raises(SchemaLoadError) as raised:
        load_schema("orders.graphql")
    assert "Did you mean" not in str(raised.value)
