"""Find tools by words: "who starred a repository" -> `Repository_stargazers`.

Each tool is a small document of fields: the words of its field name, of its owner type, of what it
returns (a connection's node type), of its arguments and of its description, ranked with BM25F (a
word in the name says more than one in the description; rare words weigh more). No service and no
model: the index is a dict of postings built once per catalogue and shared by its sessions.

The schema's structure speaks before any word list (`_Structure`): a type is also called by the
fields that return it, a connection's edges and the returned type's description describe a field, a
list of events reads as a history, a need names what it wants before where from, and a field's place
(objects, many of them, on a type much pointed at) counts before its words, and a mutation comes
before the fields of its own payload, which only its call hands out. Every figure and word table it
weighs is in `_ranking`, with the case that set it; words are folded by `_words`. A name that is no
tool is answered by what its words mean too (`suggest_tools`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from graphql import GraphQLObjectType, Undefined, is_abstract_type, is_non_null_type, is_object_type

from .._words import SPLIT as _SPLIT
from .._words import STOP as _STOP
from .._words import search_words, tool_line
from .._words import stem as _stem
from ._catalogue import Catalogue, is_list
from ._ranking import RANKING, Ranking
from ._reach import ConnectionShape

__all__ = [
    "PAGING",
    "SearchEntry",
    "SearchHit",
    "SearchIndex",
    "catalogue_entries",
    "catalogue_search",
    "search_words",
    "suggest_tools",
    "takes_line",
    "tool_line",
]


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
    #: for a field of a mutation's payload (a type only mutations return): those mutations' tools
    answers: tuple[str, ...] = ()


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
    ranking: Ranking = RANKING
    #: word -> (entry, its saturated weight there)
    _postings: dict[str, list[tuple[int, float]]] = field(default_factory=dict, init=False, repr=False)
    _lengths: list[float] = field(default_factory=list, init=False, repr=False)
    _keys: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)
    _exact: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)
    _owners: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)
    _returns: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)
    _type_words: set[str] = field(default_factory=set, init=False, repr=False)
    _numbers: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        counts: list[dict[str, float]] = []
        folded: dict[str, list[str]] = {}  # the same type names and descriptions recur in many entries
        field_weights = self.ranking.field_weights
        for number, entry in enumerate(self.entries):
            self._numbers[entry.name] = number
            weighted: dict[str, float] = {}
            length = 0.0
            for part, text in entry.fields.items():
                weight = field_weights.get(part, 1.0)
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
        self._actions = _actions(self.entries, self.ranking)
        average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0
        self._average = average or 1.0
        k1, b = self.ranking.k1, self.ranking.b
        for number, weighted in enumerate(counts):
            for word, tf in weighted.items():
                # BM25's saturated term frequency depends only on the entry: computed once, here
                norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * self._lengths[number] / self._average))
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
        """The query's stems with their weights: its own words at 1, their synonyms at a share of that."""
        synonyms = self.ranking.synonyms
        terms: dict[str, float] = {}
        for part in _SPLIT.findall(query):
            word = part.lower()
            stems = self._stems(word)
            for stem in stems:
                terms[stem] = max(terms.get(stem, 0.0), 1.0)
            for alt in (*synonyms.get(word, ()), *(a for s in stems for a in synonyms.get(s, ()))):
                stem = _stem(alt)
                terms.setdefault(stem, self.ranking.synonym_share)
        return {t: w for t, w in terms.items() if t in self._postings}

    def _query_actions(self, query: str) -> set[str]:
        """The verbs of a request ("close", "add") that name mutations here; a past form ("created")
        describes rather than asks, so it is no request."""
        found: set[str] = set()
        for part in _SPLIT.findall(query):
            word = part.lower()
            if word.endswith("ed"):
                continue
            for stem in (_stem(word), *(_stem(alt) for alt in self.ranking.synonyms.get(word, ()))):
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
        best = heapq.nlargest(self.ranking.reranked, scores.items(), key=lambda item: item[1])
        reading = _Reading(terms, self._query_actions(query), {part.lower() for part in _SPLIT.findall(query)}, self._direction(query))
        ranked = {number: self._rescored(number, score, reading) for number, score in best}
        self._answers_first(ranked, scores, reading)
        order = sorted(ranked.items(), key=lambda item: (-item[1], bool(entries[item[0]].answers), entries[item[0]].name))
        return [SearchHit(entries[number].name, entries[number].line, score) for number, score in order[:limit]]

    def _rescored(self, number: int, score: float, reading: _Reading) -> float:
        """One candidate's BM25F score reranked: by how much of its name the query covers, a write
        asked by its verb, the direction of a relation, and its place."""
        ranking = self.ranking
        entry = self.entries[number]
        keys = self._keys[number]
        covered = sum(reading.terms.get(key, 0.0) for key in keys) / len(keys) if keys else 0.0
        covered += ranking.exact * len(reading.exact & self._exact[number]) / len(self._exact[number] or (1,))
        score *= 1 + ranking.coverage * covered
        if reading.actions and entry.fields.get("kind") == "mutation" and reading.actions & keys:
            score *= ranking.action
        if reading.direction is not None and not entry.root:
            wanted, sources = reading.direction
            returns = self._returns[number]
            owners = self._owners[number]
            if wanted in returns and (sources & owners) - returns:
                score *= 1 + ranking.direction
            elif wanted in owners and wanted not in returns and sources & returns:
                # the same relation read from the other side, its many objects no gain
                score /= (1 + ranking.direction) * ((1 + ranking.many) if entry.many else 1)
        return score * entry.prior * (ranking.root_boost if entry.root else 1.0)

    def _answers_first(self, ranked: dict[int, float], scores: dict[int, float], reading: _Reading) -> None:
        """A field of a mutation's payload is read only after that mutation is called: where the query's
        words reach both, the mutation that shares most of them ranks at least as high as the field
        (and before it among equals), so a model is led to the call and not to its answer."""
        for number, score in list(ranked.items()):
            mutations = [m for m in (self._numbers.get(n) for n in self.entries[number].answers) if m is not None and m in scores]
            if not mutations:
                continue
            best = max(mutations, key=lambda m: ranked[m] if m in ranked else self._rescored(m, scores[m], reading))
            ranked[best] = max(score, ranked[best] if best in ranked else self._rescored(best, scores[best], reading))


