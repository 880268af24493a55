"""Which fields an object's preview reads, and in what order: what names the object first, then what
it says (a body, a description), then other short scalars (short lists of them too: a form error's
messages, an item's tags), dates, URLs, bookkeeping timestamps, and surrogate numbers last.

A field earns its place by what it tells the model, not because room is free. A record's own
bookkeeping (when it was created, edited, updated: `createdAt`, SWAPI's `edited`) says nothing about
the thing it records, unlike a date that does (`releaseDate`, `dueDate`): it is known from its name,
or from a description that says the time a record was created or changed, and ranks after URLs.

A preview is read whenever an object is minted, so the model need not call one tool per scalar; it
earns its bytes when it says which object this is (a name, a title, a number, a key) and what it
says, before what merely describes it. A database's own row number (`databaseId`,
`fullDatabaseId`) and a foreign key whose object a tool reaches (`authorId` beside `author`) tell
the model nothing the `Type#N` and that tool do not: they rank last, and are the first to give way
to the room a page leaves each object (calls/_preview_pages.py). A second rendering of a text (`bodyText`
and `bodyHTML` beside `body`) repeats it and is not read at all.
"""

from __future__ import annotations

import re

from graphql import (
    GraphQLEnumType,
    GraphQLField,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLSchema,
    Undefined,
    get_named_type,
    is_composite_type,
    is_list_type,
    is_non_null_type,
)

from ..load._dialect import Dialect

__all__ = [
    "BOOKKEEPING",
    "CONTENT",
    "ID_LIKE",
    "LEAN",
    "NAMING",
    "LONG_TEXT",
    "NAMING",
    "OTHER",
    "PREVIEW_LIMIT",
    "SURROGATE",
    "TIMESTAMP",
    "URL",
    "VALUE_FIELDS",
    "choose_preview_fields",
    "field_rank",
    "preview_rank",
    "value_fields",
]

#: Fields a preview reads of one type. Each costs its name in every document that reads the type and
#: its value in every answer; twelve cover the scalars of most types that a person would look at
#: (a book's title, author, year, rating and its computed columns), leaving out surrogate numbers.
PREVIEW_LIMIT = 12
#: Ranks, in the order a preview reads them. LONG_TEXT is known only from a value (see calls/_preview_pages.py).
#: From LEAN on, a page of several objects leaves a column out (calls/_preview_pages.py).
NAMING, CONTENT, OTHER, TIMESTAMP, LONG_TEXT, URL, BOOKKEEPING, SURROGATE = range(8)
LEAN = LONG_TEXT

# Fields that name an object, best first; then id-like scalars (`id`, `key`, `fooId`, an `ID`).
_NAMES = ("name", "title", "login", "displayName", "fullName", "username", "slug", "key", "number", "code")
#: Where an id-like field ranks: after every field that names an object in words (see preview_rank).
ID_LIKE = (NAMING, len(_NAMES))
# Fields that hold what an object says, best first: a comment's body, a repository's description.
_CONTENT = ("body", "text", "content", "message", "description", "summary", "abstract", "bio", "caption", "subject", "headline")
_CONTENT_NAME = re.compile(r".(Body|Text|Content|Message|Description|Summary|Abstract|Bio|Caption|Subject|Headline)$")
# Scalars that hold no text; "" stands for an enum.
_NOT_TEXT = frozenset(("", "Int", "Float", "Boolean", "ID", "BigInt", "Long"))
# A second rendering of a text (`bodyHTML`, `bodyText`, `messageHeadline`), named after the text.
_RENDERING = re.compile(r"(HTML|Html|Text|Markdown|Plain|Raw|Body|Headline|Short|Preview)")
# Short scalars that say the most about an object after its name.
_TELLING = ("state", "status")
_COUNT = re.compile(r"(^(count|total)$|.(Count|Total)$|^(number|num)Of[A-Z])")
_ID_LIKE = re.compile(r"(^id$|^key$|.(Id|ID|_id|Ids|IDs)$)")
# A row number of the API's own database: it names nothing the model can use.
_SURROGATE_NAME = re.compile(r"(^|.)([dD]atabase|[lL]egacy|[iI]nternal)(Id|ID|_id)$")
_FOREIGN_KEY = re.compile(r"^(.+?)(Id|ID|_id|Ids|IDs|_ids)$")
# What the viewer may do with an object (`viewerCanUpdate`): after what the object is.
_VIEWER = re.compile(r"^viewer[A-Z]")
_TIMESTAMP_NAME = re.compile(r"(^(created|updated|edited|modified|deleted|published|born|died|date|time|timestamp)$|.(At|Date|Time|On)$)")
_TIMESTAMP_TYPE = re.compile(r"(date|time|timestamp|instant)", re.IGNORECASE)
# When a record was made or changed, rather than anything about what it records.
_LIFECYCLE = r"(created|creation|updated|edited|modified|changed|deleted|archived|inserted|indexed|synced|touched)"
_BOOKKEEPING_NAME = re.compile(rf"^(last|date|time)?_?{_LIFECYCLE}(_?(at|on|date|time|timestamp|stamp))?$", re.IGNORECASE)
_BOOKKEEPING_TEXT = re.compile(
    rf"\b(time|date|moment|timestamp|when)\b[^.]{{0,60}}\b(this|the|a)\b[^.]{{0,30}}\b(was|is|were|got|last)\b\s+(last\s+)?{_LIFECYCLE}",
    re.IGNORECASE,
)
_URL_NAME = re.compile(r"(^(url|uri|href|link|homepage|website)$|.(Url|URL|Uri|URI|Href|Link)$)")
_URL_TYPE = re.compile(r"^(URI|URL|Url|Uri|HTML|Link)$")


