"""Per session: `Type#N` <-> handle, with what made each object and what it looks like.

Pure and O(1) per mint and lookup: a few dicts and a counter per type. Which held object a found one
is, and what it keeps when found again, are the identity rules' (registry/_identity.py): an object
with an identity is one `Type#N` however it was reached, one without is the object found at one
place, so an ID always means one thing. What the object looks like (its preview) is another matter:
the API may have changed it since (a mutation, another client), so the entry keeps the values of the
latest answer that read them, never the first, and the way it was last reached.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ._handles import Handle, parse_object_id
from ._identity import Found, Key

__all__ = ["Key", "ObjectEntry", "Registry", "object_lines", "parse_object_id"]

#: An object told by its handle alone, read by a query: what `mint` assumes when not told more.
_BY_HANDLE = Found()


@dataclass(frozen=True, kw_only=True, slots=True)
class ObjectEntry:
    """One object the session knows: its ID, how to reach it, and how it came to be."""

    id: str
    type_name: str
    number: int
    handle: Handle
    expression: str
    description: str = ""
    identity: Any = None
    preview: dict[str, Any] = field(default_factory=dict)
    key: Key = ()  # what the end of its chain must still show (checked before a read through it); () for nothing
    identified: bool = False  # the key is an identity: another place with this key holds this same object

    @property
    def label(self) -> str:
        """The line selectTools shows: the host's description, else the expression that made it."""
        return self.description or self.expression


