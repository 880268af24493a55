"""Identity: when two places hold one object, and when a value read of an object is still fresh.

An answer finds objects at places: a chain and a position (`Station#1.bikes[2]`), a write's result, a
field of a write's payload. These rules say which `Type#N` a found object is, which way to reach it
and which of its values the session keeps, and when a value read before may still be answered.

What tells an object apart: its key (`key_of`)
- The type's identity field where it has one (`loadXFromID`, `node`, a root lookup); else an id-like
  field (`id`, or its only `ID` field) even with no root field to fetch the object by; else, for a
  value object such as a time slot, all the scalars it was read with (a long text by its digest).
- Only the first two are an identity (`identifies`). Equal values are never identity: two stock
  levels of 0, or page 1 and page 2 of a page type without id, are two objects.

When a found object is one the session holds (`Found.among`)
- One with an identity is the held object of its type with that identity, however and wherever each
  was found (a list, a lookup, a write's payload, whatever type the lookup returns); an object with
  an identity field and a lookup is re-rooted on it, so its handle is its identity too.
- One without is the object found at its place: the same place (chain and position) read again is
  the same object, unless its key says another one sits there now; nothing else is.
- A write's own result (`Met.WRITE`) is a place met once: only an identity can name a held object
  there, and no later answer finds it by its place.

Which way there and which values an object keeps when it is found again (`newer`)
- A way to read it again replaces a snapshot, and the latest chain replaces an older one (the object
  is where it was last seen); a snapshot never replaces a way to read it again, but lends it the
  values it read. Values read join those held, the latest winning.
- A write's answer (`Met.WRITE`, `Met.WRITE_LINKED`) replaces them instead: a write may change more
  than it reads back, so a value from before it is dropped, never kept beside the new ones.
- A copy kept since a write and read again (`Met.KEPT`) never replaces what the session holds of the
  object now: the held entry is the answer (`Identity.held`).

When a value read before is still fresh (`Identity.fresh`)
- A value kept of an object found by a chain is answered from the session only when it was read here
  since the session's last write. Anything else (a write since, or values restored from a store) is
  read again through the chain.
- A read through a chain checks that the chain still ends at the same object (`Identity.checked`
  says which key values; `Identity.holds` compares them with what sits there now) and is refused when
  another object sits there; calls/_moved.py says so to the model, and a null on the way says it has
  moved or is gone.

`Identity` is the entry point, one per session's field calls: `meet` decides how an object found in
an answer is held (a `Found`, which `Registry.mint` asks which held object it is and what it keeps),
`held` answers for a kept copy, `seen`, `wrote` and `fresh` keep the freshness account, `checked` and
`holds` check a chain's end. The functions below it are the rules as the session state and document
building use them without a session.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphql import GraphQLList, GraphQLNonNull, GraphQLObjectType, get_named_type, is_leaf_type

from .._values import value_problem
from ..catalogue._catalogue import Catalogue
from ._handles import Handle, Step, freeze, thaw

if TYPE_CHECKING:  # _registry imports this module
    from ._registry import ObjectEntry, Registry

__all__ = [
    "DIGEST",
    "Found",
    "Identity",
    "Key",
    "Met",
    "held_entry",
    "held_values",
    "identifies",
    "key_field",
    "key_of",
    "key_value",
    "newer",
    "same_key",
]

#: What tells an object apart from others of its type: (field, frozen value) pairs, sorted by field;
#: hashable, and () for "nothing to tell it by".
Key = tuple[tuple[str, Any], ...]

_UNSET = object()


class Met(enum.Enum):
    """How an answer met an object: what decides whether its place can name it again and whether its
    values replace what the session held of it."""

    READ = "read"  # a query's answer: its place can be met again, its values join those held
    WRITE = "write"  # a write's own result: a place met once, its values what the write read back
    WRITE_LINKED = "write linked"  # an object a write's answer links to: its values what the write read back
    KEPT = "kept"  # a copy kept since a write, read again: never newer than what the session holds

    @property
    def once(self) -> bool:
        """The place is met this once: no later answer finds the object by it."""
        return self is Met.WRITE

    @property
    def written(self) -> bool:
        """The values are a write's answer: they replace what was held, never join it."""
        return self in (Met.WRITE, Met.WRITE_LINKED)

    @property
    def operation(self) -> str:
        """The operation whose answer met it: anything but a read holds a snapshot, never sent again."""
        return "query" if self is Met.READ else "mutation"


