"""Find tools by words: "who starred a repository" -> `Repository_stargazers`.

Each tool is a small document of fields: the words of its field name, of its owner type, of what it
returns (a connection's node type), of its arguments and of its description, ranked with BM25F (a
word in the name says more than one in the description; rare words weigh more). No service and no
model: the index is a dict of postings built once per catalogue and shared by its sessions.

The schema's structure speaks before any word list (`_Structure`): a type is also called by the
fields that return it, a connection's edges and the returned type's description describe a field, a
list of events reads as a history, a need names what it wants before where from, and a field's place
(objects, many of them, on a type much pointed at) counts before its words. Words are folded by
`_words`. A name that is no tool is answered by what its words mean too (`suggest_tools`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from graphql import GraphQLObjectType, is_abstract_type, is_object_type

from .. import _words
from .._words import BOOKKEEPING, CONCEPTS, EVENT_WORDS, PERMISSION_WORDS, WRITE_VERBS, search_words, tool_line
from .._words import SPLIT as _SPLIT
from .._words import STOP as _STOP
from .._words import stem as _stem
from ._catalogue import Catalogue, is_list
from ._reach import ConnectionShape

__all__ = ["SearchEntry", "SearchHit", "SearchIndex", "catalogue_entries", "catalogue_search", "search_words", "suggest_tools", "tool_line"]

#: How much a word counts in each field of a tool.
WEIGHTS: Mapping[str, float] = {
    "name": 3.0,
    "type": 2.0,
    "kind": 0.5,
    "returns": 1.2,
    "arguments": 0.5,
    "description": 1.0,
    # what the schema's structure says: other names of the owner and of what comes back, the returned
    # type's own description and its edges' values, and the kind of field its shape shows
    "type_alias": 0.3,
    "returns_alias": 0.3,
    "shape": 0.5,
    "concept": 0.8,
}
#: A query names what it wants first and where from after ("the pull request that fixed this issue"):
#: a field that returns the first type named and belongs to a later one gains this share, and one
#: that reads the same relation the other way loses it.
_DIRECTION = 0.5
#: How much a tool gains when the query covers the words that name it (its field and its type):
#: "the comments of an issue" names `Issue_comments` whole, `IssueSearchResult_sourceComment` in part.
_COVERAGE = 1.5
#: A word of the query that is a word of the field's name as written (plural for plural) adds this.
_EXACT = 0.3
#: Only the best this many by BM25F are ranked again by coverage: a query stays within a few ms.
_RERANKED = 300
#: A write the query asks for by its verb ("close an issue") over reads that share its nouns.
_ACTION = 1.4
_K1 = 1.2
_B = 0.6
#: Root tools are where a model starts; among equals they come first.
_ROOT_BOOST = 1.15
#: What a tool's place says before any word (`_prior`): a field returning objects gains the first share
#: and one returning many of them the second again; a field gains the third per log of the types that
#: point at its owner (an `Issue` many, a payload none), roots counted as pointed at by the fourth.
_OBJECT, _MANY, _CENTRAL, _ROOT_REFERENCES = 0.3, 0.3, 0.3, 10


@dataclass(frozen=True, slots=True)
class SearchEntry:
    """One searchable tool: its name, its words per field, and the line a search answers with."""

    name: str
    fields: Mapping[str, str]
    line: str
    root: bool = False
    #: what the tool's place says of it before any word (`_prior`); whether it returns many objects
    prior: float = 1.0
    many: bool = False


@dataclass(frozen=True, slots=True)
class SearchHit:
    name: str
    line: str
    score: float


@dataclass
class SearchIndex:
    """BM25F postings over a fixed set of entries. Building is linear in the words; a query reads only
    the postings of its own words."""

    entries: list[SearchEntry]
    #: word -> (entry, its saturated weight there)
    _postings: dict[str, list[tuple[int, float]]] = field(default_factory=dict, init=False, repr=False)
    _lengths: list[float] = field(default_factory=list, init=False, repr=False)
    _keys: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)
    _exact: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)
    _owners: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)
    _returns: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)
    _type_words: set[str] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        counts: list[dict[str, float]] = []
        folded: dict[str, list[str]] = {}  # the same type names and descriptions recur in many entries
        for entry in self.entries:
            weighted: dict[str, float] = {}
            length = 0.0
            for part, text in entry.fields.items():
                weight = WEIGHTS.get(part, 1.0)
                words = folded.get(text)
                if words is None:
                    words = folded[text] = search_words(text)
                for word in words:
                    weighted[word] = weighted.get(word, 0.0) + weight
                    length += weight
            counts.append(weighted)
            self._lengths.append(length)
            self._exact.append(frozenset(part.lower() for part in _SPLIT.findall(entry.fields.get("name", ""))))
            self._keys.append(frozenset(search_words(f"{entry.fields.get('name', '')} {entry.fields.get('type', '')}")))
            owners = frozenset(search_words(f"{entry.fields.get('type', '')} {entry.fields.get('type_alias', '')}"))
            returns = frozenset(search_words(f"{entry.fields.get('returns', '')} {entry.fields.get('returns_alias', '')}"))
            self._owners.append(owners)
            self._returns.append(returns)
            self._type_words.update(owners, returns)
        self._actions = _actions(self.entries)
        average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0
        self._average = average or 1.0
        for number, weighted in enumerate(counts):
            for word, tf in weighted.items():
                # BM25's saturated term frequency depends only on the entry: computed once, here
                norm = tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * self._lengths[number] / self._average))
                self._postings.setdefault(word, []).append((number, norm))

    def __len__(self) -> int:
        return len(self.entries)

    def _idf(self, word: str) -> float:
        found = len(self._postings.get(word, ()))
        total = len(self.entries)
        return math.log(1 + (total - found + 0.5) / (found + 0.5))

    def _stems(self, word: str) -> list[str]:
        """A query word's stems: "subcategories" is "sub" and "category" where the API has no such word."""
        if word in _STOP:
            return []
        stem = _stem(word)
        if stem not in self._postings and word.startswith("sub") and len(word) > 6 and _stem(word[3:]) in self._postings:
            return ["sub", _stem(word[3:])]
        return [stem]

    def _direction(self, query: str) -> tuple[str, frozenset[str]] | None:
        """The first type a query names (what it wants) and the types it names after it (where from)."""
        named = [stem for part in _SPLIT.findall(query) for stem in self._stems(part.lower()) if stem in self._type_words]
        if len(named) < 2:
            return None
        return named[0], frozenset(named[1:])

    def _terms(self, query: str) -> dict[str, float]:
        """The query's stems with their weights: its own words at 1, their synonyms at 0.5."""
        terms: dict[str, float] = {}
        for part in _SPLIT.findall(query):
            word = part.lower()
            stems = self._stems(word)
            for stem in stems:
                terms[stem] = max(terms.get(stem, 0.0), 1.0)
            for alt in (*_words.SYNONYMS.get(word, ()), *(a for s in stems for a in _words.SYNONYMS.get(s, ()))):
                stem = _stem(alt)
                terms.setdefault(stem, 0.5)
        return {t: w for t, w in terms.items() if t in self._postings}

    def _query_actions(self, query: str) -> set[str]:
        """The verbs of a request ("close", "add") that name mutations here; a past form ("created")
        describes rather than asks, so it is no request."""
        found: set[str] = set()
        for part in _SPLIT.findall(query):
            word = part.lower()
            if word.endswith("ed"):
                continue
            for stem in (_stem(word), *(_stem(alt) for alt in _words.SYNONYMS.get(word, ()))):
                if stem in self._actions:
                    found.add(stem)
        return found

    def search(self, query: str, *, limit: int = 10, names: Iterable[str] | None = None) -> list[SearchHit]:
        """The best `limit` entries for `query`, best first (only those in `names` when given)."""
        allowed = set(names) if names is not None else None
        scores: dict[int, float] = {}
        terms = self._terms(query)
        entries = self.entries
        for term, weight in terms.items():
            idf = self._idf(term) * weight
            for number, norm in self._postings[term]:
                if allowed is None or entries[number].name in allowed:  # before the cut, so a few names are all ranked
                    scores[number] = scores.get(number, 0.0) + idf * norm
        best = heapq.nlargest(_RERANKED, scores.items(), key=lambda item: item[1])
        acts = self._query_actions(query)
        exact = {part.lower() for part in _SPLIT.findall(query)}
        direction = self._direction(query)
        ranked: list[SearchHit] = []
        for number, score in best:
            entry = self.entries[number]
            if allowed is not None and entry.name not in allowed:
                continue
            keys = self._keys[number]
            covered = sum(terms.get(key, 0.0) for key in keys) / len(keys) if keys else 0.0
            covered += _EXACT * len(exact & self._exact[number]) / len(self._exact[number] or (1,))
            score *= 1 + _COVERAGE * covered
            if acts and entry.fields.get("kind") == "mutation" and acts & keys:
                score *= _ACTION
            if direction is not None and not entry.root:
                wanted, sources = direction
                returns = self._returns[number]
                owners = self._owners[number]
                if wanted in returns and (sources & owners) - returns:
                    score *= 1 + _DIRECTION
                elif wanted in owners and wanted not in returns and sources & returns:
                    # the same relation read from the other side, its many objects no gain
                    score /= (1 + _DIRECTION) * ((1 + _MANY) if entry.many else 1)
            ranked.append(SearchHit(entry.name, entry.line, score * entry.prior * (_ROOT_BOOST if entry.root else 1.0)))
        ranked.sort(key=lambda hit: (-hit.score, hit.name))
        return ranked[:limit]


