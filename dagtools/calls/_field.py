"""How one field call runs: bind it, build its chain, send it, and read the answer into `Type#N` IDs.

Preparing does every check before anything is sent, so a call that fails there changes nothing.
Reading an answer mints objects: a handle re-rooted on the object's identity where it has one, the
chain that reached it where it has not, and a snapshot for a mutation's result without identity.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from graphql import get_named_type, is_composite_type, is_leaf_type

from .._errors import ExecutorError, ToolCallError
from .._tools import Tool
from ..catalogue._catalogue import Catalogue
from ..catalogue._previews import preview_rank
from ..executors._base import Executor, Response, format_error
from ._answers import answer_problem, locate
from ._arguments import Ref, bind_arguments
from ._connections import Connection, connection_of
from ._documents import Document, QueryBuilder
from ._handles import Handle, Step, freeze, thaw
from ._previews import fit_previews, object_room, preview_note, shape_preview

if TYPE_CHECKING:  # the session holds these; this layer is given them and never imports it
    from ..session._long_values import LongValues
    from ..session._registry import ObjectEntry, Registry

__all__ = ["FieldCalls", "PreparedCall", "expression_of"]

Result = dict[str, Any]


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """A bound field call: the chain to send, or the `answer` when no request is needed."""

    steps: tuple[Step, ...]
    operation: str
    expression: str
    field_type: Any
    next_page: Callable[[str], str] | None = None
    answer: Result | None = None
    document: Document | None = None  # built once for a call prepared before (see FieldCalls.prepare)
    types: tuple[str, ...] = ()  # the concrete types the answer is known to be (see FieldCalls.known_types)


class FieldCalls:
    """Runs field calls for one session's registry against one executor."""

    def __init__(self, catalogue: Catalogue, registry: Registry, executor: Executor, long_values: LongValues) -> None:
        self.catalogue = catalogue
        self.registry = registry
        self.executor = executor
        self.long_values = long_values
        self.queries = QueryBuilder.of(catalogue)
        self._prepared: dict[tuple[Any, ...], PreparedCall] = {}
        self._by_identity: dict[tuple[str, Any], str] = {}  # (type, identity) -> the ID its handle was minted as
        self._ranks: dict[str, dict[str, tuple[int, int]]] = {}  # per type: where each preview field is shown

    def prepare(self, tool: Tool, arguments: dict[str, Any]) -> PreparedCall:
        """Everything a field call needs before it is sent; raises ToolCallError before anything runs.

        A call that names its object is bound once: an ID never changes meaning and the registry only
        grows, so the same tool with the same arguments binds the same way every time after it first
        succeeds. A call whose object is the most recent of its type is bound afresh."""
        key = _memo_key(tool, arguments)
        if key is not None:
            known = self._prepared.get(key)
            if known is not None:
                return known
        prepared = self._prepare(tool, arguments)
        if key is not None and prepared.answer is None:
            if len(self._prepared) >= _PREPARED_LIMIT:
                del self._prepared[next(iter(self._prepared))]
            prepared = self._prepared[key] = replace(prepared, document=self.document(prepared))
        return prepared

    def _prepare(self, tool: Tool, arguments: dict[str, Any]) -> PreparedCall:
        bound = bind_arguments(self.catalogue, self.registry, tool, arguments)
        ref = self.catalogue.ref(tool.name)
        field = self.catalogue.field(ref)
        parent = bound.parent
        expression = expression_of(parent.id if parent else None, ref.field_name, bound.shown)
        operation = "mutation" if ref.type_name == self.catalogue.mutation_type else "query"
        if parent is not None and parent.handle.is_snapshot:
            answer = self._from_snapshot(parent, ref.field_name, bound.values, field.type)
            return PreparedCall((), operation, expression, field.type, answer=answer)
        step = Step.of(ref.field_name, bound.values, on=parent.type_name if parent else None)
        steps = (parent.handle.steps if parent else ()) + (step,)
        next_page = None
        if "after" in field.args:
            shown = {
                **({tool.object_parameter: parent.id} if parent and tool.object_parameter else {}),
                **{k: (str(v) if isinstance(v, Ref) else v) for k, v in bound.shown.items()},
            }
            next_page = _next_page(tool.name, shown)
        types = self.known_types(ref.field_name, field.type, bound.shown) if ref.type_name == self.catalogue.query_type else ()
        return PreparedCall(steps, operation, expression, field.type, next_page=next_page, types=types)

    def known_types(self, field_name: str, field_type: Any, shown: dict[str, Any]) -> tuple[str, ...]:
        """The concrete types a root Relay lookup answers with when it is given held objects: `node(id:
        Issue#3)` is an Issue and `nodes(ids: [Issue#3, User#1])` Issues and Users, so its document
        selects those types' fragments, not one for every type that implements `Node`. () when an
        object is given by the API's own global id, whose type is not known before the answer."""
        lookup = self.catalogue.dialect.node_lookup
        if lookup is None or field_name not in ("node", "nodes") or len(shown) != 1:
            return ()
        given = shown.get(lookup[0] if field_name == "node" else lookup[0] + "s")
        refs = given if isinstance(given, list) else [given]
        if not refs or not all(isinstance(r, Ref) for r in refs):
            return ()
        types = sorted({str(r).split("#", 1)[0] for r in refs})
        returned = get_named_type(field_type).name
        return tuple(types) if all(self.catalogue.is_of_type(t, returned) for t in types) else ()

    def document(self, prepared: PreparedCall, *, alias: str | None = None) -> Document:
        if alias is None and prepared.document is not None:
            return prepared.document
        return self.queries.build(prepared.steps, operation=prepared.operation, alias=alias, types=prepared.types)

    async def run(self, prepared: PreparedCall, *, description: str = "") -> Result:
        """Send the call's document and read the answer."""
        if prepared.answer is not None:
            return prepared.answer
        document = self.document(prepared)
        try:
            response = await self.send(document.text, document.variables)
        except ExecutorError as error:  # the API is down or answered nonsense: the model can only wait
            raise ToolCallError(error.failed_call(prepared.expression)) from error
        return self.interpret(prepared, document.path, response.data, response.errors, description=description)

    async def send(self, text: str, variables: dict[str, Any]) -> Response:
        """The executor's answer to one document. An answer nested too deeply to decode is nonsense
        from the API like any other, so it raises ExecutorError, not RecursionError."""
        try:
            return await self.executor.execute(text, variables)
        except RecursionError:
            raise ExecutorError("The API answered JSON nested too deeply to read.") from None

    def interpret(
        self, prepared: PreparedCall, path: tuple[str | int, ...], data: Any, errors: list[dict[str, Any]], *, description: str = ""
    ) -> Result:
        """Turn the answer to one call's document (or its part of a batch) into the model's result."""
        expression = prepared.expression
        if errors:
            messages = "; ".join(format_error(e).rstrip(". ") for e in errors[:5])  # one full stop, ours
            raise ToolCallError(
                f"The API returned an error for {expression}: {messages}. Nothing was created; "
                "change the arguments or try another object or tool."
            )
        value, depth, problem = locate(data, path)
        if problem is None and value is not None:
            problem = answer_problem(self.catalogue.schema, prepared.field_type, value, expression)
        if problem is not None:
            raise ToolCallError(nonsense(expression, problem))
        if data is None and depth == 0:
            raise ToolCallError(nonsense(expression, "the answer has neither data nor errors"))
        named = get_named_type(prepared.field_type)
        if value is None:
            if depth < len(path):
                raise ToolCallError(f"{expression} could not be reached: part of the chain leading to it is null.")
            if is_composite_type(named):  # null is an answer: the API has no such object there
                return {"result": None, "note": f"{expression} is null: the API has no {named.name} there."}
            return {"result": None}
        if not is_composite_type(named):
            return self.long_values.present(value, expression)
        steps, operation = prepared.steps, prepared.operation
        connection = connection_of(self.catalogue, named.name) if operation == "query" else None
        if connection is not None and isinstance(value, dict):
            return self._walk_connection(connection, value, steps, expression, prepared.next_page)
        if isinstance(value, list):
            if any(isinstance(item, list) for item in value):
                raise ToolCallError(f"{expression} is a list of lists, which objects cannot be taken from.")
            last = steps[-1]
            return self._mint_items(value, lambda i: steps[:-1] + (replace(last, index=i),), operation, expression)
        entry = self.mint(value, steps, operation, expression, description)
        out: Result = {"result": entry.id}
        if entry.preview:
            shown, cut, left = self.shape(entry.type_name, entry.preview, alone=True)
            out["preview"] = shown
            note = preview_note([(entry.type_name, cut, left)], self._is_tool)
            if note:
                out["note"] = note
        return out

    def shape(self, type_name: str, preview: dict[str, Any], *, alone: bool = False) -> tuple[dict[str, Any], list[str], list[str]]:
        """An object's preview as the model sees it (see calls/_previews.py): what was read, ordered,
        cut and kept within the room one object has in a result."""
        ranks = self._ranks.get(type_name)
        if ranks is None:
            fields = getattr(self.catalogue.schema.get_type(type_name), "fields", {})
            ranks = self._ranks[type_name] = {
                f: preview_rank(f, get_named_type(fields[f].type).name if f in fields else "")
                for f in self.catalogue.preview_fields(type_name)
            }
        return shape_preview(preview, ranks, object_room(self.long_values.budget, alone=alone))

    def _is_tool(self, name: str) -> bool:
        return name in self.catalogue

    def _mint_items(
        self,
        items: list[Any],
        steps_of: Callable[[int], tuple[Step, ...]],
        operation: str,
        expression: str,
        extras: list[dict[str, Any]] | None = None,
    ) -> Result:
        """A list of objects as a list of IDs, with previews shrunk to fit the budget (and a note
        saying so). `extras` are what each item's edge says about it, shown after its first field."""
        ids: list[str | None] = []
        previews: dict[str, Any] = {}
        trims: dict[str, tuple[str, list[str], list[str]]] = {}
        for index, item in enumerate(items):
            if item is None:
                ids.append(None)
                continue
            entry = self.mint(item, steps_of(index), operation, f"{expression}[{index}]", "")
            ids.append(entry.id)
            extra = extras[index] if extras and index < len(extras) else {}
            if entry.preview or extra:
                head = list(entry.preview.items())
                shown, cut, left = self.shape(entry.type_name, dict(head[:1] + list(extra.items()) + head[1:]))
                previews[entry.id], trims[entry.id] = shown, (entry.type_name, cut, left)
        out = self.long_values.present(ids, expression)
        listed = [i for i in out["result"] if i in previews]
        shown_all, note = fit_previews({i: previews[i] for i in listed}, self.long_values.budget, self._is_tool)
        if shown_all:
            out["preview"] = shown_all
        note = note or preview_note([trims[i] for i in listed], self._is_tool)
        if note:
            out["note"] = note
        return out

    def _walk_connection(
        self,
        connection: Connection,
        value: dict[str, Any],
        steps: tuple[Step, ...],
        expression: str,
        next_page: Callable[[str], str] | None,
    ) -> Result:
        """One page of a connection as the list of its node IDs, its scalars and the call for the next page."""
        items, extras = connection.items(value), connection.edge_values(value)
        out = self._mint_items(items, lambda i: steps + connection.item_steps(i), "query", expression, extras)
        for name in connection.scalars:
            if value.get(name) is not None:
                out[name] = value[name]
        page = value.get("pageInfo") or {}
        if page.get("hasNextPage") and page.get("endCursor") is not None:
            out["more"] = next_page(page["endCursor"]) if next_page else "More items follow on later pages."
        return out

    def _from_snapshot(self, parent: ObjectEntry, field_name: str, values: dict[str, Any], field_type: Any) -> Result:
        data = thaw(parent.handle.snapshot) or {}
        if values or field_name not in data:
            readable = ", ".join(k for k in data if k != "__typename") or "none"
            raise ToolCallError(
                f"{parent.id} came from a mutation and has no id to reach it again, so only the fields read then are available: {readable}."
            )
        value = data[field_name]
        expression = f"{parent.id}.{field_name}"
        if is_leaf_type(get_named_type(field_type)):
            return self.long_values.present(value, expression)
        if value is None:
            return {"result": None}
        if isinstance(value, list):  # objects a mutation linked to, reached again through their identity
            ids = [self.mint(v, (), "mutation", f"{expression}[{i}]", "").id if v is not None else None for i, v in enumerate(value)]
            return self.long_values.present(ids, expression)
        return {"result": self.mint(value, (), "mutation", expression, "").id}

    def mint(self, value: dict[str, Any], steps: tuple[Step, ...], operation: str, expression: str, description: str) -> ObjectEntry:
        """The registry entry for an object read from an answer."""
        type_name = value.get("__typename") or self._end_type(steps, operation).name
        identity = self.catalogue.identity(type_name)
        id_value = value.get(identity.field) if identity else None
        preview = {f: _glimpse(value[f]) for f in self.catalogue.preview_fields(type_name) if f in value}
        if identity is not None and id_value is not None:
            known = self._by_identity.get((type_name, id_value)) if type(id_value) in _SCALARS else None
            if known is not None and self.registry.get(known) is not None:  # minted before: the same ID, fresh values
                return self.registry.refresh(known, description=description, preview=preview)
            handle = Handle((Step.of(identity.root_field, {identity.argument: id_value}),))
        elif operation == "mutation":
            handle = Handle(steps, "mutation", freeze(value))
        else:
            handle = Handle(steps)
        entry = self.registry.mint(type_name, handle, expression=expression, description=description, identity=id_value, preview=preview)
        if identity is not None and id_value is not None and type(id_value) in _SCALARS:
            self._by_identity[(type_name, id_value)] = entry.id
        return entry

    def _end_type(self, steps: tuple[Step, ...], operation: str) -> Any:
        schema = self.catalogue.schema
        current: Any = schema.mutation_type if operation == "mutation" else schema.query_type
        for step in steps:
            if step.on is not None:
                current = schema.get_type(step.on)
            current = get_named_type(current.fields[step.field].type)
        return current