@dataclass(frozen=True, kw_only=True, slots=True)
class Found:
    """An object found in an answer, as the identity rules decided it: what tells it apart (`key`, an
    identity when `identified`, whose value is `identity` when the handle is re-rooted on it) and how
    the answer met it. `Registry.mint` asks it which held object it is and what that object keeps."""

    key: Key = ()
    identified: bool = False
    identity: Any = None
    met: Met = Met.READ
    rules: Identity | None = None  # whose `newer` decides what a held object keeps (None: the rule as written)

    def among(self, registry: Registry, type_name: str, handle: Handle) -> str | None:
        """The ID of the held object this one is: the one with its identity, else the one found at its
        place (`handle`) unless its key says another object sits there now; None for a new object."""
        existing = registry.keyed(type_name, self.key) if self.key and self.identified else None
        if existing is None and not self.met.once:
            existing = registry.placed(type_name, handle)
            held = registry.get(existing) if existing is not None else None
            if held is not None and self.key and held.key not in ((), self.key):
                existing = None  # the same way there, another object: a key says which
        return existing

    def shown(self, held: dict[str, Any], read: dict[str, Any] | None) -> dict[str, Any] | None:
        """What a held object shows once found again with the values `read`: those joined to what it
        showed, or from a write's answer those alone (see `newer`); None when nothing changes."""
        if self.met.written and read is not None and read != held:
            return dict(read)
        if read and any(held.get(name, _UNSET) != value for name, value in read.items()):
            return {**held, **read}
        return None

    def kept(self, old: Handle, new: Handle) -> Handle:
        """The handle a held object keeps when it is found again with `new` (see `newer`)."""
        if self.rules is not None:
            return self.rules.newer(old, new, written=self.met.written)
        return newer(old, new, written=self.met.written)


class Identity:
    """The identity rules for one session's field calls, and its freshness account: how many writes it
    has sent, and how many had been sent when each object's values were last read."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self._writes = 0
        self._read_at: dict[str, int] = {}

    def meet(self, type_name: str, value: dict[str, Any], steps: tuple[Step, ...], met: Met) -> tuple[Handle, Found]:
        """How an object found in an answer at `steps` is held: its handle (re-rooted on its identity
        where it has one and a lookup; else the chain with the values read, or only those for a write's
        answer) and what tells it apart."""
        identity = self.catalogue.identity(type_name)
        id_value = value.get(identity.field) if identity else None
        if identity is not None and id_value is not None:  # its identity is its key
            key: Key = ((identity.field, freeze(id_value)),)
            handle = Handle((Step.of(identity.root_field, {identity.argument: id_value}),))
        elif met is not Met.READ:
            handle = Handle(steps, "mutation", freeze(value))
            named = key_field(self.catalogue, type_name)
            key = key_of(self.catalogue, type_name, value) if named is not None and value.get(named) is not None else ()
        else:
            key, handle = key_of(self.catalogue, type_name, value), Handle(steps, "query", held_values(value))
        found = Found(key=key, identified=self.identifies(type_name, key), identity=id_value, met=met, rules=self)
        return handle, found

    def held(self, registry: Registry, type_name: str, value: dict[str, Any], met: Met) -> ObjectEntry | None:
        """The held entry that answers for an object found in a copy kept since a write (`Met.KEPT`),
        told by its key field; None otherwise, and then `meet` decides."""
        return held_entry(self.catalogue, registry, type_name, value) if met is Met.KEPT else None

    def identifies(self, type_name: str, key: Key) -> bool:
        """Whether `key` is an identity, which may name one object found at two places (`identifies`)."""
        return identifies(self.catalogue, type_name, key)

    def holds(self, found: Any, key: Key) -> bool:
        """Whether what sits at the end of a chain now (`found`) is the object with `key`; True when
        nothing sits there (a null on the way says that)."""
        return not isinstance(found, dict) or same_key(found, key)

    def newer(self, old: Handle, new: Handle, *, written: bool = False) -> Handle:
        """The handle a held object keeps when it is found again (`newer`)."""
        return newer(old, new, written=written)

    def wrote(self) -> None:
        """A write was sent: whatever it answers, values read before it may have changed."""
        self._writes += 1

    def seen(self, entry: ObjectEntry) -> ObjectEntry:
        """`entry`, its values just read: fresh until the session's next write."""
        self._read_at[entry.id] = self._writes
        return entry

    def fresh(self, object_id: str) -> bool:
        """Whether the values kept of `object_id` were read here since this session's last write: only
        then may a read be answered from them. Anything else (a write since, or values restored from a
        store) is read again through the chain that found the object, which refuses if it moved."""
        return self._read_at.get(object_id, -1) == self._writes

    def checked(self, holder: ObjectEntry, field: str, *, stale: bool) -> Key:
        """What the end of `holder`'s chain must still show before an answer read through it is used:
        its key, but the field being read itself unless a value of it is held from before a write
        (`stale`: the object must still have it). Nothing for a handle re-rooted on an identity."""
        if holder.handle.snapshot is None:
            return ()
        return tuple((name, value) for name, value in holder.key if stale or name != field)


