"""An error's `extensions` are read reasons first, echoes of the input last, whatever library wrote them.

The ranking reads the words of every key on a leaf's path, so these shapes, each as its library
sends it, rank alike with no list of libraries: class-validator through TypeGraphQL (`target` and
`value` before `constraints`), pydantic (`input` after `msg`, a docs `url`), zod (`received`), RFC
7807 problem details, Django's `params` (`value`), an echoed object holding its own `message`.
"""

from __future__ import annotations

from dagtools.calls._partial import FIRST_CUT, MESSAGE_CUT, shown_error
from dagtools.executors._base import format_error

REASON = "comment must be shorter than or equal to 280 characters"
COMMENT = "This workshop was wonderful, " * 11  # 319 characters


def class_validator(*, echoed: int = 1) -> dict:
    target = {"workshopId": "w1", "author": "Ada", "comment": COMMENT, **{f"extra{i}": i for i in range(echoed)}}
    return {
        "message": "Argument Validation Error",
        "path": ["addComment"],
        "extensions": {
            "code": "BAD_USER_INPUT",
            "validationErrors": [
                {"target": target, "value": COMMENT, "property": "comment", "children": [], "constraints": {"maxLength": REASON}}
            ],
        },
    }


def test_class_validators_constraint_leads_and_its_echo_comes_last() -> None:
    for budget in (FIRST_CUT, MESSAGE_CUT):
        shown = shown_error(class_validator(), budget=budget)
        assert REASON in shown, (budget, shown)
        assert len(shown) <= budget + 40
    full = shown_error(class_validator(), budget=FIRST_CUT)
    assert full.index(REASON) < full.index("property") < full.index("validationErrors[0].value")
    assert COMMENT not in full, "an echo is shown by its start, not in full again"


def test_the_reason_is_found_however_much_the_echo_before_it_holds() -> None:
    shown = shown_error(class_validator(echoed=5_000), budget=MESSAGE_CUT)
    assert REASON in shown, shown


def test_the_reason_survives_a_cap_too_small_for_its_path() -> None:
    shown = format_error(class_validator(), budget=130)
    assert 'maxLength: "comment must be shorter' in shown, shown


def test_pydantic_names_every_fields_reason_before_any_input_and_drops_its_docs_link() -> None:
    letter = "y" * 2_100
    error = {
        "message": "Invalid application",
        "extensions": {
            "validation_errors": [
                {
                    "type": "string_too_long",
                    "loc": ["cover_letter"],
                    "msg": "String should have at most 2000 characters",
                    "input": letter,
                    "ctx": {"max_length": 2000},
                    "url": "https://errors.pydantic.dev/2.14/v/string_too_long",
                },
                {
                    "type": "string_pattern_mismatch",
                    "loc": ["email"],
                    "msg": "String should match pattern '^[^@]+@[^@]+$'",
                    "input": "bo",
                    "ctx": {"pattern": "^[^@]+@[^@]+$"},
                    "url": "https://errors.pydantic.dev/2.14/v/string_pattern_mismatch",
                },
            ]
        },
    }
    shown = shown_error(error, budget=FIRST_CUT)
    assert "at most 2000 characters" in shown and "should match pattern" in shown, shown
    assert "pydantic.dev" not in shown and letter[:100] not in shown
    assert shown.index("should match pattern") < shown.index("validation_errors[0].input")


def test_other_shapes_rank_alike() -> None:
    zod = {
        "message": "Invalid input",
        "extensions": {
            "issues": [
                {"received": "x" * 300, "code": "too_big", "maximum": 280, "message": "String must contain at most 280 character(s)"}
            ]
        },
    }
    assert "String must contain at most 280" in shown_error(zod), shown_error(zod)
    problem = {
        "message": "Bad Request",
        "extensions": {
            "instance": "/comments/" + "9" * 300,
            "type": "about:blank",
            "title": "Too long",
            "detail": "The comment is 319 characters; the limit is 280.",
        },
    }
    shown = shown_error(problem)
    assert shown.index("Too long") < shown.index("type") and "the limit is 280" in shown, shown
    django = {
        "message": "Invalid",
        "extensions": {
            "comment": [
                {"params": {"value": COMMENT, "limit_value": 280}, "message": "Ensure this value has at most 280 characters (it has 319)."}
            ]
        },
    }
    assert "at most 280 characters (it has 319)" in shown_error(django), shown_error(django)


def test_an_echoed_object_is_an_echo_even_where_it_holds_a_message() -> None:
    error = {"message": "Refused", "extensions": {"input": {"message": "hello " * 40}, "reason": "Messages are closed on Sundays."}}
    shown = shown_error(error)
    assert shown.index("reason") < shown.index("input.message"), shown


def test_a_gateways_upstream_message_still_leads() -> None:
    error = {
        "message": "Upstream HTTP Error: 400",
        "extensions": {
            "request": {"body": "{}", "headers": {"x": "y"}},
            "http": {"status": 400},
            "response": {"body": {"message": "ride id must be a number"}},
        },
    }
    shown = shown_error(error)
    assert 'response.body.message: "ride id must be a number"' in shown and "headers" not in shown, shown