def preview_rank(field_name: str, scalar_name: str, reachable: frozenset[str] = frozenset(), description: str = "") -> tuple[int, int]:
    """Where a field goes in a preview, from its name, its scalar type's name and its description:
    (rank, order within it). `reachable` are the type's fields that return objects: `authorId` beside
    `author` is a foreign key whose object the `Type_author` tool reads, so it ranks with the surrogates."""
    if field_name in _NAMES:
        return NAMING, _NAMES.index(field_name)
    if scalar_name not in _NOT_TEXT and _BOOKKEEPING_TEXT.search(description or ""):
        return BOOKKEEPING, 0  # the schema says so: the time a record was made or changed
    if _BOOKKEEPING_NAME.match(field_name):
        return TIMESTAMP, 1  # named like one: a date all the same (a review's `createdAt` is when it was written)
    if _URL_TYPE.match(scalar_name) or _URL_NAME.search(field_name):
        return URL, 0
    if _TIMESTAMP_TYPE.search(scalar_name) or _TIMESTAMP_NAME.search(field_name):
        return TIMESTAMP, 0
    if _SURROGATE_NAME.search(field_name) or _foreign_key(field_name, reachable):
        return SURROGATE, 0
    if scalar_name == "ID" or _ID_LIKE.search(field_name):
        return NAMING, len(_NAMES)
    if scalar_name not in _NOT_TEXT:
        if field_name in _CONTENT:
            return CONTENT, _CONTENT.index(field_name)
        if _CONTENT_NAME.search(field_name):
            return CONTENT, len(_CONTENT)
    if field_name in _TELLING or (scalar_name == "" and not _VIEWER.match(field_name)):  # a state, as an enum says it
        return OTHER, 0
    if _COUNT.search(field_name):
        return OTHER, 1
    if _VIEWER.match(field_name):
        return OTHER, 3
    return OTHER, 2


def _foreign_key(field_name: str, reachable: frozenset[str]) -> bool:
    """Whether `field_name` holds the key of an object one of `reachable` reads: `authorId` beside
    `author`, `authorByAuthorId` or a field of type `Author`, whatever the reading field is called."""
    match = _FOREIGN_KEY.match(field_name)
    if match is None:
        return False
    base, suffix = match.groups()
    base_lower = base.lower()
    many = suffix.lower().endswith("s")
    for name in reachable:
        reader, _, type_name = name.partition(":")
        lowered = reader.lower()
        if lowered == base_lower or (many and lowered == base_lower + "s"):
            return True
        if lowered.startswith(base_lower) and field_name.lower() in lowered:  # PostGraphile's `authorByAuthorId`
            return True
        if type_name and type_name.lower() == base_lower:  # `writerId` beside `writtenBy: Writer`
            return True
    return False


def reachable_fields(type_: GraphQLObjectType) -> frozenset[str]:
    """The fields of `type_` that return objects without arguments (each one a tool), with their named
    type (`name:Type`) and alone: what a foreign key points to."""
    out: set[str] = set()
    for name, field in type_.fields.items():
        named = get_named_type(field.type)
        if is_composite_type(named):
            out.add(name)
            if not any(is_non_null_type(a.type) and a.default_value is Undefined for a in field.args.values()):
                out.add(f"{name}:{named.name}")
    return frozenset(out)


