"""How one field call runs: bind it, build its chain, send it, and read the answer into `Type#N` IDs.

Preparing does every check before anything is sent, so a call that fails there changes nothing.
Reading an answer mints objects: a handle re-rooted on the object's identity where it has one, the
chain that reached it where it has not, and a snapshot for a mutation's result without identity.
An object reached by a chain keeps the values read then (its snapshot): reading one of them again
costs no request, and any other read through the chain first checks that the chain still ends at
the same object (its key), refusing when it has moved or gone rather than answering with whatever
sits there now. Which object a found one is, and whether a value kept of it is still fresh, are the
identity rules' (registry/_identity.py), asked through `FieldCalls.identity`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from graphql import get_named_type, is_composite_type, is_leaf_type

from .._errors import ExecutorError, ToolCallError
from .._tools import Tool
from ..catalogue._catalogue import Catalogue
from ..catalogue._preview_fields import field_rank
from ..catalogue._tool import fields_parameter
from ..executors._base import Executor
from ..registry._handles import Handle, Step
from ..registry._identity import Identity, Key, Met
from ..registry._long_values import LongValues
from ..registry._registry import ObjectEntry, Registry
from ._answers import answer_problem, locate
from ._arguments import bind_arguments
from ._connections import Connection, connection_of
from ._documents import Document, QueryBuilder
from ._expressions import expression_of, nonsense
from ._expressions import next_page as hint_next_page
from ._moved import dotted, moved, unreachable
from ._partial import failed_call, leave_out, partial_note, sort_errors
from ._payloads import present_payload, read_snapshot
from ._preview_pages import Keep, Only, page_room, shape_page, table_of
from ._references import Ref, known_types
from ._selections import NESTED_ITEMS, NESTED_ROWS, Nested, Wanted, asked_columns, check_paths, heads, read_paths

__all__ = ["UNANSWERED", "FieldCalls", "PreparedCall", "expression_of", "not_answered"]  # expression_of: where callers have long found it

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
    holder: str | None = None  # the ID of the object the field is read on
    via: Handle | None = None  # the holder's handle when the call was bound
    keys: Key = ()  # the holder's key, checked at the end of the chain before the answer is used
    types: tuple[str, ...] = ()  # the concrete types the answer is known to be (see calls/_references.py's known_types)
    extra: tuple[str, ...] = ()  # the paths read of each object returned beside its preview (see calls/_selections.py)
    asked: tuple[str, ...] = ()  # of those, the ones the model asked for (the rest are read unasked)


class FieldCalls:
    """Runs field calls for one session's registry against one executor."""

    def __init__(self, catalogue: Catalogue, registry: Registry, executor: Executor, long_values: LongValues) -> None:
        self.catalogue = catalogue
        self.registry = registry
        self.executor = executor
        self.long_values = long_values
        self.queries = QueryBuilder.of(catalogue)
        self._prepared: dict[tuple[Any, ...], PreparedCall] = {}
        self._ranks: dict[str, dict[str, tuple[int, int]]] = {}  # per type: where each preview field is shown
        #: Per type, the fields the model read on their own or named: later pages show them as columns.
        self.wanted = Wanted(on_new=self._prepared.clear)  # calls prepared before read what it did not want yet
        #: Which object a found one is, and whether what was read of it is still fresh (the writes sent).
        self.identity = Identity(catalogue)

    def prepare(self, tool: Tool, arguments: dict[str, Any]) -> PreparedCall:
        """Everything a field call needs before it is sent; raises ToolCallError before anything runs.

        A call that names its object is bound once: an ID never changes meaning and the registry only
        grows, so the same tool with the same arguments binds the same way every time after it first
        succeeds. A call whose object is the most recent of its type is bound afresh."""
        key = _memo_key(tool, arguments)
        if key is not None:
            known = self._prepared.get(key)
            if known is not None and (known.holder is None or getattr(self.registry.get(known.holder), "handle", None) is known.via):
                return known  # bound through the holder's handle as it still is (it changes when the object is seen elsewhere)
        prepared = self._prepare(tool, arguments)
        if key is not None and prepared.answer is None:
            if len(self._prepared) >= _PREPARED_LIMIT:
                del self._prepared[next(iter(self._prepared))]
            prepared = self._prepared[key] = replace(prepared, document=self._build(prepared))
        return prepared

    def _build(self, prepared: PreparedCall, alias: str | None = None) -> Document:
        keys = tuple(name for name, _ in prepared.keys)
        return self.queries.build(
            prepared.steps, operation=prepared.operation, alias=alias, keys=keys, types=prepared.types, extra=prepared.extra
        )

    def _prepare(self, tool: Tool, arguments: dict[str, Any]) -> PreparedCall:
        ref = self.catalogue.ref(tool.name)
        field = self.catalogue.field(ref)
        asked: tuple[str, ...] = ()
        named = get_named_type(field.type)
        if is_composite_type(named) and ref.type_name != self.catalogue.mutation_type and self.catalogue.previews:
            parameter = fields_parameter(field.args, tool.object_parameter)
            if parameter in arguments:
                arguments = dict(arguments)
                asked = check_paths(self.catalogue, named.name, arguments.pop(parameter), tool.name, parameter)
        bound = bind_arguments(self.catalogue, self.registry, tool, arguments)
        reads = is_composite_type(named) and ref.type_name != self.catalogue.mutation_type
        extra = read_paths(self.catalogue, self.wanted, named.name, asked) if reads else ()
        if extra:
            prepared = self._prepare_bound(tool, ref, field, bound)
            return replace(prepared, extra=extra, asked=asked, answer=None) if prepared.answer is None else prepared
        return self._prepare_bound(tool, ref, field, bound)

    def _prepare_bound(self, tool: Tool, ref: Any, field: Any, bound: Any) -> PreparedCall:
        parent = bound.parent
        expression = expression_of(parent.id if parent else None, ref.field_name, bound.shown)
        operation = "mutation" if ref.type_name == self.catalogue.mutation_type else "query"
        if parent is not None and parent.handle.is_snapshot:
            answer = read_snapshot(self, parent, ref.field_name, bound.values, field.type)
            return PreparedCall((), operation, expression, field.type, answer=answer)
        stale = False  # a value kept from before a write: read again, and the object must still have it
        if parent is not None and not bound.values and is_leaf_type(get_named_type(field.type)):
            held = parent.handle.held()  # values read when an object without identity was last found
            if ref.field_name in held and self.identity.fresh(parent.id):  # cost no request, as a mutation's result's do
                answer = self.long_values.present(held[ref.field_name], f"{parent.id}.{ref.field_name}")
                return PreparedCall((), operation, expression, field.type, answer=answer, holder=parent.id)
            stale = ref.field_name in held
        step = Step.of(ref.field_name, bound.values, on=parent.type_name if parent else None)
        steps = (parent.handle.steps if parent else ()) + (step,)
        next_page = None
        if "after" in field.args:
            shown = {
                **({tool.object_parameter: parent.id} if parent and tool.object_parameter else {}),
                **{k: (str(v) if isinstance(v, Ref) else v) for k, v in bound.shown.items()},
            }
            next_page = hint_next_page(tool.name, shown)
        if parent is None:
            types = (
                known_types(self.catalogue, ref.field_name, field.type, bound.shown) if ref.type_name == self.catalogue.query_type else ()
            )
            return PreparedCall(steps, operation, expression, field.type, next_page=next_page, types=types)
        keys = self.identity.checked(parent, ref.field_name, stale=stale)  # reached by a chain: it must still end at this object
        return PreparedCall(steps, operation, expression, field.type, next_page=next_page, holder=parent.id, via=parent.handle, keys=keys)

    def document(self, prepared: PreparedCall, *, alias: str | None = None) -> Document:
        if alias is None and prepared.document is not None:
            return prepared.document
        return self._build(prepared, alias)

    async def run(self, prepared: PreparedCall, *, description: str = "") -> Result:
        """Send the call's document and read the answer."""
        if prepared.answer is not None:
            self.read_field(prepared)
            return prepared.answer
        document = self.document(prepared)
        if prepared.operation == "mutation":
            self.identity.wrote()  # sent: whatever comes back, what was read before may have changed
        try:
            response = await self.executor.execute(document.text, document.variables)
        except UNANSWERED as error:  # the API is down or answered nonsense: the model can only wait
            raise not_answered(error, prepared.expression) from error
        try:
            result = self.interpret(prepared, document.path, response.data, response.errors, description=description)
        except ToolCallError:
            if not (_unplaced(response.errors) and self.reads_unasked(prepared)):
                raise
            return await self.run_asked(prepared, description=description)
        self.read_field(prepared)
        return result

    def reads_unasked(self, prepared: PreparedCall) -> bool:
        """Whether a read takes paths the model did not ask for (references, a page's items, fields it
        wanted before): what it reads unasked must never fail the call."""
        return prepared.operation == "query" and prepared.extra != prepared.asked

    async def run_asked(self, prepared: PreparedCall, *, description: str = "") -> Result:
        """The call again with only what the model asked for, after an error the API did not place (an
        old server's errors carry no path) took down a read that also took paths unasked; the note says so."""
        lean = replace(prepared, extra=prepared.asked, document=None)
        result = await self.run(lean, description=description)
        note = "Fields read beside it failed on the API, so this answer leaves them out."
        result["note"] = f"{result['note']} {note}" if result.get("note") else note
        return result

    def read_field(self, prepared: PreparedCall) -> None:
        """After a call read one argument-free value of a held object (`Job_salary`), later pages of
        that type show it as a column: the model wanted it."""
        holder = self.registry.get(prepared.holder or "") if prepared.holder else None
        step = prepared.steps[-1] if prepared.steps else None
        if holder is None or (step is not None and step.arguments) or is_composite_type(get_named_type(prepared.field_type)):
            return
        field = step.field if step is not None else prepared.expression.rsplit(".", 1)[-1].split("(", 1)[0]
        self.want(holder.type_name, field)

    def interpret(
        self, prepared: PreparedCall, path: tuple[str | int, ...], data: Any, errors: list[dict[str, Any]], *, description: str = ""
    ) -> Result:
        """Turn the answer to one call's document (or its part of a batch) into the model's result.

        GraphQL errors are judged by their path (see calls/_partial.py): one on the asked field or its
        chain fails the call; one below it, on what dagtools read beside it, leaves that part out of
        the result with a note, unless it took the asked value down with it."""
        if not errors:
            return self._read(prepared, path, data, description)
        failing, below, elsewhere = sort_errors(errors, path)
        if self.catalogue.dialect.name == "dagger":  # `sync` is read to make a failing pipeline fail now
            failing += [e for rest, e in below if rest[-1:] == ["sync"]]
            below = [(rest, e) for rest, e in below if rest[-1:] != ["sync"]]
        raw, _, _ = locate(data, tuple(path))  # as sent, aliases and all, like the errors' paths
        if failing or raw is None:
            root = (str(path[0]), prepared.steps[0].field) if path and prepared.steps else None
            lost = [e for _, e in below]
            raise ToolCallError(failed_call(prepared.expression, prepared.operation, root, failing, lost, elsewhere))
        landed = leave_out(raw, below)
        result = self._read(prepared, path, data, description)
        walked = connection_of(self.catalogue, get_named_type(prepared.field_type).name) is not None
        note = partial_note(landed, getattr(path, "renames", {}), connection=walked)
        if note:
            result["note"] = f"{result['note']} {note}" if result.get("note") else note
        return result

    def _read(self, prepared: PreparedCall, path: tuple[str | int, ...], data: Any, description: str) -> Result:
        """The model's result from an answer whose errors, if any, were judged already."""
        expression = prepared.expression
        value, depth, problem = locate(data, path)
        if problem is None and prepared.keys:  # the chain must still end at the object it was read on
            holder = self.registry.get(prepared.holder or "")
            if holder is not None and not self.identity.holds(locate(data, path[:-1])[0], prepared.keys):
                raise ToolCallError(moved(expression, holder))
        if problem is None and value is not None:
            problem = answer_problem(self.catalogue.schema, prepared.field_type, value, expression)
        if problem is not None:
            raise ToolCallError(nonsense(expression, problem))
        if data is None and depth == 0:
            raise ToolCallError(nonsense(expression, "the answer has neither data nor errors"))
        named = get_named_type(prepared.field_type)
        only = asked_columns(self.catalogue, named.name, prepared.asked)
        if value is None:
            if depth < len(path):
                raise ToolCallError(self._unreachable(prepared, path, depth))
            if is_composite_type(named):  # null is an answer: the API has no such object there
                return {"result": None, "note": f"{expression} is null: the API has no {named.name} there."}
            return {"result": None}
        if not is_composite_type(named):
            return self.long_values.present(value, expression)
        steps, operation = prepared.steps, prepared.operation
        connection = connection_of(self.catalogue, named.name) if operation == "query" else None
        if connection is not None and isinstance(value, dict):
            return self._walk_connection(connection, value, steps, expression, prepared.next_page, extra=prepared.extra, only=only)
        met = Met.WRITE if operation == "mutation" else Met.READ  # a write's result: met once, never the same place as another
        if isinstance(value, list):
            if any(isinstance(item, list) for item in value):
                raise ToolCallError(f"{expression} is a list of lists, which objects cannot be taken from.")
            last = steps[-1]
            keep = _always if met is Met.WRITE else None  # what a write answered is shown as it is now
            return self.mint_items(
                value, lambda i: steps[:-1] + (replace(last, index=i),), met, expression, keep=keep, extra=prepared.extra, only=only
            )
        reached: dict[str, tuple[str, dict[str, Any]]] = {}
        nested = Nested()
        entry = self.mint(value, steps, met, expression, description, extra=prepared.extra, page=reached, nested=nested)
        if entry.handle.is_snapshot and isinstance(value, dict):  # a mutation's payload: what the write did
            return present_payload(self, entry, value)
        out = self.present(entry, reached, only)
        if nested.cuts:
            out["note"] = " ".join(n for n in (out.get("note"), nested.note()) if n)
        return out

    def present(self, entry: ObjectEntry, reached: dict[str, tuple[str, dict[str, Any]]] | None = None, only: Only | None = None) -> Result:
        """A lone object's result: its ID and its preview, a page of one, with a note on the rest; the
        objects the paths the model asked for reached (`reached`) as a table under `objects`; `only`
        as for `shape`."""
        out: Result = {"result": entry.id}
        notes = []
        if entry.preview:
            shown, note = self.shape({entry.id: (entry.type_name, entry.preview)}, out, only=only)
            if entry.id in shown:
                out["preview"] = shown[entry.id]
            notes.append(note)
        if reached:
            objects, note = self.table({i: p for i, p in reached.items() if i != entry.id}, out, only=only)
            if objects:
                out["objects"] = objects
            notes.append(note)
        note = " ".join(n for n in notes if n)
        if note:
            out["note"] = note
        return out

    def shape(
        self, page: dict[str, tuple[str, dict[str, Any]]], out: Result, *, keep: Keep | None = None, only: Only | None = None
    ) -> tuple[dict[str, dict[str, Any]], str | None]:
        """The previews of the objects on one page as the model sees them (see calls/_preview_pages.py):
        each type's columns, within the room the result `out` leaves, and a note on the rest. A field
        the model read or named before (`wanted`), or `keep` says, stays a column; of a type the call
        named fields of (`only`, from `asked_columns`), just those and its naming column show."""
        room = page_room(self.long_values.budget, len(json.dumps(out, ensure_ascii=False)), named=bool(only))
        return shape_page(page, self._rank, room, self._is_tool, keep or self.wants, only)

    def table(
        self, page: dict[str, tuple[str, dict[str, Any]]], out: Result, *, keep: Keep | None = None, only: Only | None = None
    ) -> tuple[dict[str, Any], str | None]:
        """`shape`, as the table the model reads a page of objects in (see calls/_preview_pages.py)."""
        shown, note = self.shape(page, out, keep=keep, only=only)
        return (table_of(shown) if shown else {}), note

    def wants(self, type_name: str, field: str) -> bool:
        """Whether the model read `field` of a `type_name` on its own or named it: it stays a column."""
        return self.wanted.wants(type_name, field)

    def want(self, type_name: str, field: str) -> None:
        """Remember that the model read or named `field` of `type_name` (see `wants`)."""
        self.wanted.want(type_name, field)

    def _rank(self, type_name: str, field: str) -> tuple[int, int]:
        ranks = self._ranks.setdefault(type_name, {})
        if field not in ranks:
            ranks[field] = field_rank(self.catalogue.schema, type_name, field)
        return ranks[field]

    def _is_tool(self, name: str) -> bool:
        return name in self.catalogue

    def mint_items(
        self,
        items: list[Any],
        steps_of: Callable[[int], tuple[Step, ...]],
        met: Met,
        expression: str,
        extras: list[dict[str, Any]] | None = None,
        *,
        keep: Keep | None = None,
        extra: tuple[str, ...] = (),
        only: Only | None = None,
    ) -> Result:
        """A list of objects as a list of IDs, with their previews as one table within the budget (and
        a note on what it leaves out). `extras` are what each item's edge says about it; `met` as for
        `mint`; `keep` and `only` as for `shape`."""
        ids: list[str | None] = []
        previews: dict[str, tuple[str, dict[str, Any]]] = {}
        reached: dict[str, tuple[str, dict[str, Any]]] = {}  # what the paths the model asked for reached
        nested = Nested()
        for index, item in enumerate(items):
            if item is None:
                ids.append(None)
                continue
            entry = self.mint(item, steps_of(index), met, f"{expression}[{index}]", "", extra=extra, page=reached, nested=nested)
            ids.append(entry.id)
            edge = extras[index] if extras and index < len(extras) else {}
            if entry.preview or edge:
                head = list(entry.preview.items())
                previews[entry.id] = (entry.type_name, dict(head[:1] + list(edge.items()) + head[1:]))
        out = self.long_values.present(ids, expression)
        page = {i: previews[i] for i in out["result"] if i in previews}
        page.update((i, p) for i, p in reached.items() if i not in page)
        shown, note = self.table(page, out, keep=keep, only=only)
        if shown:
            out["preview"] = shown
        note = " ".join(n for n in (note, nested.note()) if n)
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
        *,
        extra: tuple[str, ...] = (),
        only: Only | None = None,
    ) -> Result:
        """One page of a connection as the list of its node IDs, its scalars and the call for the next page."""
        items, extras = connection.items(value), connection.edge_values(value)
        out = self.mint_items(items, lambda i: steps + connection.item_steps(i), Met.READ, expression, extras, extra=extra, only=only)
        for name in (*connection.scalars, *(v.split(" ", 1)[0] for v in connection.values)):
            if value.get(name) is not None:
                out[name] = (
                    value[name] if name in connection.scalars else self.long_values.present(value[name], f"{expression}.{name}")["result"]
                )
        page = value.get("pageInfo") or {}
        if page.get("hasNextPage") and page.get("endCursor") is not None:
            out["more"] = next_page(page["endCursor"]) if next_page else "More items follow on later pages."
        elif page.get("hasNextPage") is False and not any(
            type(out.get(name)) is int and out[name] == len(items) for name in connection.scalars
        ):
            # Said only where no count read with the page already says it holds them all: without
            # it, a model asks for a next page to learn that there is none.
            out["lastPage"] = True
        return out

    def mint(
        self,
        value: dict[str, Any],
        steps: tuple[Step, ...],
        met: Met,
        expression: str,
        description: str,
        *,
        extra: tuple[str, ...] = (),
        page: dict[str, tuple[str, dict[str, Any]]] | None = None,
        nested: Nested | None = None,
    ) -> ObjectEntry:
        """The registry entry for an object read from an answer at `steps`: the one the identity rules
        say it is (registry/_identity.py), else a new one. `met` is how the answer met it: a read, a
        write's own result, what a write's answer links to, or a copy kept since a write (`Met.KEPT`),
        which never replaces what the session holds of the object: that entry is the answer.

        `extra` are the paths the model asked to read of it (calls/_selections.py): their values join
        its preview, and each object they reach is minted too, its ID in the preview and its own
        preview added to `page`; `nested` counts what lists on the way gave, and which were cut."""
        type_name = value.get("__typename") or self._end_type(steps, met.operation).name
        if (held := self.identity.held(self.registry, type_name, value, met)) is not None:
            return self.registry.refresh(held.id)  # the most recent of its type, its values as they are
        handle, found = self.identity.meet(type_name, value, steps, met)
        preview = {f: _glimpse(value[f]) for f in self.catalogue.preview_fields(type_name) if f in value}
        cut: list[str] = []  # the lists on the way this object's paths cut short
        if extra and (found.identity is not None or met is Met.READ):
            preview.update(self._asked(type_name, value, handle.steps, expression, extra, page, nested or Nested(), cut))
        if found.identity is not None and (known := self.registry.keyed(type_name, found.key)) is not None:  # its handle is its identity
            entry = self.registry.refresh(known, description=description, preview=preview, found=found)
        else:
            entry = self.registry.mint(
                type_name, handle, expression=expression, description=description, identity=found.identity, preview=preview, found=found
            )
        if nested is not None:
            nested.cuts.update((f"{entry.id}.{head}", self.catalogue.name_of(type_name, head)) for head in cut)
        return self.identity.seen(entry)

    def _asked(
        self,
        type_name: str,
        value: dict[str, Any],
        steps: tuple[Step, ...],
        expression: str,
        extra: tuple[str, ...],
        page: dict[str, tuple[str, dict[str, Any]]] | None,
        nested: Nested,
        cut: list[str],
    ) -> dict[str, Any]:
        """The preview values of the paths the model asked to read of one object: a value as read, an
        object (or a list of them: a first page of a connection) as its ID, minted on the way, its own
        preview added to `page`; the fields whose lists were cut short added to `cut`."""
        out: dict[str, Any] = {}
        for head, rest in heads(extra).items():
            if head not in value:
                continue
            item = value[head]
            self.want(type_name, head)
            field = getattr(self.catalogue.schema.get_type(type_name), "fields", {}).get(head)
            if field is None or not is_composite_type(get_named_type(field.type)):
                out[head] = _glimpse(item)
                continue
            connection = connection_of(self.catalogue, get_named_type(field.type).name)
            if connection is not None:  # read a first page at a time (calls/_documents.py's `_extra`)
                if not isinstance(item, dict):
                    out[head] = None
                    continue
                paged = Step.of(head, {"first": NESTED_ITEMS} if "first" in field.args else {}, on=type_name)
                more = bool((item.get("pageInfo") or {}).get("hasNextPage"))
                items = connection.items(item)
                out[head] = self._reach_items(
                    items, lambda i: steps + (paged,) + connection.item_steps(i), f"{expression}.{head}", rest, page, nested, more
                )
            elif isinstance(item, dict):
                out[head] = self._reached(item, steps + (Step.of(head, on=type_name),), f"{expression}.{head}", rest, page, nested)
                continue
            elif isinstance(item, list):
                step = Step.of(head, on=type_name)
                out[head] = self._reach_items(
                    item, lambda i: steps + (replace(step, index=i),), f"{expression}.{head}", rest, page, nested, False
                )
            else:
                out[head] = None
                continue
            if out[head] and isinstance(out[head][-1], str) and out[head][-1].startswith("+"):
                cut.append(head)
        return out

    def _reach_items(
        self,
        items: list[Any],
        steps_of: Callable[[int], tuple[Step, ...]],
        expression: str,
        extra: tuple[str, ...],
        page: dict[str, tuple[str, dict[str, Any]]] | None,
        nested: Nested,
        more: bool,
    ) -> list[Any]:
        """The IDs of the objects of a list a path goes through, at most NESTED_ITEMS of them and
        NESTED_ROWS in the whole call, each minted; `+N more` where some were left (`more`: a next page)."""
        ids: list[Any] = []
        nested.lists += 1
        for i, one in enumerate(items[:NESTED_ITEMS]):
            if nested.rows >= NESTED_ROWS:
                break
            nested.rows += 1  # counted before what it reaches, so a list under a list stays within the bound too
            ids.append(None if not isinstance(one, dict) else self._reached(one, steps_of(i), f"{expression}[{i}]", extra, page, nested))
        left = len(items) - len(ids)
        if left or more:
            ids.append(f"+{left} more" if not more else "+more")
        return ids

    def _reached(
        self,
        value: dict[str, Any],
        steps: tuple[Step, ...],
        expression: str,
        extra: tuple[str, ...],
        page: dict[str, tuple[str, dict[str, Any]]] | None,
        nested: Nested | None = None,
    ) -> str:
        entry = self.mint(value, steps, Met.READ, expression, "", extra=extra, page=page, nested=nested)
        for name in (p.split(".", 1)[0] for p in extra):
            self.want(entry.type_name, name)
        if page is not None and entry.preview:  # reached again by another path: what each read joins its row
            page[entry.id] = (entry.type_name, {**page.get(entry.id, ("", {}))[1], **entry.preview})
        return entry.id

    def _unreachable(self, prepared: PreparedCall, path: tuple[str | int, ...], depth: int) -> str:
        holder = self.registry.get(prepared.holder or "")
        where = dotted((prepared.steps[0].field, *path[1:depth]) if depth else ())
        re_rooted = holder is not None and holder.identity is not None and self.catalogue.identity(holder.type_name) is not None
        return unreachable(prepared.expression, holder, where, re_rooted=re_rooted)

    def _end_type(self, steps: tuple[Step, ...], operation: str) -> Any:
        schema = self.catalogue.schema
        current: Any = schema.mutation_type if operation == "mutation" else schema.query_type
        for step in steps:
            if step.on is not None:
                current = schema.get_type(step.on)
            current = get_named_type(current.fields[step.field].type)
        return current


def _unplaced(errors: list[dict[str, Any]]) -> bool:
    """Whether some error carries no path (an old server's), so what it took down cannot be told."""
    return any(isinstance(e, dict) and not e.get("path") for e in errors)


def _always(_type: str, _field: str) -> bool:
    return True


_PREPARED_LIMIT = 256


#: What sending a document may raise when the API gave no answer that can be read: an executor's own
#: error, or an answer nested too deeply to decode (nonsense from the API like any other, whichever
#: executor decoded it).
UNANSWERED = (ExecutorError, RecursionError)


def not_answered(error: BaseException, expression: str) -> ToolCallError:
    """What the model is told of a call whose document got no answer that can be read (`UNANSWERED`)."""
    if not isinstance(error, ExecutorError):
        error = ExecutorError("The API answered JSON nested too deeply to read.")
    return ToolCallError(error.failed_call(expression))


_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))


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


def _glimpse(value: Any, limit: int = 160, items: int = 20) -> Any:
    """A preview shows the start of a long text or list; the field's own tool reads all of it."""
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    if isinstance(value, list):
        kept = [_glimpse(item, limit) for item in value[:items]]
        return kept + [f"+{len(value) - items} more"] if len(value) > items else kept
    return value