_PREPARED_LIMIT = 256


_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def _memo_key(tool: Tool, arguments: dict[str, Any]) -> tuple[Any, ...] | None:
    """The call as a key, when its binding depends on its arguments alone: its object is named.
    Values keep their type in the key (1, 1.0 and true bind differently), lists and objects as JSON."""
    if tool.object_parameter is not None and arguments.get(tool.object_parameter) is None:
        return None
    types = tuple([type(v) for v in arguments.values()])
    if _SCALAR_TYPES.issuperset(types):  # in the order given: another order only misses
        return tool.name, tuple(arguments.items()), types
    try:
        return tool.name, json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def _glimpse(value: Any, limit: int = 160) -> Any:
    """A preview shows the start of a long text; the field's own tool reads all of it."""
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def nonsense(expression: str, problem: str) -> str:
    """An answer the schema does not allow: the API is at fault, and nothing was made of it."""
    return (
        f"The API answered {expression} with something its schema does not allow: {problem}. Nothing was created; "
        "try again later, or go on with the objects you have."
    )


def _next_page(tool_name: str, shown: dict[str, Any]) -> Callable[[str], str]:
    def hint(cursor: str) -> str:
        arguments = {k: v for k, v in shown.items() if k != "after"} | {"after": cursor}
        return f"For the next page call {tool_name} with {json.dumps(arguments, ensure_ascii=False)}"

    return hint


def expression_of(parent: str | None, field: str, shown: dict[str, Any]) -> str:
    """How an object came to be, as the model would write it: `Potato#1.rinse(sink: Sink#1)`.

    A long argument is shown by its start: the expression is repeated in results, errors and the
    list of objects, and a model's megabyte argument must not be echoed back to it each time."""
    args = ", ".join(f"{k}: {_shorten(_literal(v))}" for k, v in shown.items())
    call = f"{field}({args})" if args else field
    return f"{parent}.{call}" if parent else call


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def _literal(value: Any) -> str:
    if isinstance(value, Ref):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_literal(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)
