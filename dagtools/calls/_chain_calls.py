"""Chains: several field calls in one tool call and one request, each step on what the last one returned.

`[{"tool": "Query_starship", "arguments": {"starshipID": "10"}}, {"tool": "Starship_pilotConnection"},
{"tool": "Person_homeworld"}]` reads a starship, its pilots and each pilot's homeworld in ONE document:

    query($v0: ID) { starship(starshipID: $v0) { __typename id name ...
      pilotConnection { __typename pageInfo { ... } edges { node { __typename id name ... homeworld { __typename id name ... } } } } } }

A step over a list, or over a connection (walked as everywhere else), applies to each item. Every
step is checked before anything is sent (the tool exists, reads, is a field of what the step before
returns, its arguments bind), so a chain that fails there changes nothing. Every object on the way
is minted as a field call would mint it (re-rooted on identity, else reached by its own chain), so
any of them can be used next. The result follows the answer's shape with objects as IDs:
`{"Starship#1": {"Person#1": "Planet#1", ...}}`, the objects on the way named in `objects`, and the
last step's objects with their previews.

A step takes `fields` as its tool does (`{"tool": "Company_jobs", "arguments": {"fields": ["title"]}}`,
calls/_selections.py): checked before anything is sent, read of each object the step returns, and
shown on the page with what the paths reach.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from graphql import GraphQLEnumType, GraphQLObjectType, GraphQLScalarType, get_named_type, is_abstract_type, is_composite_type

from .._errors import ToolCallError
from ..catalogue._catalogue import Catalogue
from ..catalogue._chain_example import example_chain
from ..catalogue._search import suggest_tools
from ..catalogue._tool import fields_parameter
from ..registry._handles import Step
from ..registry._identity import Met, key_field
from ..registry._registry import ObjectEntry
from ._answers import answer_problem, locate, read_back
from ._arguments import bind_arguments, parse_arguments
from ._connections import Connection, connection_of
from ._documents import nested_first
from ._expressions import expression_of, nonsense
from ._field import UNANSWERED, FieldCalls, Result, not_answered
from ._moved import dotted, moved, unreachable
from ._partial import shown_error
from ._selections import Nested, asked_columns, check_paths
from ._validation import check_document, debugging

__all__ = ["CALL_CHAIN", "MAX_OBJECTS", "MAX_STEPS", "PreparedChain", "on_the_way", "prepare_chain", "run_chain"]

CALL_CHAIN = "callChain"
MAX_STEPS = 8
MAX_OBJECTS = 1_000  # objects one chain mints: a fan-out past this is refused, whole, before any is made
_LABEL = 80  # characters of the name an object on the way is shown by
_CUT = 300  # characters of a long value a chain shows; the field's own tool reads all of it


@dataclass(frozen=True, slots=True)
class _Link:
    """One step of a chain, bound: the field read, on which type, and what it answers."""

    tool: str
    step: Step
    field_type: Any
    end: str | None  # the object type the next step is a field of (a connection's node type); None for a value
    connection: Connection | None
    extra: tuple[str, ...] = ()  # the paths the step's `fields` names, read of each object it returns (calls/_selections.py)


@dataclass(frozen=True, slots=True)
class PreparedChain:
    start: ObjectEntry | None
    links: tuple[_Link, ...]
    expression: str
    text: str
    variables: dict[str, Any]
    path: tuple[str | int, ...]  # where the first step's answer sits in `data`
    keys: tuple[tuple[str, Any], ...] = ()  # the start object's key, checked when it was reached by a chain
    first: str = ""  # the first step as the model reads it, the expression of what it mints


def prepare_chain(calls: FieldCalls, raw_steps: Any) -> PreparedChain:
    """Every check before anything is sent; raises ToolCallError naming the step at fault."""
    catalogue = calls.catalogue
    if not isinstance(raw_steps, list) or not raw_steps:
        raise ToolCallError(f"{CALL_CHAIN} takes steps, a list of {{tool, arguments}}, such as {json.dumps(example_chain(catalogue))}.")
    if len(raw_steps) > MAX_STEPS:
        raise ToolCallError(f"A chain has at most {MAX_STEPS} steps; this one has {len(raw_steps)}. Split it in two.")
    links: list[_Link] = []
    start: ObjectEntry | None = None
    shown_parts: list[str] = []
    for number, raw in enumerate(raw_steps, 1):
        if not isinstance(raw, dict) or not isinstance(raw.get("tool"), str) or set(raw) - {"tool", "arguments"}:
            raise ToolCallError(f'Step {number} of the chain must be {{"tool": "Type_field", "arguments": {{...}}}}.')
        name = raw["tool"]
        arguments = parse_arguments(name, raw.get("arguments"))
        if name not in catalogue:
            close = suggest_tools(catalogue, name)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise ToolCallError(f"Step {number} of the chain: there is no tool {name}.{hint} Nothing was sent.")
        tool = catalogue.tool(name)
        ref = catalogue.ref(name)
        if not tool.read_only or ref.type_name == catalogue.mutation_type:
            raise ToolCallError(f"Step {number} of the chain: {name} writes; a chain only reads. Call {name} on its own.")
        if links:
            before = links[-1]
            if before.end is None:
                raise ToolCallError(f"Step {number - 1} of the chain, {before.tool}, answers a value, so no step can follow it.")
            if not _fits(catalogue, before.end, ref.type_name):
                raise ToolCallError(
                    f"Step {number} of the chain: {name} is a field of {ref.type_name}, but step {number - 1} ({before.tool}) "
                    f"gives {before.end} objects. Use a {catalogue.prefix(before.end)}_* tool there."
                )
            if ref.field_name in {p.split(".", 1)[0] for p in before.extra}:
                raise ToolCallError(
                    f"Step {number} of the chain reads {ref.field_name}, which step {number - 1}'s fields reads too; "
                    f"leave {ref.field_name} out of those fields. Nothing was sent."
                )
            if tool.object_parameter and arguments.get(tool.object_parameter) is not None:
                raise ToolCallError(
                    f"Step {number} of the chain runs on what step {number - 1} returns; leave out {tool.object_parameter}."
                )
            arguments = {k: v for k, v in arguments.items() if k != tool.object_parameter}
        field = catalogue.field(ref)
        named = get_named_type(field.type)
        extra: tuple[str, ...] = ()
        parameter = fields_parameter(field.args, tool.object_parameter)
        if is_composite_type(named) and catalogue.previews and parameter in arguments:
            arguments = dict(arguments)
            try:
                extra = check_paths(catalogue, named.name, arguments.pop(parameter), name, parameter)
            except ToolCallError as error:
                raise ToolCallError(f"Step {number} of the chain: {error} Nothing was sent.") from None
        try:
            bound = bind_arguments(catalogue, calls.registry, tool, arguments, chained=bool(links))
        except ToolCallError as error:
            raise ToolCallError(f"Step {number} of the chain: {error} Nothing was sent.") from None
        if not links:
            start = bound.parent
            if start is not None and start.handle.is_snapshot:
                raise ToolCallError(
                    f"Step 1 of the chain: {start.id} came from a mutation and cannot be read again; start from a Query tool."
                )
        connection = connection_of(catalogue, named.name)
        end = connection.node_type if connection is not None else (named.name if is_composite_type(named) else None)
        on = ref.type_name if links or start is not None else None  # as a field call writes it: a fragment where the type differs
        links.append(_Link(name, Step.of(ref.field_name, bound.values, on=on), field.type, end, connection, extra))
        shown_parts.append(expression_of(start.id if start and number == 1 else None, ref.field_name, bound.shown))
    expression = ".".join(shown_parts)
    prefix = start.handle.steps if start is not None else ()
    keys = tuple(start.key) if start is not None and start.handle.snapshot is not None else ()
    text, variables, path = _document(calls, prefix, links, tuple(name for name, _ in keys))
    return PreparedChain(start, tuple(links), expression, text, variables, path, keys, shown_parts[0])


def _fits(catalogue: Catalogue, end: str, owner: str) -> bool:
    """Whether a field of `owner` can be read on an object of type `end`."""
    if end == owner:
        return True
    schema = catalogue.schema
    end_type, owner_type = schema.get_type(end), schema.get_type(owner)
    if end_type is None or owner_type is None:
        return False
    if is_abstract_type(end_type):  # read on the members that are `owner`
        return bool({t.name for t in schema.get_possible_types(end_type)} & {t.name for t in _concretes(schema, owner_type)})
    return is_abstract_type(owner_type) and schema.is_sub_type(owner_type, end_type)


def _concretes(schema: Any, type_: Any) -> list[Any]:
    return list(schema.get_possible_types(type_)) if is_abstract_type(type_) else [type_]


def _document(
    calls: FieldCalls, prefix: tuple[Step, ...], links: list[_Link], keys: tuple[str, ...]
) -> tuple[str, dict[str, Any], tuple[str | int, ...]]:
    """The chain as one query: the start object's own chain, then each step nested in the selection
    of the objects the step before returns. Every argument is a variable."""
    catalogue = calls.catalogue
    schema = catalogue.schema
    declarations: list[str] = []
    variables: dict[str, Any] = {}

    def call(step: Step, owner: Any) -> str:
        field = owner.fields[step.field]
        rendered = []
        for arg_name, _ in step.arguments:
            variable = f"v{len(variables)}"
            variables[variable] = step.argument_values()[arg_name]
            declarations.append(f"${variable}: {field.args[arg_name].type}")
            rendered.append(f"{arg_name}: ${variable}")
        return f"{step.field}({', '.join(rendered)})" if rendered else step.field

    current: Any = schema.query_type
    opened: list[tuple[str | None, str]] = []  # (type condition, field) of the start object's chain
    path: list[str | int] = []
    for step in prefix:
        condition = None
        if step.on is not None and step.on != current.name:
            condition, current = step.on, schema.get_type(step.on)
        opened.append((condition, call(step, current)))
        path.append(step.field)
        if step.index is not None:
            path.append(step.index)
        current = get_named_type(current.fields[step.field].type)
    texts: list[str] = []
    conditions: list[str | None] = []  # the fragment each step's field needs, where it reads on another type
    for link in links:
        owner = schema.get_type(link.step.on) if link.step.on else current
        conditions.append(link.step.on if owner is not current else None)
        texts.append(call(link.step, owner))
        current = schema.get_type(link.end) if link.end else None
    body = ""
    for index in range(len(links) - 1, -1, -1):
        link = links[index]
        if link.end is not None:
            if index + 1 == len(links):
                inner = calls.queries.selection(link.end, extra=link.extra)
            else:
                inner = " ".join([on_the_way(calls, link.end), *calls.queries.extra_selection(link.end, link.extra)])
            if index + 1 < len(links):
                nested = texts[index + 1] + body
                condition = conditions[index + 1]
                inner += f" ... on {condition} {{ {nested} }}" if condition else f" {nested}"
            if link.connection is not None:
                inner = link.connection.selection(inner) if index + 1 == len(links) else link.connection.paging_selection(inner)
            body = f" {{ {inner} }}"
        else:
            body = ""
    first = links[0]
    text = texts[0] + body
    if conditions[0]:
        text = f"... on {conditions[0]} {{ {text} }}"
    if keys:
        text = " ".join(keys) + " " + text
    path.append(first.step.field)
    for condition, field_text in reversed(opened):
        text = f"{field_text} {{ {text} }}"
        if condition is not None:
            text = f"... on {condition} {{ {text} }}"
    text, constants = nested_first(text, None, declarations)  # the size of the pages `fields` reads on the way
    variables.update(constants)
    header = f"query({', '.join(declarations)})" if declarations else "query"
    document = f"{header} {{ {text} }}"
    if debugging():
        check_document(schema, document)
    return document, variables, tuple(path)


def on_the_way(calls: FieldCalls, type_name: str) -> str:
    """What a chain reads of an object on the way: its key and the name it is shown by, not its whole
    preview, so a document grows by a few bytes a step rather than by a preview a step (DESIGN.md's
    4 KB holds for a chain of `MAX_STEPS`). The last step's objects, whose previews the model reads,
    get the full selection; a field call on an object on the way reads it in full. Abstract types and
    types whose reading forces work (Dagger's `sync`) keep the selection a field call makes."""
    catalogue = calls.catalogue
    type_ = catalogue.schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType) or catalogue.dialect.forces(type_name):
        return calls.queries.selection(type_name)
    fields = ["__typename"]
    key = key_field(catalogue, type_name)
    if key is not None:
        fields.append(key)
    label = next((f for f in catalogue.preview_fields(type_name) if _reads_as_text(type_.fields[f].type)), None)
    if label is not None and label not in fields:
        fields.append(label)
    return " ".join(fields)