class Registry:
    """The objects of one session."""

    def __init__(self) -> None:
        self._by_id: dict[str, ObjectEntry] = {}
        self._by_handle: dict[tuple[str, Handle], str] = {}
        self._by_key: dict[tuple[str, Key], str] = {}
        self._counts: dict[str, int] = {}
        self._latest: dict[str, str] = {}
        self._order: dict[str, None] = {}  # insertion-ordered set of IDs, most recently used last
        self._replaced: dict[str, None] = {}  # IDs whose entry changed since `settle` (what a store must save again)

    def mint(
        self,
        type_name: str,
        handle: Handle,
        *,
        expression: str,
        description: str = "",
        identity: Any = None,
        preview: dict[str, Any] | None = None,
        found: Found = _BY_HANDLE,
    ) -> ObjectEntry:
        """The entry for this object: the held one `found` says it is (see registry/_identity.py), else
        a new `Type#N` with N counted per type. Without `found`, the handle alone tells it: the same
        handle is the same object.

        An existing entry takes the preview values just read and the handle just used: the ID stays,
        what it shows and where it was last seen are fresh (see `refresh`).
        """
        existing = found.among(self, type_name, handle)
        if existing is not None:
            return self.refresh(existing, description=description, preview=preview, handle=handle, found=found)
        number = self._counts.get(type_name, 0) + 1
        self._counts[type_name] = number
        entry = ObjectEntry(
            id=f"{type_name}#{number}",
            type_name=type_name,
            number=number,
            handle=handle,
            expression=expression,
            description=description,
            identity=identity,
            preview=dict(preview or {}),
            key=found.key,
            identified=found.identified and bool(found.key),
        )
        self._by_id[entry.id] = entry
        self._by_handle[(type_name, handle)] = entry.id
        if entry.identified:
            self._by_key[(type_name, entry.key)] = entry.id
        self.touch(entry.id)
        return entry

    def keyed(self, type_name: str, key: Key) -> str | None:
        """The ID of the object of this type and identity, if the registry holds it."""
        return self._by_key.get((type_name, key))

    def placed(self, type_name: str, handle: Handle) -> str | None:
        """The ID of the object of this type last reached by `handle`, if the registry holds it."""
        return self._by_handle.get((type_name, handle))

    def refresh(
        self,
        object_id: str,
        *,
        description: str = "",
        preview: dict[str, Any] | None = None,
        handle: Handle | None = None,
        found: Found = _BY_HANDLE,
    ) -> ObjectEntry:
        """An object read again: it becomes the most recent of its type and shows the values just read.

        `handle` is how it was just reached; `found` says how (registry/_identity.py): which handle the
        entry keeps, and whether the values just read join what it held or, from a write's answer,
        replace it (a field the write did not read is read again from the API, through the chain, key
        checked, instead of answered from a copy older than the write)."""
        entry = self._by_id[object_id]
        changes: dict[str, Any] = {}
        if description and not entry.description:
            changes["description"] = description
        shown = found.shown(entry.preview, preview)
        if shown is not None:
            changes["preview"] = shown
        if handle is not None and handle != entry.handle:
            changes["handle"] = found.kept(entry.handle, handle)
        if changes:
            entry = self._by_id[object_id] = replace(entry, **changes)
            self._replaced[object_id] = None
            if "handle" in changes:
                self._by_handle[(entry.type_name, entry.handle)] = object_id
        self.touch(object_id)
        return entry

    def replaced(self) -> tuple[str, ...]:
        """The IDs whose entry changed (values read again, a new way there) since `settle`."""
        return tuple(self._replaced)

    def settle(self, object_ids: tuple[str, ...] | None = None) -> None:
        """What a store now holds: these entries as they are (None: every entry)."""
        if object_ids is None:
            self._replaced.clear()
        for object_id in object_ids or ():
            self._replaced.pop(object_id, None)

    def touch(self, object_id: str) -> None:
        """Make this object the most recent of its type (the default for its type's parameter)."""
        entry = self._by_id[object_id]
        self._latest[entry.type_name] = object_id
        self._order.pop(object_id, None)
        self._order[object_id] = None

    def get(self, object_id: str) -> ObjectEntry | None:
        return self._by_id.get(object_id)

    def find(self, type_name: str, number: int) -> ObjectEntry | None:
        return self._by_id.get(f"{type_name}#{number}")

    def latest(self, type_name: str) -> ObjectEntry | None:
        object_id = self._latest.get(type_name)
        return self._by_id[object_id] if object_id else None

    def count(self, type_name: str) -> int:
        return self._counts.get(type_name, 0)

    def types(self) -> list[str]:
        return list(self._counts)

    def recent(self) -> Iterator[ObjectEntry]:
        """Entries from the most recently used back."""
        for object_id in reversed(self._order):
            yield self._by_id[object_id]

    def __iter__(self) -> Iterator[ObjectEntry]:
        return iter(self._by_id.values())

    def restore(self, entries: list[ObjectEntry], recent: list[str]) -> None:
        """Hold exactly `entries` (as a store kept them), with `recent` as the order of use, most recent
        last: IDs keep their meaning and the next mint of each type continues after its highest N."""
        for table in (self._by_id, self._by_handle, self._by_key, self._counts, self._latest, self._order, self._replaced):
            table.clear()
        for entry in entries:
            self._by_id[entry.id] = entry
            self._by_handle[(entry.type_name, entry.handle)] = entry.id
            if entry.identified:
                self._by_key[(entry.type_name, entry.key)] = entry.id
            self._counts[entry.type_name] = max(self._counts.get(entry.type_name, 0), entry.number)
        used = set(recent)
        for object_id in [*(e.id for e in entries if e.id not in used), *recent]:
            if object_id in self._by_id:
                self.touch(object_id)

    def apply(self, entries: list[ObjectEntry], recent: list[str]) -> bool:
        """Take in what calls elsewhere changed, leaving what `restore` of the whole would: `entries` (new
        objects, or held ones read again, by ID) and `recent` (the IDs used since, in order). False, and
        nothing changed, when they do not fit (an object made but not used, an unknown ID used)."""
        new = {e.id for e in entries if e.id not in self._by_id}
        held = (self._by_id.get(e.id) for e in entries)
        if not new <= set(recent) or any(i not in self._by_id and i not in new for i in recent):
            return False
        if any(old is not None and old.type_name != e.type_name for old, e in zip(held, entries, strict=True)):
            return False
        for entry in entries:
            old = self._by_id.get(entry.id)
            self._by_id[entry.id] = entry
            if old is not None and old.handle != entry.handle:
                self._unindex(self._by_handle, (old.type_name, old.handle), old, lambda e: e.handle)
            if old is not None and old.identified and (not entry.identified or old.key != entry.key):
                self._unindex(self._by_key, (old.type_name, old.key), old, lambda e: e.key if e.identified else None)
            self._index(self._by_handle, (entry.type_name, entry.handle), entry)
            if entry.identified:
                self._index(self._by_key, (entry.type_name, entry.key), entry)
            self._counts[entry.type_name] = max(self._counts.get(entry.type_name, 0), entry.number)
        for object_id in recent:
            self.touch(object_id)
        return True

    def _index(self, table: dict[tuple[str, Any], str], at: tuple[str, Any], entry: ObjectEntry) -> None:
        """Point `at` to `entry` unless a later object of its type holds it (`restore`: the last one wins)."""
        holder = table.get(at)
        if holder is None or self._by_id[holder].number <= entry.number:
            table[at] = entry.id

    def _unindex(self, table: dict[tuple[str, Any], str], at: tuple[str, Any], old: ObjectEntry, of: Any) -> None:
        """`old` no longer holds `at`: it goes to the last other object of the type that does, if any."""
        if table.get(at) != old.id:
            return
        del table[at]
        for entry in self._by_id.values():
            if entry.type_name == old.type_name and entry.id != old.id and of(entry) == at[1]:
                self._index(table, at, entry)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, object_id: object) -> bool:
        return object_id in self._by_id


