"""Words: how a count reads in a message ("1 tool", never "1 tools"), and how a name or a sentence
folds into the stems that catalogue search compares.

Folding is lower case, camelCase and snake_case split, a light suffix stemmer (plurals, -ing, -ed,
-e), a `sub` prefix taken apart where the rest is a word of the API ("subcategories" reads as "sub
categories"), and stop words dropped. The synonym table is short on purpose: words people say
against words APIs use. Search reaches most needs through the schema's own structure (what a field
returns, its edges, its owner's other names); the table covers only what no structure says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "BOOKKEEPING",
    "CONCEPTS",
    "EVENT_WORDS",
    "PERMISSION_WORDS",
    "SPLIT",
    "STOP",
    "SYNONYMS",
    "WRITE_VERBS",
    "counted",
    "search_words",
    "stem",
    "tool_line",
]


def counted(count: int, noun: str, plural: str = "") -> str:
    """`count` and the noun that agrees with it; `plural` for a noun that does not just take an s."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

STOP = frozenset(
    "a an the of to in on for by at from with and or is are was were be been it its this that these those "
    "i me my we our you your he she they them their what which who whom whose how do does did can could "
    "should would will shall may might must all any some each every given get gets find show me please".split()
)

#: Irregular or domain words folded to one stem before stemming.
_IRREGULAR: Mapping[str, str] = {
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "data": "datum",
    "indices": "index",
    "statuses": "status",
    "aliases": "alias",
    "analyses": "analysis",
    "addresses": "address",
    "branches": "branch",
    "watches": "watch",
    "matches": "match",
    "searches": "search",
}

#: Stems a query word also looks for, at half weight: words people say against words APIs use.
SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "star": ("stargazer",),
    "stargazer": ("star",),
    "fan": ("star", "follow"),
    "follower": ("follow",),
    "created": ("creator", "author"),
    "wrote": ("author", "creator"),
    "post": ("create",),
    "write": ("create", "add"),
    "reviewer": ("review",),
    "branch": ("ref",),
    "sub": ("child", "parent"),
    "nested": ("child",),
    "workspace": ("organization",),
    "who": ("user",),
    "sign": ("viewer", "authenticated"),
    "authenticated": ("viewer",),
    "login": ("user", "viewer"),
    "close": ("closed", "state"),
    "reopen": ("open", "state"),
    "delete": ("remove", "archive"),
    "remove": ("delete",),
    "create": ("add", "new"),
    "add": ("create",),
    "make": ("create",),
    "new": ("create",),
    "edit": ("update", "change"),
    "change": ("update",),
    "modify": ("update",),
    "rename": ("update", "name"),
    "update": ("edit",),
    "list": ("all",),
    "owner": ("own", "viewer"),
    "mine": ("viewer",),
    "me": ("viewer",),
    "i": ("viewer",),
    "my": ("viewer",),
    "current": ("viewer",),
    "logged": ("viewer",),
    "author": ("creator", "user"),
    "creator": ("author",),
    "person": ("user", "member"),
    "user": ("member", "person"),
    "member": ("user",),
    "people": ("user",),
    "ticket": ("issue",),
    "bug": ("issue",),
    "task": ("issue",),
    "pr": ("pull",),
    "repo": ("repository",),
    "sprint": ("cycle",),
    "iteration": ("cycle",),
    "tag": ("label", "topic"),
    "label": ("tag",),
    "reply": ("comment",),
    "assign": ("assignee",),
    "assignee": ("assign",),
    "subscribe": ("subscriber", "watch"),
    "watch": ("subscribe", "watcher"),
    "watcher": ("watch",),
    "count": ("total",),
    "number": ("count", "total"),
    "team": ("organization",),
    "org": ("organization",),
    "emoji": ("reaction",),
    "react": ("reaction",),
    "reaction": ("react",),
    "lock": ("locked",),
    "merge": ("merged",),
    "sponsor": ("sponsorship",),
    "workflow": ("state",),
}

#: Kinds of field that schemas show by their structure rather than by one word, each with the words
#: a person uses for it. A field is given its kind's words when its shape says so (see the catalogue
#: search: a list of events, a self-referencing list, a permission or role), so a need that says
#: "history" finds `Order_events` though no name or description there says history.
CONCEPTS: Mapping[str, str] = {
    "history": "history log timeline activity audit event record happened past",
    "permission": "permission access allowed rights role privilege admin",
    "part": "sub child nested inside part",
}


#: Words of a type's name that say how it is built, not what it is: no other name for it.
BOOKKEEPING = "connection edge payload result page list all first last by id ids type node nodes input"
#: The last word of an event type's name, or a word of its description, that makes a list of it a history.
EVENT_WORDS = "event events history log audit timeline activity"
#: Words of a field, of what it returns or of its edges that make it about who may do what.
PERMISSION_WORDS = "permission permissions role roles access privilege privileges admin administrator"

#: English verbs of writes; those that begin or end a mutation's name here are this API's write verbs.
WRITE_VERBS = frozenset(
    "create add new update edit change set delete remove archive unarchive close reopen merge assign unassign subscribe "
    "unsubscribe star unstar follow unfollow lock unlock pin unpin transfer request submit dismiss resolve unresolve move mark "
    "start invite accept decline cancel enable disable convert link unlink approve rename restore retire share unshare".split()
)

_LINE_LIMIT = 120


def tool_line(description: str | None, fallback: str) -> str:
    """A description's first sentence on one line, cut to a short budget."""
    text = " ".join((description or "").split())
    if not text:
        return fallback
    cut = re.search(r"(?<=[.!?])\s", text)
    if cut is not None and cut.start() >= 20:
        text = text[: cut.start()]
    text = text if len(text) <= _LINE_LIMIT else text[: _LINE_LIMIT - 3] + "..."
    return text if text.endswith((".", "!", "?")) else text + "."


def stem(word: str) -> str:
    """A light suffix stemmer: enough to meet "starred" with "star" and "issues" with "issue"."""
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # starr -> star, committ -> commit
            break
    if word.endswith("e") and len(word) >= 5:
        word = word[:-1]  # release / releas, update / updat meet their -ed and -ing forms
    return word


def search_words(text: str) -> list[str]:
    """The stems of a name or a sentence: camelCase and snake_case split, lower case, no stop words."""
    out: list[str] = []
    for part in SPLIT.findall(text):
        word = part.lower()
        if word in STOP:
            continue
        out.append(stem(word))
    return out