def _actions(entries: list[SearchEntry]) -> frozenset[str]:
    """The write verbs that begin or end mutations' names here (`addStar`, `issueCreate`)."""
    verbs = {_stem(verb) for verb in WRITE_VERBS}
    found: set[str] = set()
    for entry in entries:
        if entry.fields.get("kind") == "mutation":
            words = search_words(entry.fields.get("name", ""))
            found.update(word for word in (words[:1] + words[-1:]) if word in verbs)
    return frozenset(found)


def catalogue_entries(catalogue: Catalogue) -> list[SearchEntry]:
    """One entry per catalogue tool, its words read from the schema: the field, its owner and what it
    returns, and what the schema's structure says of them (see `_Structure`)."""
    entries: list[SearchEntry] = []
    schema = catalogue.schema
    structure = _Structure(catalogue)
    for name in catalogue.names():
        ref = catalogue.ref(name)
        owner = schema.get_type(ref.type_name)
        assert isinstance(owner, GraphQLObjectType)
        graphql_field = owner.fields[ref.field_name]
        target = catalogue.target(name)
        connection = catalogue.connection(target)
        returns = connection.node_type if connection is not None else target
        root = catalogue.is_root(ref.type_name)
        arguments = " ".join(f"{arg} {(value.description or '')[:80]}" for arg, value in graphql_field.args.items())
        kind = "mutation" if ref.type_name == catalogue.mutation_type else "query" if root else "field"
        line = tool_line(graphql_field.description, f"{ref.type_name} {ref.field_name}")
        many = connection is not None or is_list(graphql_field.type)
        shown = f"{returns} list" if many else returns
        objects = is_object_type(returned := schema.get_type(returns)) or is_abstract_type(returned)
        entries.append(
            SearchEntry(
                name=name,
                fields={
                    "name": ref.field_name,
                    "type": "" if root else ref.type_name,
                    "kind": kind,
                    "returns": returns,
                    "arguments": arguments,
                    "description": graphql_field.description or "",
                    "type_alias": "" if root else structure.aliases(ref.type_name),
                    "returns_alias": structure.aliases(returns),
                    "shape": structure.shape(returns, connection),
                    "concept": structure.concepts(ref.type_name, ref.field_name, returns, many, connection),
                },
                line=f"{line} Returns {shown}.",
                root=root,
                prior=_prior(root, structure.references.get(ref.type_name, 0), objects, many),
                many=many and objects,
            )
        )
    return entries