def object_lines(registry: Registry, shown_per_type: int = 5) -> list[str]:
    """The objects a session holds, a line each as selectTools lists them (`- Potato#1: A raw potato.`):
    the latest few of each type, the older ones counted. Three or more in a row made the same way but
    for one counting number (a list's items, each item's homeworld) share a line:
    `- Person#1 to Person#4: Starship#1.pilotConnection[0..3]`."""
    lines: list[str] = []
    for type_name in registry.types():
        count = registry.count(type_name)
        first = max(1, count - shown_per_type + 1)
        if first > 1:
            lines.append(f"- {type_name}#1 to {type_name}#{first - 1}: older {type_name} objects")
        entries = [e for e in (registry.find(type_name, n) for n in range(first, count + 1)) if e is not None]
        while entries:
            run = _run(entries)
            if len(run) >= 3:
                lines.append(f"- {run[0].id} to {run[-1].id}: {_ranged([e.label for e in run])}")
            else:
                lines += [f"- {e.id}: {_one_line(e.label)}" for e in run]
            entries = entries[len(run) :]
    return lines


_NUMBER = re.compile(r"\d+")


def _run(entries: list[ObjectEntry]) -> list[ObjectEntry]:
    """The longest run from the first entry whose labels differ in one number only, counting up by one."""
    run = entries[:1]
    for entry in entries[1:]:
        if _ranged([e.label for e in (*run, entry)]) is None:
            break
        run.append(entry)
    return run if len(run) >= 3 else entries[:1]


def _ranged(labels: list[str]) -> str | None:
    """`Person#1..4.homeworld` for labels alike but for one number counting up by one, else None."""
    parts = [_NUMBER.split(label) for label in labels]
    numbers = [[int(n) for n in _NUMBER.findall(label)] for label in labels]
    if len(labels) < 2:
        return _one_line(labels[0]) if labels else None
    if any(p != parts[0] for p in parts) or any(len(n) != len(numbers[0]) for n in numbers):
        return None
    moving = [i for i in range(len(numbers[0])) if len({n[i] for n in numbers}) > 1]
    if len(moving) != 1 or [n[moving[0]] for n in numbers] != list(range(numbers[0][moving[0]], numbers[0][moving[0]] + len(labels))):
        return None
    slot = moving[0]
    out = parts[0][0]
    for i, number in enumerate(numbers[0]):
        out += (f"{number}..{numbers[-1][slot]}" if i == slot else str(number)) + parts[0][i + 1]
    return _one_line(out)


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
