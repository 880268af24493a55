"""Which fields an object's preview shows, and in what order: what names the object first, then other
short scalars, timestamps and URLs last.

A preview is read whenever an object is minted, so the model need not call one tool per scalar; it
earns its bytes when it says which object this is (a name, a title, a number, a key) before what
merely describes it. A page of objects is read by name, so timestamps and links, long and rarely
what the model is after, go last and are the first to give way to the per-object budget.
"""

from __future__ import annotations

import re

from graphql import GraphQLEnumType, GraphQLObjectType, GraphQLScalarType, GraphQLSchema, get_named_type, is_list_type, is_non_null_type

from ..load._dialect import Dialect

__all__ = ["NAMING", "OTHER", "LONG_TEXT", "TIMESTAMP", "URL", "choose_preview_fields", "preview_rank"]

PREVIEW_LIMIT = 8
#: Ranks, in the order a preview shows them. LONG_TEXT is known only from a value (see calls/_previews.py).
NAMING, OTHER, LONG_TEXT, TIMESTAMP, URL = range(5)

# Fields that name an object, best first; then id-like scalars (`id`, `key`, `fooId`, an `ID`).
_NAMES = ("name", "title", "login", "displayName", "fullName", "username", "slug", "key", "number", "code")
# Short scalars that say the most about an object after its name.
_TELLING = ("state", "status")
_ID_LIKE = re.compile(r"(^id$|^key$|.(Id|ID|_id|Ids|IDs)$)")
_TIMESTAMP_NAME = re.compile(r"(^(created|updated|edited|modified|deleted|published|born|died|date|time|timestamp)$|.(At|Date|Time|On)$)")
_TIMESTAMP_TYPE = re.compile(r"(date|time|timestamp|instant)", re.IGNORECASE)
_URL_NAME = re.compile(r"(^(url|uri|href|link|homepage|website)$|.(Url|URL|Uri|URI|Href|Link)$)")
_URL_TYPE = re.compile(r"^(URI|URL|Url|Uri|HTML|Link)$")


def preview_rank(field_name: str, scalar_name: str) -> tuple[int, int]:
    """Where a field goes in a preview, from its name and its scalar type's name: (rank, order within it)."""
    if field_name in _NAMES:
        return NAMING, _NAMES.index(field_name)
    if _URL_TYPE.match(scalar_name) or _URL_NAME.search(field_name):
        return URL, 0
    if _TIMESTAMP_TYPE.search(scalar_name) or _TIMESTAMP_NAME.search(field_name):
        return TIMESTAMP, 0
    if scalar_name == "ID" or _ID_LIKE.search(field_name):
        return NAMING, len(_NAMES)
    if field_name in _TELLING:
        return OTHER, 0
    return OTHER, 1


def choose_preview_fields(schema: GraphQLSchema, dialect: Dialect, type_name: str) -> tuple[str, ...]:
    """Scalar and enum fields without arguments, not deprecated and not object references, in the
    order a preview shows them (see `preview_rank`); at most PREVIEW_LIMIT of them.

    An id the handle is re-rooted on is left out where it is opaque (Relay's global `node` id, a
    Dagger id): the `Type#N` already stands for it and the model has no use for its bytes. Other ids
    (a primary key, a `databaseId`) tell objects apart and are kept with the names."""
    type_ = schema.get_type(type_name)
    if not isinstance(type_, GraphQLObjectType):
        return ()
    identity = dialect.identity(type_name)
    opaque = identity.field if identity and (identity.root_field == "node" or identity.root_field.startswith("load")) else None
    chosen: list[tuple[tuple[int, int], int, str]] = []
    for position, (name, field) in enumerate(type_.fields.items()):
        named = get_named_type(field.type)
        inner = field.type.of_type if is_non_null_type(field.type) else field.type
        if field.args or field.deprecation_reason is not None or is_list_type(inner) or name == opaque:
            continue
        if not isinstance(named, (GraphQLScalarType, GraphQLEnumType)):
            continue
        if dialect.object_argument(field, name) is not None:
            continue
        scalar = named.name if isinstance(named, GraphQLScalarType) else ""
        chosen.append((preview_rank(name, scalar), position, name))
    chosen.sort()
    return tuple(name for _, _, name in chosen[:PREVIEW_LIMIT])
