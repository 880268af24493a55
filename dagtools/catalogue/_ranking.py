"""The catalogue search's ranking as data: every figure and word table it weighs, each with the case that set it.

`Ranking` is one frozen record; `RANKING` is the one the search uses. Each field's metadata says what
its `neutral` value is (a share of 0, a factor of 1, a part weighed like the description, an empty
table) and `why` it has its own: the need it serves, then what `python bench/search.py --weights`
measures with that one field at its neutral value. The figures are recall at 5 unless said (at 1, or
the mean reciprocal rank within the ten tools a search answers) on the tuning set (55 needs on GitHub
and Linear) and the development set (91 needs on GitHub, Linear, Shopify's Storefront and Saleor),
from 0.945 and 0.703 at 5, 0.727 and 0.451 at 1, 0.815 and 0.550 in rank with every field as here.
"No figure moves" marks a field for which neither the bench nor the search's tests (tests/catalogue/,
tests/interop/test_unknown_names.py) see a difference at its neutral value: kept as first set, and
the first to set neutral. The blind set is never measured this way, so no figure here was chosen by it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = ["RANKING", "Ranking", "Weight", "neutral", "weights"]


def _weight(value: Any, neutral: Any, why: str) -> Any:
    return field(default=value, metadata={"neutral": neutral, "why": why})


def _table(value: Any, why: str) -> Any:
    empty: Any = MappingProxyType({}) if isinstance(value, Mapping) else type(value)()
    return field(default_factory=lambda: value, metadata={"neutral": empty, "why": why})


#: Words people say against words APIs use, each looked for at `synonym_share` of a word's weight.
_SYNONYMS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
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
)

_CONCEPTS: Mapping[str, str] = MappingProxyType(
    {
        "history": "history log timeline activity audit event record happened past",
        "permission": "permission access allowed rights role privilege admin",
        "part": "sub child nested inside part",
    }
)

_WRITE_VERBS = frozenset(
    "create add new update edit change set delete remove archive unarchive close reopen merge assign unassign subscribe "
    "unsubscribe star unstar follow unfollow lock unlock pin unpin transfer request submit dismiss resolve unresolve move mark "
    "start invite accept decline cancel enable disable convert link unlink approve rename restore retire share unshare".split()
)


@dataclass(frozen=True, slots=True)
class Ranking:
    """What the search weighs. Replace a field (`dataclasses.replace`) to measure what it is worth."""

    # -- BM25F: how much a word counts in each part of a tool's document
    name: float = _weight(
        3.0,
        1.0,
        "A word of the field's own name says most ('who starred a repository' is Repository_stargazers). "
        "Neutral: no figure moves at 5; tuning rank 0.815 -> 0.812, development 0.550 -> 0.559.",
    )
    type: float = _weight(
        2.0,
        1.0,
        "The owner's name says where ('the comments of an issue' is Issue_comments). "
        "Neutral: development at 1 0.451 -> 0.440, rank 0.550 -> 0.546.",
    )
    kind: float = _weight(
        0.5, 1.0, "query, mutation or field: a need's 'query' or 'mutation' leans, never decides. Neutral: no figure moves."
    )
    returns: float = _weight(
        1.2, 1.0, "What comes back, a connection's node type ('the labels of a pull request' returns Label). Neutral: no figure moves."
    )
    arguments: float = _weight(
        0.5,
        1.0,
        "Argument names and descriptions say how to ask, not what comes back: a hint. Neutral: development 0.703 -> 0.681.",
    )
    description: float = _weight(1.0, 1.0, "The field's description: the unit the other parts are weighed against.")
    type_alias: float = _weight(
        0.3,
        1.0,
        "Other names of the owner, from the fields that return it (Saleor's `customers` return User). "
        "Neutral: tuning at 1 0.727 -> 0.709, development 0.703 -> 0.692.",
    )
    returns_alias: float = _weight(
        0.3, 1.0, "Other names of what comes back, as for the owner: the same share. Neutral: no figure moves at 5 or 1."
    )
    shape: float = _weight(
        0.5,
        1.0,
        "The returned type's description and its edges' values (GitHub's collaborator edge: `permission`). "
        "Neutral: tuning at 1 0.727 -> 0.709, development 0.703 -> 0.714: a trade, kept for the edges' case.",
    )
    concept: float = _weight(
        0.8,
        1.0,
        "A kind the shape shows (a list of events is a history: 'the history of an order' is Order_events). "
        "Neutral: no figure moves; the word table `concepts` is what counts.",
    )
    k1: float = _weight(1.2, 1.2, "BM25's term-frequency saturation at its textbook value: a word said twice is not twice the match.")
    b: float = _weight(
        0.6,
        0.75,
        "BM25's length normalisation, under the textbook 0.75: long descriptions are GraphQL's norm. At 0.75: development 0.703 -> 0.692.",
    )

    # -- the rerank of the best candidates
    reranked: int = _weight(
        300,
        100_000,
        "Only the best this many by BM25F are reranked, so a query stays within a few ms on GitHub. All of them: no figure moves.",
    )
    coverage: float = _weight(
        1.5,
        0.0,
        "A tool whose name the need names whole ('the comments of an issue': Issue_comments, not "
        "IssueSearchResult_sourceComment). Neutral: tuning 0.945 -> 0.909, at 1 0.727 -> 0.636; development 0.703 -> 0.659.",
    )
    exact: float = _weight(
        0.3,
        0.0,
        "A need's word as the name writes it, plural for plural. Neutral: development at 1 0.451 -> 0.440 but "
        "at 5 0.703 -> 0.714: a trade, the first answer preferred.",
    )
    action: float = _weight(
        1.4,
        1.0,
        "A write the need asks for by its verb ('close an issue' is Mutation_closeIssue over Issue_closed). "
        "Neutral: tuning 0.945 -> 0.927.",
    )
    direction: float = _weight(
        0.5,
        0.0,
        "A need names what it wants before where from ('the pull request that fixed this issue' wants Issue's pull "
        "requests). Neutral: development at 1 0.451 -> 0.407.",
    )
    root_boost: float = _weight(
        1.15,
        1.0,
        "Root tools are where a model starts: among equals they come first. "
        "Neutral: tuning at 1 0.727 -> 0.673, development 0.703 -> 0.692.",
    )
    synonym_share: float = _weight(
        0.5,
        1.0,
        "A synonym counts half a word the need said. At a whole word: tuning 0.945 -> 0.964 (it was written "
        "for those needs), development 0.703 -> 0.692 and at 1 0.451 -> 0.407: the half is kept.",
    )

    # -- a tool's place, before any word (`_prior` in the search)
    objects: float = _weight(
        0.3,
        0.0,
        "Needs ask for things more than for values (Tray_labels, stickers, over Shelf_labels, strings). "
        "Neutral: tuning at 1 0.727 -> 0.691, development 0.703 -> 0.681.",
    )
    many: float = _weight(
        0.3,
        0.0,
        "And for many of them more than one: a list or a connection over a single object. Neutral: tuning 0.945 -> 0.964, "
        "development 0.703 -> 0.626: kept, as the development set was written from the APIs' docs.",
    )
    central: float = _weight(
        0.3,
        0.0,
        "Per log of the types pointing at the owner (a Crate's tags over a Box's, an Issue's fields over a payload's). "
        "Neutral: tuning 0.945 -> 0.964, at 1 0.727 -> 0.691; development 0.703 -> 0.637.",
    )
    root_references: int = _weight(
        10,
        0,
        "Roots count as pointed at by this many types, as central as a busy object type. At none: tuning 0.945 -> 0.818.",
    )

    # -- how the schema's structure is read
    alias_uses: int = _weight(
        2,
        10**9,
        "A word is another name of a type once two fields (a root field counts two) return it under that word. "
        "No other names at all: tuning 0.945 -> 0.964, development 0.703 -> 0.670.",
    )
    aliases_kept: int = _weight(
        12,
        0,
        "At most this many other names per type, so a much-returned type's document stays short. "
        "None kept: tuning 0.945 -> 0.964, development 0.703 -> 0.670, as with no other names at all.",
    )
    typo: float = _weight(
        0.85,
        1.01,
        "A spelling neighbour this close ('Potato_peal' for 'Potato_peel') is a typo, named before what the words mean. "
        "The bench does not measure it, and no test fails at 1.01: no figure moves.",
    )

    # -- word tables
    synonyms: Mapping[str, tuple[str, ...]] = _table(
        _SYNONYMS,
        "Words people say against words APIs use ('ticket', 'repo', 'me'). Empty: tuning 0.945 -> 0.836, development 0.703 -> 0.659.",
    )
    concepts: Mapping[str, str] = _table(
        _CONCEPTS,
        "The words people use for a kind of field the structure shows (`_Structure.concepts`). "
        "Empty: tuning 0.945 -> 0.927, development 0.703 -> 0.681.",
    )
    event_words: frozenset[str] = _table(
        frozenset("event events history log audit timeline activity".split()),
        "The last word of a type's name, or a word of its description, that makes a list of it a history. "
        "Empty: development 0.703 -> 0.681.",
    )
    permission_words: frozenset[str] = _table(
        frozenset("permission permissions role roles access privilege privileges admin administrator".split()),
        "Words of a field, what it returns or its edges, that make it about who may do what. Empty: no figure moves "
        "at 5 or 1, and test_a_role_or_permission_says_who_may_do_something fails.",
    )
    write_verbs: frozenset[str] = _table(
        _WRITE_VERBS,
        "English write verbs; those that begin or end a mutation's name here are the API's own (issueCreate, closeIssue). "
        "Empty: tuning 0.945 -> 0.927.",
    )

    @property
    def field_weights(self) -> Mapping[str, float]:
        """How much a word counts in each field of a tool's document."""
        return {part: getattr(self, part) for part in _DOCUMENT_FIELDS}


_DOCUMENT_FIELDS = ("name", "type", "kind", "returns", "arguments", "description", "type_alias", "returns_alias", "shape", "concept")

#: The ranking the search uses.
RANKING = Ranking()


class Weight(NamedTuple):
    """One field of a ranking: its name, value, neutral value and why it has its value."""

    name: str
    value: Any
    neutral: Any
    why: str


def weights(ranking: Ranking = RANKING) -> list[Weight]:
    """Every field of `ranking`, in the order written."""
    return [Weight(f.name, getattr(ranking, f.name), f.metadata["neutral"], f.metadata["why"]) for f in fields(ranking)]


def neutral(ranking: Ranking, name: str) -> Ranking:
    """`ranking` with the field `name` at its neutral value."""
    return replace(ranking, **{name: next(w.neutral for w in weights(ranking) if w.name == name)})
