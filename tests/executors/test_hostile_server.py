"""Whatever the API answers, every call ends in a result, and a call that fails changes nothing.

The corpus in tests/hostile.py spoils the kitchen API's answers one way per case: over real HTTP on
loopback (`HostileServer`), and handed straight to the session by an in-process executor that
returns what it decoded as is (a custom executor is free to, so `Response` and the answer checks
must cope on their own).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dagtools import ExecutorError, HttpExecutor, LocalExecutor, Response, ToolCall
from tests.hostile import CASES, Case, HostileServer
from tests.kitchen import kitchen_session, state

TOOLS = ["Query_potato", "Query_potatoes", "Query_oven", "Potato_peel", "Potato_variety", "Oven_temperature", "Oven_bake", "Sink_rinse"]
TOOLS += ["Plate_fries", "Potato_rinse"]
SINGLE = [
    ToolCall(name="Query_potato", arguments={"variety": "Yukon"}),
    ToolCall(name="Query_potatoes", arguments={}),
    ToolCall(name="Query_oven", arguments={}),
    ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}),
    ToolCall(name="Potato_variety", arguments={}),
    ToolCall(name="Oven_temperature", arguments={}),
    ToolCall(name="Oven_bake", arguments={"item": "Potato#1"}),
    ToolCall(name="Sink_rinse", arguments={"item": "Potato#1"}),
    ToolCall(name="Plate_fries", arguments={}),
    ToolCall(name="Potato_rinse", arguments={"sink": "Sink#1"}),
]
BATCH = [SINGLE[0], SINGLE[2], SINGLE[4], SINGLE[5], SINGLE[3]]


class CannedExecutor:
    """Runs the kitchen schema in process, spoils the answer as the case says, and returns what it
    decodes without normalising anything: `data` and `errors` go into `Response` as they came."""

    def __init__(self, schema: Any) -> None:
        self.inner = LocalExecutor(schema)
        self.case: Case | None = None

    async def execute(self, document: str, variables: dict[str, Any] | None = None, **options: Any) -> Response:
        honest = await self.inner.execute(document, variables, **options)
        if self.case is None:
            return honest
        answer: dict[str, Any] = {"data": honest.data}
        if honest.errors:
            answer["errors"] = honest.errors
        reply = self.case.spoil(answer)
        try:
            parsed = json.loads(reply.body)
        except ValueError as error:
            raise ExecutorError(f"not JSON: {error}") from None
        if not isinstance(parsed, dict):
            raise ExecutorError("not a GraphQL response")
        return Response(data=parsed.get("data"), errors=parsed.get("errors"))  # type: ignore[arg-type]

    async def aclose(self) -> None:
        return None


@pytest.fixture(scope="module")
def hostile():
    from examples.kitchen.api import schema

    with HostileServer(schema) as server:
        yield server


@pytest.fixture(params=["http", "executor"])
async def spoiled(request, hostile):
    """A kitchen session whose inputs were loaded honestly, and a function that sets the case."""
    from examples.kitchen.api import schema

    if request.param == "http":
        hostile.case = None
        executor: Any = HttpExecutor(hostile.url, retries=0, timeout=5.0)
        target: Any = hostile
    else:
        executor = target = CannedExecutor(schema)
    session = await kitchen_session(executor=executor)
    session.select(TOOLS)

    def use(case: Case | None) -> None:
        target.case = case

    yield session, use
    hostile.case = None
    await executor.aclose()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_hostile_answers_give_results_and_failed_calls_change_nothing(spoiled, case):
    session, use = spoiled
    use(case)
    errors = []
    for turn in [[call] for call in SINGLE] + [BATCH]:
        before = state(session)
        results = await session.call_tools(turn)
        assert [r.name for r in results] == [c.name for c in turn]
        for result in results:
            json.dumps(result.value, ensure_ascii=False).encode("utf-8")  # whatever is shown can be sent on
            if result.is_error:
                message = result.value["error"]
                assert isinstance(message, str) and message
                errors.append(message)
        if all(r.is_error for r in results):
            assert state(session) == before, (turn, results)
    if case.expect:
        assert any(case.expect in message for message in errors), errors
    use(None)
    assert not (await session.call_tool(ToolCall(name="Query_oven", arguments={}))).is_error  # the session still works


def test_the_corpus_is_large_and_named_uniquely():
    names = [case.name for case in CASES]
    assert len(set(names)) == len(names) >= 60