def _prior(root: bool, references: int, objects: bool, many: bool) -> float:
    """Needs ask for things more than for values, for many more than one, and of central types."""
    prior = 1 + _CENTRAL * math.log1p(_ROOT_REFERENCES if root else references)
    return prior * (1 + _OBJECT) * ((1 + _MANY) if many else 1) if objects else prior


_BOOKKEEPING = frozenset(search_words(BOOKKEEPING))
_EVENT_WORDS = frozenset(search_words(EVENT_WORDS))
_PERMISSION_WORDS = frozenset(search_words(PERMISSION_WORDS))


class _Structure:
    """What a schema says of its types by how they are used, read once per catalogue: other names of
    a type (Saleor's `customers` return `User`), a returned type's shape (its description, its edges'
    values), kinds a shape shows (a list of events is a history, of the owner's type its parts, a
    role field says who may do what), and how many types point at each."""

    def __init__(self, catalogue: Catalogue) -> None:
        self._catalogue = catalogue
        self._schema = catalogue.schema
        self._descriptions: dict[str, str] = {}
        self._events: dict[str, bool] = {}
        self._roles: dict[str, bool] = {}
        counts: dict[str, dict[str, int]] = {}
        referrers: dict[str, set[str]] = {}
        for name in catalogue.names():
            ref = catalogue.ref(name)
            target = catalogue.target(name)
            connection = catalogue.connection(target)
            returns = connection.node_type if connection is not None else target
            if ref.type_name != catalogue.mutation_type:
                referrers.setdefault(returns, set()).add(ref.type_name)
            graphql_field = catalogue.field(ref)
            if not (catalogue.is_root(ref.type_name) or connection is not None or is_list(graphql_field.type)):
                continue
            if ref.type_name == catalogue.mutation_type:
                continue
            own = set(search_words(returns))
            for word in set(search_words(ref.field_name)) - own - _BOOKKEEPING:
                by_word = counts.setdefault(returns, {})
                by_word[word] = by_word.get(word, 0) + (2 if catalogue.is_root(ref.type_name) else 1)
        self._aliases = {type_name: " ".join(sorted(w for w, n in words.items() if n >= 2)[:12]) for type_name, words in counts.items()}
        #: how many types have a field that returns each type (mutations aside)
        self.references = {type_name: len(owners) for type_name, owners in referrers.items()}

    def aliases(self, type_name: str) -> str:
        return self._aliases.get(type_name, "")

    def _description(self, type_name: str) -> str:
        if type_name not in self._descriptions:
            type_ = self._schema.get_type(type_name)
            self._descriptions[type_name] = tool_line(getattr(type_, "description", None), "") if type_ is not None else ""
        return self._descriptions[type_name]

    def shape(self, returns: str, connection: ConnectionShape | None) -> str:
        edges = " ".join(connection.edge_fields) if connection is not None else ""
        return f"{self._description(returns)} {edges}".strip()

    def _eventful(self, type_name: str) -> bool:
        if type_name not in self._events:
            self._events[type_name] = self._is_eventful(type_name)
        return self._events[type_name]

    def _is_eventful(self, type_name: str) -> bool:
        words = search_words(type_name)
        if words and words[-1] in _EVENT_WORDS:
            return True
        type_ = self._schema.get_type(type_name)
        if is_abstract_type(type_):
            members = [search_words(t.name) for t in self._schema.get_possible_types(type_)]
            if members and sum(1 for m in members if m and m[-1] in _EVENT_WORDS) * 2 >= len(members):
                return True
        return bool(_EVENT_WORDS & set(search_words(self._description(type_name))))

    def _carries_role(self, type_name: str) -> bool:
        """A type one of whose own fields is just a role or permission (`role`, `permissions`)."""
        if type_name not in self._roles:
            type_ = self._schema.get_type(type_name)
            fields = getattr(type_, "fields", None) or {}
            self._roles[type_name] = any(len(words) == 1 and words[0] in _PERMISSION_WORDS for words in map(search_words, fields))
        return self._roles[type_name]

    def concepts(self, owner: str, field_name: str, returns: str, many: bool, connection: ConnectionShape | None) -> str:
        found: list[str] = []
        if many and self._eventful(returns):
            found.append(CONCEPTS["history"])
        if many and returns == owner:
            found.append(CONCEPTS["part"])
        edges = connection.edge_fields if connection is not None else ()
        said = set(search_words(" ".join((field_name, returns, *edges))))
        if said & _PERMISSION_WORDS or self._carries_role(returns):
            found.append(CONCEPTS["permission"])
        return " ".join(found)


def catalogue_search(catalogue: Catalogue) -> SearchIndex:
    """The catalogue's search index, built on first use and kept with the catalogue."""
    return catalogue.derived("search index", lambda: SearchIndex(catalogue_entries(catalogue)))


#: A spelling neighbour this close ("Potato_peal" for "Potato_peel") is a typo, named before meanings.
_TYPO = 0.85


def suggest_tools(catalogue: Catalogue, name: str, *, limit: int = 3) -> list[str]:
    """Tools for a name that is none: what search finds for its words, among its type's tools when its
    prefix names a type (`Starship_pilots` -> `Starship_pilotConnection`), beside its spelling
    neighbours (`Starship_MGLT`). A neighbour that is nearly the name comes first: that is a typo."""
    spelt = catalogue.suggest(name, limit=limit)
    prefix, _, rest = name.partition("_")
    pool = catalogue.tools_for_type(prefix) if rest else []
    words = rest if pool else name
    meant = [hit.name for hit in catalogue_search(catalogue).search(words, limit=limit, names=pool or None)] if search_words(words) else []
    typos = [n for n in spelt if SequenceMatcher(None, n.lower(), name.lower()).ratio() >= _TYPO]
    return list(dict.fromkeys([*typos, *meant, *spelt]))[:limit]