@dataclass(frozen=True, slots=True)
class _Reading:
    """What one query says, read once for every candidate: its terms with weights, the write verbs it
    asks by, its words as written, and the relation's direction it names."""

    terms: dict[str, float]
    actions: set[str]
    exact: set[str]
    direction: tuple[str, frozenset[str]] | None


def _actions(entries: list[SearchEntry], ranking: Ranking) -> frozenset[str]:
    """The write verbs that begin or end mutations' names here (`addStar`, `issueCreate`)."""
    verbs = {_stem(verb) for verb in ranking.write_verbs}
    found: set[str] = set()
    for entry in entries:
        if entry.fields.get("kind") == "mutation":
            words = search_words(entry.fields.get("name", ""))
            found.update(word for word in (words[:1] + words[-1:]) if word in verbs)
    return frozenset(found)


def catalogue_entries(catalogue: Catalogue, ranking: Ranking = RANKING) -> list[SearchEntry]:
    """One entry per catalogue tool, its words read from the schema: the field, its owner and what it
    returns, and what the schema's structure says of them (see `_Structure`)."""
    entries: list[SearchEntry] = []
    schema = catalogue.schema
    structure = _Structure(catalogue, ranking)
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
        takes = takes_line(graphql_field.args)
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
                line=f"{line}{f' Takes {takes}.' if takes else ''} Returns {shown}.",
                root=root,
                prior=_prior(ranking, root, structure.references.get(ref.type_name, 0), objects, many),
                many=many and objects,
                answers=() if root else structure.payload_of(ref.type_name),
            )
        )
    return entries


#: Arguments every page of a connection takes (Relay's): a search line leaves them out, the tool's schema has them.
PAGING = frozenset({"after", "before", "first", "last"})
#: Arguments a search line names, so a model can call a tool it found without reading its schema first.
_TAKES = 4


def takes_line(arguments: Any) -> str:
    """The arguments a search line names: `owner!, name!, followRenames` (`!`: required), paging left
    out, at most _TAKES and `…` for the rest."""
    names = [f"{n}!" if is_non_null_type(a.type) and a.default_value is Undefined else n for n, a in arguments.items() if n not in PAGING]
    return ", ".join(names[:_TAKES]) + (", …" if len(names) > _TAKES else "")


def _prior(ranking: Ranking, root: bool, references: int, objects: bool, many: bool) -> float:
    """Needs ask for things more than for values, for many more than one, and of central types."""
    prior = 1 + ranking.central * math.log1p(ranking.root_references if root else references)
    return prior * (1 + ranking.objects) * ((1 + ranking.many) if many else 1) if objects else prior


