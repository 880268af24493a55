"""What the registry holds of an object after a write returns it: only what the write read back.

A write may change more than it reads back, so a value held from before it is dropped rather than
kept beside the new ones: the next read of that field goes to the API (through the chain, its key
checked) instead of answering from a copy older than the write. Reads that are not writes still add
to what is held, and a copy kept in an earlier payload never replaces it (see calls/_field.py).
"""

from __future__ import annotations

from dagtools.registry._handles import Handle, Step, freeze
from dagtools.registry._identity import Found, Met
from dagtools.registry._registry import Registry

KEY = (("id", "c1"),)  # an id field: an identity, which lets two places name one object
READ = Found(key=KEY, identified=True)
WRITTEN = Found(key=KEY, identified=True, met=Met.WRITE_LINKED)  # what a write's payload links to


def held_comment(registry: Registry) -> str:
    chain = Handle((Step.of("workshop"), Step.of("comments", index=0)), "query", freeze({"id": "c1", "text": "old", "likes": 3}))
    return registry.mint("Comment", chain, expression="Workshop#1.comments[0]", found=READ, preview={"text": "old", "likes": 3}).id


def test_a_write_replaces_what_was_held_and_drops_what_it_did_not_read() -> None:
    registry = Registry()
    comment = held_comment(registry)
    written = Handle((), "mutation", freeze({"id": "c1", "text": "new"}))
    entry = registry.mint("Comment", written, expression="editComment.comment", found=WRITTEN, preview={"text": "new"})
    assert entry.id == comment
    assert entry.handle.steps[-1].field == "comments", "still reached through its chain, read again at will"
    assert entry.handle.held() == {"id": "c1", "text": "new"}, "`likes` is from before the write: read again, not answered"
    assert entry.preview == {"text": "new"}


def test_a_read_adds_to_what_was_held() -> None:
    registry = Registry()
    comment = held_comment(registry)
    again = Handle((Step.of("workshop"), Step.of("comments", index=0)), "query", freeze({"id": "c1", "text": "new"}))
    entry = registry.mint("Comment", again, expression="Workshop#1.comments[0]", found=READ, preview={"text": "new"})
    assert entry.id == comment
    assert entry.handle.held() == {"id": "c1", "text": "new", "likes": 3}
    assert entry.preview == {"text": "new", "likes": 3}
