"""The in-process executor prepares a document's operation and coerced variables once and reuses them:
every call still answers exactly what graphql-core's `execute()` answers for it, values a resolver
could change are coerced afresh each time, and a refused value is refused every time."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLScalarType, build_schema, execute, parse

from dagtools.executors._local import LocalExecutor

SDL = """
scalar Anything
scalar Bag
type Query {
  kind(value: Anything): String
  grow(items: [String!]!): [String!]!
  fill(bag: Bag!): String
  twice(n: Int!): Int
}
"""


def _schema() -> Any:
    schema = build_schema(SDL)
    bag = schema.type_map["Bag"]
    assert isinstance(bag, GraphQLScalarType)
    bag.coerce_input_value = lambda value: {"label": value}  # type: ignore[method-assign]  # a plain string coerced into an object a resolver can change
    query = schema.query_type
    assert query is not None

    def grow(_root: Any, _info: Any, items: list[str]) -> list[str]:
        items.append("more")  # a resolver that changes its argument in place
        return items

    def fill(_root: Any, _info: Any, bag: dict[str, Any]) -> str:
        bag.setdefault("count", 0)
        bag["count"] += 1
        return f"{bag['label']} {bag['count']}"

    query.fields["kind"].resolve = lambda _root, _info, value=None: type(value).__name__
    query.fields["grow"].resolve = grow
    query.fields["fill"].resolve = fill
    query.fields["twice"].resolve = lambda _root, _info, n: 2 * n
    return schema


async def test_values_equal_in_python_but_not_in_json_are_told_apart() -> None:
    executor = LocalExecutor(_schema())
    text = "query($v: Anything) { kind(value: $v) }"
    answers = [(await executor.execute(text, {"v": value})).data for value in (1, True, 1.0, "1", 1, True)]
    assert [a["kind"] for a in answers if a] == ["int", "bool", "float", "str", "int", "bool"]


async def test_a_resolver_that_changes_its_arguments_changes_no_later_call() -> None:
    executor = LocalExecutor(_schema())
    grow = "query($items: [String!]!) { grow(items: $items) }"
    for _ in range(3):
        assert (await executor.execute(grow, {"items": ["a"]})).data == {"grow": ["a", "more"]}
    fill = "query($bag: Bag!) { fill(bag: $bag) }"
    for _ in range(3):
        assert (await executor.execute(fill, {"bag": "box"})).data == {"fill": "box 1"}


async def test_every_call_answers_what_execute_answers() -> None:
    schema = _schema()
    executor = LocalExecutor(schema)
    text = "query($n: Int!) { twice(n: $n) }"
    for variables in ({"n": 2}, {"n": 3}, {"n": 2}, {"n": "x"}, {}, {"n": 2}):
        expected = execute(schema, parse(text), variable_values=variables)
        got = await executor.execute(text, variables)
        assert got.data == expected.data  # type: ignore[union-attr]
        assert [e["message"] for e in got.errors] == [e.message for e in expected.errors or ()]  # type: ignore[union-attr]
    refused = await executor.execute(text, {"n": "x"})
    assert refused.data is None and "Int cannot represent" in refused.errors[0]["message"]