def _reads_as_text(type_: Any) -> bool:
    """Whether a field's value arrives as a string (what an object on the way is named by)."""
    named = get_named_type(type_)
    return isinstance(named, GraphQLEnumType) or (isinstance(named, GraphQLScalarType) and named.name not in ("Int", "Float", "Boolean"))


async def run_chain(calls: FieldCalls, chain: PreparedChain) -> Result:
    """Send the chain's one document and mint what it answers, step by step."""
    try:
        response = await calls.executor.execute(chain.text, chain.variables)
    except UNANSWERED as error:
        raise not_answered(error, chain.expression) from error
    data, errors = response.data, response.errors
    raw, depth, problem = locate(data, chain.path)
    if problem is not None:
        raise ToolCallError(nonsense(chain.expression, problem))
    if chain.keys and depth == len(chain.path) and chain.start is not None:
        if not calls.identity.holds(locate(data, chain.path[:-1])[0], chain.keys):
            raise ToolCallError(moved(chain.expression, chain.start))
    if raw is None and errors:
        said = "; ".join(shown_error(e).rstrip(". ") for e in errors[:3])
        raise ToolCallError(f"{chain.expression} failed: {said}. Nothing was made of it.")
    if chain.start is not None and raw is None and depth < len(chain.path):  # null on the way to the start object
        re_rooted = chain.start.identity is not None and calls.catalogue.identity(chain.start.type_name) is not None
        raise ToolCallError(unreachable(chain.expression, chain.start, dotted(chain.path[:depth]), re_rooted=re_rooted))
    value = read_back(raw, calls.queries.renames)
    problem = answer_problem(calls.catalogue.schema, chain.links[0].field_type, value, chain.expression)
    if problem is not None:
        raise ToolCallError(nonsense(chain.expression, problem))
    found = _count(value, chain.links, 0)
    if found > MAX_OBJECTS:
        raise ToolCallError(
            f"{chain.expression} answered {found:,} objects, more than the {MAX_OBJECTS} a chain takes in one call; nothing was "
            "made of them. Ask for fewer (`first` on a connection step), or run the first steps and chain on from some of their objects."
        )
    reader = _Reader(calls, chain.links)
    start_steps = chain.start.handle.steps if chain.start is not None else ()
    tree = reader.walk(value, 0, start_steps, chain.first)
    out: Result = calls.long_values.present(tree, chain.expression)  # a tree past the budget is cut, the rest left to readResult
    named = _within(reader.named, calls.long_values.budget - len(json.dumps(out, ensure_ascii=False)))
    if named:
        out["objects"] = named
    if len(named) < len(reader.named):
        reader.notes.append(f"{len(reader.named) - len(named)} objects on the way are not named here; their own tools read them.")
    page = {**reader.last, **{i: p for i, p in reader.reached.items() if i not in reader.last}}
    if page:
        only: dict[str, frozenset[str]] = {}
        for link in chain.links:  # what each step's `fields` named: just that shows of those types
            for type_name, named_fields in (asked_columns(calls.catalogue, link.end, link.extra) if link.end else {}).items():
                only[type_name] = only.get(type_name, frozenset()) | named_fields
        page = {i: p for i, p in page.items() if i in reader.last or not _said(p, named.get(i), only)}
        shown, note = calls.table(page, out, only=only) if len(page) > 1 else calls.shape(page, out, only=only)
        if shown:
            out["preview"] = shown
        if note:
            reader.notes.append(note)
    if (reader.nested.cuts or not reader.more) and (lists := reader.nested.note()):  # pages cut short are said above
        reader.notes.append(lists)
    if errors:
        reader.notes.append("The API reported errors on some items (left out as null): " + shown_error(errors[0]).rstrip(". ") + ".")
    if reader.notes:
        out["note"] = " ".join(reader.notes)
    return out