def field_rank(schema: GraphQLSchema, type_name: str, field_name: str) -> tuple[int, int]:
    """`preview_rank` of one field of a type in `schema`, as `choose_preview_fields` ranked it."""
    type_ = schema.get_type(type_name)
    field = type_.fields.get(field_name) if isinstance(type_, GraphQLObjectType) else None
    if field is None:
        return preview_rank(field_name, "")
    return _rank_of(field_name, field, reachable_fields(type_))  # type: ignore[arg-type]


def _rank_of(name: str, field: GraphQLField, reachable: frozenset[str]) -> tuple[int, int]:
    """`preview_rank` of a field; a list of scalars ranks as one of its items would (`messages` as a message)."""
    named = get_named_type(field.type)
    scalar = named.name if isinstance(named, GraphQLScalarType) else ""
    if _is_list(field.type):
        single = name[:-1] if name.endswith("s") and len(name) > 3 else name
        rank = preview_rank(single, scalar, reachable, field.description or "")
        return rank if rank[0] in (CONTENT, TIMESTAMP, BOOKKEEPING) else (OTHER, 1)  # tags, labels: short content
    return preview_rank(name, scalar, reachable, field.description or "")


def _is_list(type_: GraphQLOutputType) -> bool:
    inner = type_.of_type if is_non_null_type(type_) else type_
    return is_list_type(inner)


def _scalar_list(type_: GraphQLOutputType) -> bool:
    """A list of scalars or enums, one level deep (`[String!]!`): a preview shows its first items."""
    inner = type_.of_type if isinstance(type_, GraphQLNonNull) else type_
    if not isinstance(inner, GraphQLList):
        return False
    item = inner.of_type.of_type if isinstance(inner.of_type, GraphQLNonNull) else inner.of_type
    return isinstance(item, (GraphQLScalarType, GraphQLEnumType))


#: Fields a value object a preview reads whole may have (`Money { amount currency }`).
VALUE_FIELDS = 4


def value_fields(schema: GraphQLSchema, dialect: Dialect, field: GraphQLField) -> tuple[str, ...]:
    """The fields of the value object `field` gives, where a preview reads it whole as one value: an
    object type with no identity (no id, no lookup) whose few fields are all argument-free scalars
    and enums (a price's amount and currency, a size's width and height); () for anything else."""
    if field.args or field.deprecation_reason is not None or _is_list(field.type):
        return ()
    named = get_named_type(field.type)
    if not isinstance(named, GraphQLObjectType) or named in (schema.query_type, schema.mutation_type) or "id" in named.fields:
        return ()
    if dialect.identity(named.name) is not None or len(named.fields) > VALUE_FIELDS:
        return ()
    inner = named.fields.values()
    if any(f.args or _is_list(f.type) or not isinstance(get_named_type(f.type), (GraphQLScalarType, GraphQLEnumType)) for f in inner):
        return ()
    return tuple(named.fields)


def choose_preview_fields(schema: GraphQLSchema, dialect: Dialect, type_name: str) -> tuple[str, ...]:
    """Scalar and enum fields without arguments, not deprecated and not object references, in the
    order a preview shows them (see `preview_rank`); at most PREVIEW_LIMIT of them.

    An id the handle is re-rooted on is left out where it is opaque (Relay's global `node` id, a
    Dagger id): the `Type#N` already stands for it and the model has no use for its bytes. Other ids
    (a primary key) tell objects apart and are kept with the names; a database's row number and a
    foreign key rank last. A text's second rendering (`bodyText`, `descriptionHTML`) is left out
    where the text itself is read: its own tool reads it."""
    type_ = schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType):
        return ()
    identity = dialect.identity(type_name)
    opaque = identity.field if identity and (identity.root_field == "node" or identity.root_field.startswith("load")) else None
    reachable = reachable_fields(type_)
    candidates: dict[str, tuple[int, int]] = {}
    for name, field in type_.fields.items():
        named = get_named_type(field.type)
        if field.args or field.deprecation_reason is not None or name == opaque:
            continue
        if value_fields(schema, dialect, field):  # a price, a size: a value in its own right, read whole
            candidates[name] = (OTHER, 2)
            continue
        if not isinstance(named, (GraphQLScalarType, GraphQLEnumType)) or (_is_list(field.type) and not _scalar_list(field.type)):
            continue
        if dialect.object_argument(field, name) is not None:
            continue
        candidates[name] = _rank_of(name, field, reachable)
    texts = [name for name, rank in candidates.items() if rank[0] == CONTENT]
    chosen = sorted(
        (rank, position, name)
        for position, (name, rank) in enumerate(candidates.items())
        if not any(name != text and name.startswith(text) and _RENDERING.match(name, len(text)) for text in texts)
    )
    return tuple(name for _, _, name in chosen[:PREVIEW_LIMIT])
