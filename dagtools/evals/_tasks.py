"""Task files: what to ask, on which API, and how to tell that an attempt succeeded.

    source: ../kitchen/api.py:schema        # default for every task; paths are relative to the file,
                                             # $NAME reads an environment variable (a URL)
    mutations: false                         # or true, or a list of mutation names
    tasks:
      - name: fries
        prompt: Bake me some french fries.
        inputs:  {potato: {field: potato, description: ...}}     # as in a `dagtools call` script
        outputs: {fries: {type: Plate, description: ...}}
        checks:
          outputs:                           # on the saved outputs
            fries: {handle: Plate}           # a Type#N of this type (or one that implements it)
            count: {equals: 3}               # or {type: integer}, {contains: "text"}
          state:                             # on the API after the run: a read-only query
            - query: "{ plate { fries { id } } }"
              expect: {plate: {fries: null}}  # a subset of `data`, as a script's `expect`

A file may also be one task (its keys at the top level, `name` defaulting to the file's name).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import ConfigError, ToolCallError
from .._yaml import Key, read_data
from ..load._kinds import is_url
from ._query import operation_kind

__all__ = [
    "CHECK_KEYS",
    "FILE_KEYS",
    "MAX_STEPS",
    "OUTPUT_CHECK_KEYS",
    "STATE_CHECK_KEYS",
    "TASK_KEYS",
    "EvalTask",
    "OutputCheck",
    "StateCheck",
    "find_task",
    "load_tasks",
]

_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "list": list,
    "object": dict,
}
_SOURCE = Key(
    "string",
    "required",
    "The API: a schema file or `path/to/api.py:attribute` (relative to the task file), a URL, or `$NAME` to read the URL "
    "from an environment variable.",
)
_MUTATIONS = Key("boolean or list of mutation names", "false", "Which mutations the model may call: none, all, or those named.")
#: The most model turns an attempt takes where its task gives no max_steps.
MAX_STEPS = 30
_MAX_STEPS = Key("positive integer", str(MAX_STEPS), "The most model turns an attempt may take before it is counted a failure.")
#: The keys of a task, in a file's `tasks` list or at the top level of a file that is one task.
TASK_KEYS: dict[str, Key] = {
    "name": Key("string", "the file's name (a one-task file)", "The task's name in the report; unique within a file."),
    "source": _SOURCE,
    "prompt": Key("string", "required", "What the model is asked to do."),
    "mutations": _MUTATIONS,
    "inputs": Key(
        "mapping of name to {field, description} or {value, description}", "{}", "What the attempt starts with, as in a call script."
    ),
    "outputs": Key("mapping of name to {type, description}", "{}", "What the model must hand back with `save`, as in a call script."),
    "checks": Key("mapping with `outputs` and/or `state` (below)", "{}", "How to tell that an attempt succeeded."),
    "max_steps": _MAX_STEPS,
}
#: The keys at the top level of a file of several tasks; source, mutations and max_steps are every task's defaults.
FILE_KEYS: dict[str, Key] = {
    "tasks": Key("non-empty list of tasks", "required", "The tasks; without this key the file is one task."),
    "source": Key("string", "none", "Every task's `source` unless it gives its own."),
    "mutations": Key("boolean or list of mutation names", "false", "Every task's `mutations` unless it gives its own."),
    "max_steps": Key("positive integer", str(MAX_STEPS), "Every task's `max_steps` unless it gives its own."),
}
#: The keys of a task's `checks`.
CHECK_KEYS: dict[str, Key] = {
    "outputs": Key("mapping of declared output name to an output check", "{}", "Checks on what the model saved."),
    "state": Key("list of state checks", "[]", "Read-only queries run on the API after the attempt."),
}
#: The keys of one check in `checks.outputs`; give at least one.
OUTPUT_CHECK_KEYS: dict[str, Key] = {
    "equals": Key("any JSON value", "none", "The output must be exactly this value."),
    "type": Key("string, integer, number, boolean, list or object", "none", "The output must be a value of this JSON type."),
    "handle": Key("object type name", "none", "The output must be a handle `Type#N` of this type, or of one that implements it."),
    "contains": Key("string", "none", "The output, as text, must contain this text."),
}
#: The keys of one check in `checks.state`.
STATE_CHECK_KEYS: dict[str, Key] = {
    "query": Key("GraphQL query", "required", "A read-only query run on the API after the attempt (a mutation is refused)."),
    "variables": Key("mapping", "{}", "The query's variables."),
    "expect": Key("any JSON value", "required", "What the answer's `data` must contain, matched as a call script's `expect`."),
}


@dataclass(frozen=True, kw_only=True)
class OutputCheck:
    """What one saved output must be: equal to a value, of a JSON type, a handle of a type, or hold a text."""

    output: str
    equals: Any = None
    has_equals: bool = False
    type: str | None = None
    handle: str | None = None
    contains: str | None = None


@dataclass(frozen=True, kw_only=True)
class StateCheck:
    """A read-only query run after the attempt, whose `data` must contain `expect`."""

    query: str
    variables: dict[str, Any] = field(default_factory=dict)
    expect: Any = None


@dataclass(frozen=True, kw_only=True)
class EvalTask:
    name: str
    source: str
    prompt: str
    mutations: bool | list[str] = False
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    output_checks: tuple[OutputCheck, ...] = ()
    state_checks: tuple[StateCheck, ...] = ()
    max_steps: int | None = None
    origin: str = ""


def load_tasks(path: str | Path) -> list[EvalTask]:
    """Every task of a task file, checked before any attempt runs."""
    path = Path(path)
    data = read_data(path, "Task file")
    if not isinstance(data, Mapping):
        raise ConfigError(f"Task file {path} must be a mapping: `tasks: [...]` with a `source`, or one task.")
    defaults = {k: data[k] for k in set(FILE_KEYS) - {"tasks"} if k in data}
    if "tasks" in data:
        extra = set(data) - set(FILE_KEYS)
        if extra:
            raise ConfigError(f"Task file {path} has unknown keys {sorted(extra)}; use {', '.join(FILE_KEYS)}.")
        items = data["tasks"]
        if not isinstance(items, list) or not items:
            raise ConfigError(f"Task file {path}: tasks must be a non-empty list.")
    else:
        items = [{"name": path.stem, **data}]
    tasks = [_task(path, index, {**defaults, **item} if isinstance(item, Mapping) else item) for index, item in enumerate(items)]
    names = [t.name for t in tasks]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise ConfigError(f"Task file {path} names {', '.join(doubled)} more than once; give each task its own name.")
    return tasks


def find_task(path: str | Path, name: str | None) -> EvalTask:
    """The task named `name` in a task file (the only one, where the file holds one and no name is given)."""
    tasks = load_tasks(path)
    if name is None:
        if len(tasks) == 1:
            return tasks[0]
        raise ConfigError(f"{path} holds {len(tasks)} tasks; name one with --task ({', '.join(t.name for t in tasks)}).")
    for task in tasks:
        if task.name == name:
            return task
    raise ConfigError(f"{path} has no task {name!r}; its tasks are {', '.join(t.name for t in tasks)}.")


def _task(path: Path, index: int, item: Any) -> EvalTask:
    where = f"Task file {path}, task {index + 1}"
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where} must be a mapping with name, prompt, outputs and checks.")
    extra = set(item) - set(TASK_KEYS)
    if "calls" in extra:  # a `dagtools call` script: what a model did, not what it is asked to do
        raise ConfigError(
            f"{where} has calls: it reads as a call script, not a task. A task says what to do (name, source, prompt, "
            f"outputs, checks); replay a script with `dagtools call SCHEMA {path}`, or let it stand in for a model "
            f"with --model script:FOLDER (FOLDER/TASK/MODE.yaml)."
        )
    if extra:
        raise ConfigError(f"{where} has unknown keys {sorted(extra)}; use {', '.join(sorted(TASK_KEYS))}.")
    for key in ("name", "source", "prompt"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise ConfigError(f"{where} needs a `{key}` (text).")
    name = str(item["name"])
    where = f"Task file {path}, task {name}"
    mutations = item.get("mutations", False)
    if not isinstance(mutations, bool) and not (isinstance(mutations, list) and all(isinstance(m, str) for m in mutations)):
        raise ConfigError(f"{where}: mutations must be true, false or a list of mutation names.")
    inputs, outputs = item.get("inputs") or {}, item.get("outputs") or {}
    if not isinstance(inputs, Mapping) or not isinstance(outputs, Mapping):
        raise ConfigError(f"{where}: inputs and outputs must be mappings, as in a `dagtools call` script.")
    checks = item.get("checks") or {}
    if not isinstance(checks, Mapping) or set(checks) - set(CHECK_KEYS):
        raise ConfigError(f"{where}: checks must be a mapping with `outputs` and/or `state`.")
    output_checks = tuple(_output_check(where, name, spec, outputs) for name, spec in (checks.get("outputs") or {}).items())
    state_checks = tuple(_state_check(where, i, spec) for i, spec in enumerate(checks.get("state") or []))
    if not output_checks and not state_checks and not outputs:
        raise ConfigError(f"{where} has nothing to check: declare outputs, or add checks on the outputs or the API's state.")
    max_steps = item.get("max_steps")
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
        raise ConfigError(f"{where}: max_steps must be a positive integer.")
    return EvalTask(
        name=name,
        source=_source(path, str(item["source"])),
        prompt=str(item["prompt"]),
        mutations=mutations,
        inputs={str(k): dict(v) for k, v in inputs.items()},
        outputs=dict(outputs),
        output_checks=output_checks,
        state_checks=state_checks,
        max_steps=max_steps,
        origin=str(path),
    )


def _source(path: Path, source: str) -> str:
    """A file source (`api.py:schema`, `schema.graphql`) relative to the task file; URLs as they are;
    `$NAME` the value of that environment variable (an API's address differs between machines)."""
    if source.startswith("$"):
        name = source[1:].strip("{}")
        value = os.environ.get(name, "").strip()
        if not value:
            raise ConfigError(f"Task file {path}: the source is ${name}, which is not set; set it to the API's URL.")
        return value if is_url(value) else _source(Path.cwd() / "-", value)
    if is_url(source) or source == "dagger":
        return source
    file, sep, attribute = source.partition(".py:")
    candidate = path.parent / (file + ".py" if sep else source)
    if not candidate.exists():
        return source
    return f"{candidate.resolve().with_suffix('')}.py:{attribute}" if sep else str(candidate.resolve())


def _output_check(where: str, name: Any, spec: Any, outputs: Mapping[str, Any]) -> OutputCheck:
    if name not in outputs:
        raise ConfigError(f"{where}: checks.outputs names {name!r}, which is not a declared output ({', '.join(outputs) or 'none'}).")
    if not isinstance(spec, Mapping) or not spec or set(spec) - set(OUTPUT_CHECK_KEYS):
        raise ConfigError(f"{where}: the check on output {name} takes equals, type, handle or contains.")
    kind = spec.get("type")
    if kind is not None and kind not in _TYPES:
        raise ConfigError(f"{where}: output {name}'s type must be one of {', '.join(_TYPES)}, not {kind!r}.")
    return OutputCheck(
        output=str(name),
        equals=spec.get("equals"),
        has_equals="equals" in spec,
        type=kind,
        handle=str(spec["handle"]) if "handle" in spec else None,
        contains=str(spec["contains"]) if "contains" in spec else None,
    )


def _state_check(where: str, index: int, spec: Any) -> StateCheck:
    if not isinstance(spec, Mapping) or not isinstance(spec.get("query"), str) or "expect" not in spec:
        raise ConfigError(f"{where}: state check {index + 1} needs a `query` and an `expect`.")
    if set(spec) - set(STATE_CHECK_KEYS):
        unknown = ", ".join(sorted(set(spec) - set(STATE_CHECK_KEYS)))
        raise ConfigError(f"{where}: state check {index + 1} has unknown keys {unknown}; use {', '.join(STATE_CHECK_KEYS)}.")
    try:
        kind = operation_kind(spec["query"])
    except ToolCallError as error:
        raise ConfigError(f"{where}: state check {index + 1}: {error}") from None
    if kind != "query":
        raise ConfigError(f"{where}: state check {index + 1} is a {kind}; a check only reads, so write a query.")
    variables = spec.get("variables") or {}
    if not isinstance(variables, Mapping):
        raise ConfigError(f"{where}: state check {index + 1}: variables must be a mapping.")
    return StateCheck(query=spec["query"], variables=dict(variables), expect=spec["expect"])


def type_problem(check: OutputCheck, value: Any) -> str | None:
    """Why `value` fails the JSON type of `check`, if it does."""
    if check.type is None:
        return None
    expected = _TYPES[check.type]
    if isinstance(value, bool) and check.type in ("integer", "number"):
        return f"is not {check.type}"
    return None if isinstance(value, expected) else f"is not {'an' if check.type[0] in 'aeiou' else 'a'} {check.type}"