def key_field(catalogue: Catalogue, type_name: str) -> str | None:
    """The one field that names an object of this type: its identity field, else `id`, else its only
    `ID` field (argument-free, not a list); None when the type has none."""
    table: dict[str, str | None] = catalogue.derived("key fields", dict)
    if type_name not in table:
        table[type_name] = _key_field(catalogue, type_name)
    return table[type_name]


def _key_field(catalogue: Catalogue, type_name: str) -> str | None:
    identity = catalogue.identity(type_name)
    if identity is not None:
        return identity.field
    type_ = catalogue.schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType):
        return None
    singles = {name: field for name, field in type_.fields.items() if not field.args and _single_leaf(field.type)}
    if "id" in singles:
        return "id"
    ids = [name for name, field in singles.items() if get_named_type(field.type).name == "ID"]
    return ids[0] if len(ids) == 1 else None


def _single_leaf(type_: Any) -> bool:
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return not isinstance(type_, GraphQLList) and is_leaf_type(type_)


def key_of(catalogue: Catalogue, type_name: str, value: dict[str, Any]) -> Key:
    """The key of an object read from an answer: its key field's value, else every scalar read of it.
    Object-valued fields (a mutation snapshot's linked objects) are not part of it."""
    field = key_field(catalogue, type_name)
    if field is not None and value.get(field) is not None:
        return ((field, key_value(value[field])),)
    type_ = catalogue.schema.get_type(type_name)
    fields = getattr(type_, "fields", {})
    return tuple(
        sorted((name, key_value(v)) for name, v in value.items() if name in fields and is_leaf_type(get_named_type(fields[name].type)))
    )


def identifies(catalogue: Catalogue, type_name: str, key: Key) -> bool:
    """Whether `key` (from `key_of`) is an identity, the value of the type's key field, which may
    name one object found at two places; False for the values of an object without one."""
    if len(key) != 1:
        return False
    field = key_field(catalogue, type_name)
    return field is not None and key[0][0] == field and key[0][1] is not None


def held_entry(catalogue: Catalogue, registry: Registry, type_name: str, value: dict[str, Any]) -> ObjectEntry | None:
    """The entry the session holds for this object by its key field (an identity, an `id`), however
    the object was reached; None where it holds none or the type has no key field to tell it by."""
    named = key_field(catalogue, type_name)
    if named is None or value.get(named) is None:
        return None
    known = registry.keyed(type_name, ((named, freeze(value[named])),))
    return registry.get(known) if known is not None else None


def same_key(found: dict[str, Any], key: Key) -> bool:
    """Whether an object just answered (`found`) has the key held. The answer is the API's: a value that
    is not plain JSON (nested past any bound) is another value, never a crash."""
    return all(_same(found.get(name), value) for name, value in key)


def _same(answered: Any, held: Any) -> bool:
    if isinstance(answered, (dict, list)) and value_problem(answered) is not None:
        return False
    return bool(key_value(answered) == held)


def key_value(value: Any) -> Any:
    """A value as a key holds it: frozen, and a long text by its digest, so a key stays small in the
    registry and in a store however long the texts it was read with."""
    if isinstance(value, str) and len(value) > _LONG_KEY:
        return DIGEST + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return freeze(value)


def held_values(value: dict[str, Any]) -> Any:
    """What a chain's snapshot keeps of an object just read: its values, but a text too long to keep
    in every stored session is left to be read again (through the chain, key checked)."""
    return freeze({name: v for name, v in value.items() if not (isinstance(v, str) and len(v) > _LONG_HELD)})


_LONG_KEY = 128
_LONG_HELD = 2_000
#: How a key holds a long text: this prefix and 32 hex digits of its SHA-256.
DIGEST = "sha256:"


def newer(old: Handle, new: Handle, *, written: bool = False) -> Handle:
    """The handle an object keeps when it is reached again (`old` held, `new` just found); after a
    write (`written`) it holds only what the write read back."""
    held = (lambda: new.snapshot) if written else (lambda: _merged(old.snapshot, new.snapshot))
    if new.is_snapshot and not old.is_snapshot:
        if old.snapshot is None:  # re-rooted on identity: read again at will, nothing to lend
            return old
        return Handle(old.steps, old.operation, held())
    if old.snapshot is not None and new.snapshot is not None:
        return Handle(new.steps, new.operation, held())
    return new


def _merged(old: Any, new: Any) -> Any:
    held, fresh = thaw(old), thaw(new)
    if isinstance(held, dict) and isinstance(fresh, dict):
        return freeze({**held, **fresh})
    return new
