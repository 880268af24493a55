"""Reading a shell line: words, values, the object by position, pipes, built-ins, and every line that
cannot be read said with what to write instead."""

from __future__ import annotations

import pytest

from dagtools.shell._parse import Builtin, LineError, Pipeline, ShellStep, parse_line, parse_value, split_words


def test_words_keep_quotes_and_brackets_and_split_on_pipes():
    line = 'Query_repository owner="the octo" name=hello | Repository_issues states=[OPEN, CLOSED] filter={"a b": 1}|Issue_author'
    assert split_words(line) == [
        "Query_repository",
        'owner="the octo"',
        "name=hello",
        "|",
        "Repository_issues",
        "states=[OPEN, CLOSED]",
        'filter={"a b": 1}',
        "|",
        "Issue_author",
    ]


def test_a_call_with_its_object_by_position_and_arguments():
    parsed = parse_line("Repository_issues Repository#1 first=5 states=[OPEN]")
    assert parsed == Pipeline(
        steps=(ShellStep(tool="Repository_issues", target="Repository#1", arguments={"first": 5, "states": ["OPEN"]}),)
    )


def test_a_pipe_is_one_pipeline_of_steps():
    parsed = parse_line("Query_repository owner=x name=y | Repository_issues first=5 | Issue_author")
    assert isinstance(parsed, Pipeline)
    assert [s.tool for s in parsed.steps] == ["Query_repository", "Repository_issues", "Issue_author"]
    assert parsed.steps[1].arguments == {"first": 5}


@pytest.mark.parametrize(
    ("raw", "schema", "value"),
    [
        ("5", {"type": "integer"}, 5),
        ("5", {"type": "string"}, "5"),  # a string parameter keeps the digits as text
        ("OPEN", {"type": "string", "enum": ["OPEN"]}, "OPEN"),
        ("true", None, True),
        ("hello", None, "hello"),
        ('"two words"', None, "two words"),
        ("'it''s'", None, "it''s"),
        ("'{not json}'", None, "{not json}"),
        ("[OPEN, CLOSED]", None, ["OPEN", "CLOSED"]),
        ('{minutes: 10, fan: true, note: "x y"}', None, {"minutes": 10, "fan": True, "note": "x y"}),
        ("[1.5e3, null]", None, [1500.0, None]),
        ("[number, author.login, labels.name]", None, ["number", "author.login", "labels.name"]),  # paths `fields` reads
        ("Potato#1", {"type": "string"}, "Potato#1"),
        # keys written bare in a list, as a model guesses them: anything that is no JSON number is a word
        ('[a1, agency-1, "Agency:1", 100, -1, 007, Potato#2]', None, ["a1", "agency-1", "Agency:1", 100, -1, "007", "Potato#2"]),
    ],
)
def test_values_are_read_as_the_parameter_says(raw, schema, value):
    assert parse_value(raw, schema) == value


def test_builtins_are_their_own_lines():
    assert parse_line("search who starred a repository") == Builtin(name="search", words=("who", "starred", "a", "repository"))
    assert parse_line("help") == Builtin(name="help")
    assert parse_line("   ") is None
    assert parse_line("# a comment") is None


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('Query_repository owner="octo', 'The " at column 24 is never closed'),
        ("Query_repository owner='octo", "The ' at column 24 is never closed"),
        ("Repository_issues states=[OPEN", "The [ at column 26 is never closed; close it with ]"),
        ("Repository_issues states=OPEN]", "A ] at column 30 closes nothing"),
        ('Oven_bake settings={"minutes": }', "The value of settings is not JSON"),
        ("Repository_issues first", "'first' is not an argument; write name=value"),
        ("Repository_issues first=1 first=2", "is given first twice"),
        ("Repository_issues Repository#1 Repository#2", "names two objects"),
        ("Query_repository owner=x | Repository_issues Repository#1", "after a |, a step acts on what the step before returned"),
        ("Query_repository owner=x |", "A | needs a call on each side"),
        ("owner=x", "is not a tool name"),
    ],
)
def test_a_line_that_cannot_be_read_says_what_to_write(line, said):
    with pytest.raises(LineError, match=None) as raised:
        parse_line(line)
    assert said in str(raised.value)


def test_a_line_too_long_is_refused_before_it_is_read():
    with pytest.raises(LineError, match="at most"):
        parse_line("Query_x a=" + "x" * 70_000)