def _said(row: tuple[str, dict[str, Any]], name: Any, only: dict[str, frozenset[str]]) -> bool:
    """Whether an object on the way would show only what `objects` already says of it: its name,
    the one field its step asked for (`fields: ["name"]`, before a step over its pilots)."""
    type_name, preview = row
    asked = [v for n, v in preview.items() if n in only.get(type_name, ())]
    return name is not None and type_name in only and bool(asked) and all(v == name for v in asked)


def _count(value: Any, links: tuple[_Link, ...], index: int) -> int:
    """How many objects minting the answer would make, counted before any is made."""
    link = links[index]
    if value is None or link.end is None:
        return 0
    if link.connection is not None and isinstance(value, dict):
        items = link.connection.items(value)
    else:
        items = value if isinstance(value, list) else [value]
    total = 0
    following = links[index + 1] if index + 1 < len(links) else None
    for item in items:
        if isinstance(item, dict):
            total += 1 + (_count(item.get(following.step.field), links, index + 1) if following else 0)
    return total


def _within(named: dict[str, Any], room: int) -> dict[str, Any]:
    """The names of the objects on the way, as many as fit in `room` characters, in the order met."""
    kept: dict[str, Any] = {}
    used = 2
    for key, label in named.items():
        used += len(json.dumps({key: label}, ensure_ascii=False))
        if used > room:
            break
        kept[key] = label
    return kept