class _Structure:
    """What a schema says of its types by how they are used, read once per catalogue: other names of
    a type (Saleor's `customers` return `User`), a returned type's shape (its description, its edges'
    values), kinds a shape shows (a list of events is a history, of the owner's type its parts, a
    role field says who may do what), how many types point at each, and which types are mutations'
    payloads (returned by mutations alone)."""

    def __init__(self, catalogue: Catalogue, ranking: Ranking) -> None:
        self._catalogue = catalogue
        self._schema = catalogue.schema
        self._ranking = ranking
        self._event_words = frozenset(search_words(" ".join(ranking.event_words)))
        self._permission_words = frozenset(search_words(" ".join(ranking.permission_words)))
        self._descriptions: dict[str, str] = {}
        self._events: dict[str, bool] = {}
        self._roles: dict[str, bool] = {}
        counts: dict[str, dict[str, int]] = {}
        referrers: dict[str, set[str]] = {}
        payloads: dict[str, list[str]] = {}
        for name in catalogue.names():
            ref = catalogue.ref(name)
            target = catalogue.target(name)
            connection = catalogue.connection(target)
            returns = connection.node_type if connection is not None else target
            if ref.type_name == catalogue.mutation_type:
                payloads.setdefault(target, []).append(name)
            else:
                referrers.setdefault(returns, set()).add(ref.type_name)
            graphql_field = catalogue.field(ref)
            if not (catalogue.is_root(ref.type_name) or connection is not None or is_list(graphql_field.type)):
                continue
            if ref.type_name == catalogue.mutation_type:
                continue
            own = set(search_words(returns))
            for word in set(search_words(ref.field_name)) - own:
                by_word = counts.setdefault(returns, {})
                by_word[word] = by_word.get(word, 0) + (2 if catalogue.is_root(ref.type_name) else 1)
        self._aliases = {
            type_name: " ".join(sorted(w for w, n in words.items() if n >= ranking.alias_uses)[: ranking.aliases_kept])
            for type_name, words in counts.items()
        }
        #: how many types have a field that returns each type (mutations aside)
        self.references = {type_name: len(owners) for type_name, owners in referrers.items()}
        #: the types only mutations return, with those mutations' tools
        self._payloads = {type_name: tuple(names) for type_name, names in payloads.items() if type_name not in referrers}

    def aliases(self, type_name: str) -> str:
        return self._aliases.get(type_name, "")

    def payload_of(self, type_name: str) -> tuple[str, ...]:
        """The mutations whose payload `type_name` is (only mutations return it), or none."""
        return self._payloads.get(type_name, ())

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
        if words and words[-1] in self._event_words:
            return True
        type_ = self._schema.get_type(type_name)
        if is_abstract_type(type_):
            members = [search_words(t.name) for t in self._schema.get_possible_types(type_)]
            if members and sum(1 for m in members if m and m[-1] in self._event_words) * 2 >= len(members):
                return True
        return bool(self._event_words & set(search_words(self._description(type_name))))

    def _carries_role(self, type_name: str) -> bool:
        """A type one of whose own fields is just a role or permission (`role`, `permissions`)."""
        if type_name not in self._roles:
            type_ = self._schema.get_type(type_name)
            fields = getattr(type_, "fields", None) or {}
            self._roles[type_name] = any(len(words) == 1 and words[0] in self._permission_words for words in map(search_words, fields))
        return self._roles[type_name]

    def concepts(self, owner: str, field_name: str, returns: str, many: bool, connection: ConnectionShape | None) -> str:
        concepts = self._ranking.concepts
        found: list[str] = []
        if many and self._eventful(returns) and "history" in concepts:
            found.append(concepts["history"])
        if many and returns == owner and "part" in concepts:
            found.append(concepts["part"])
        edges = connection.edge_fields if connection is not None else ()
        said = set(search_words(" ".join((field_name, returns, *edges))))
        if (said & self._permission_words or self._carries_role(returns)) and "permission" in concepts:
            found.append(concepts["permission"])
        return " ".join(found)


def catalogue_search(catalogue: Catalogue) -> SearchIndex:
    """The catalogue's search index, built on first use and kept with the catalogue."""
    return catalogue.derived("search index", lambda: SearchIndex(catalogue_entries(catalogue, RANKING), RANKING))


def suggest_tools(catalogue: Catalogue, name: str, *, limit: int = 3) -> list[str]:
    """Tools for a name that is none: what search finds for its words, among its type's tools when its
    prefix names a type (`Starship_pilots` -> `Starship_pilotConnection`), beside its spelling
    neighbours (`Starship_MGLT`). A neighbour that is nearly the name comes first: that is a typo."""
    spelt = catalogue.suggest(name, limit=limit)
    prefix, _, rest = name.partition("_")
    pool = catalogue.tools_for_type(prefix) if rest else []
    words = rest if pool else name
    meant = [hit.name for hit in catalogue_search(catalogue).search(words, limit=limit, names=pool or None)] if search_words(words) else []
    typos = [n for n in spelt if SequenceMatcher(None, n.lower(), name.lower()).ratio() >= RANKING.typo]
    return list(dict.fromkeys([*typos, *meant, *spelt]))[:limit]