class _Reader:
    """Mints a chain's answer level by level, keeping the tree of IDs, the names of the objects on
    the way and the previews of the last step's objects."""

    def __init__(self, calls: FieldCalls, links: tuple[_Link, ...]) -> None:
        self.calls = calls
        self.links = links
        self.named: dict[str, Any] = {}
        self.last: dict[str, tuple[str, dict[str, Any]]] = {}
        self.reached: dict[str, tuple[str, dict[str, Any]]] = {}  # objects a step's `fields` read, with the objects they reach
        self.nested = Nested()  # the lists those paths went through, and which were cut
        self.more = False  # a step's connection has more pages than it read
        self.notes: list[str] = []

    def walk(self, value: Any, index: int, steps: tuple[Step, ...], expression: str) -> Any:
        link = self.links[index]
        if value is None:
            return None
        if link.end is None:  # a value: the last step
            if isinstance(value, str) and len(value) > _CUT:
                self.notes.append(f"Values longer than {_CUT} characters are cut; {link.tool} on its own reads one in full.")
                return value[: _CUT - 1] + "…"
            return value
        step = link.step
        if link.connection is not None and isinstance(value, dict):
            connection = link.connection
            self.nested.lists += 1
            if (value.get("pageInfo") or {}).get("hasNextPage"):
                self.more = True
                self.notes.append(f"{expression} has more pages; {link.tool} on its own pages through them.")
            items = connection.items(value)
            return self._items(items, index, lambda i: steps + (step,) + connection.item_steps(i), expression)
        if isinstance(value, list):
            if any(isinstance(item, list) for item in value):
                raise ToolCallError(f"{expression} is a list of lists, which objects cannot be taken from.")
            self.nested.lists += 1
            return self._items(value, index, lambda i: steps + (replace(step, index=i),), expression)
        entry_id, node = self._one(value, index, steps + (step,), expression)
        return node if index + 1 == len(self.links) else {entry_id: node}

    def _items(self, items: list[Any], index: int, steps_of: Any, expression: str) -> Any:
        last = index + 1 == len(self.links)
        out: Any = [] if last else {}
        for i, item in enumerate(items):
            if item is None:
                continue
            entry_id, node = self._one(item, index, steps_of(i), f"{expression}[{i}]")
            if last:
                out.append(node)
            else:
                out[entry_id] = node
        return out

    def _one(self, value: dict[str, Any], index: int, steps: tuple[Step, ...], expression: str) -> tuple[str, Any]:
        """Mint one object; the last step's objects are their IDs, the others carry what follows."""
        following = self.links[index + 1] if index + 1 < len(self.links) else None
        nested = value.get(following.step.field) if following else None
        own = value
        if following is not None and (following.end is not None or following.step.arguments):
            own = {k: v for k, v in value.items() if k != following.step.field}  # read with arguments, or an object: not its own value
        link = self.links[index]
        entry = self.calls.mint(own, steps, Met.READ, expression, "", extra=link.extra, page=self.reached, nested=self.nested)
        if link.extra and following is not None:
            self.reached.setdefault(entry.id, (entry.type_name, dict(entry.preview)))  # what its `fields` read, shown on the page
        if following is None:
            if entry.preview:
                self.last[entry.id] = (entry.type_name, entry.preview)
            return entry.id, entry.id
        label = next((v for v in entry.preview.values() if isinstance(v, str)), None)
        if label is not None:
            self.named[entry.id] = label if len(label) <= _LABEL else label[: _LABEL - 1] + "…"
        return entry.id, self.walk(nested, index + 1, entry.handle.steps, f"{entry.id}.{following.step.field}")
