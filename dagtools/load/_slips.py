"""Names meant by the slips a schema file or its path makes: close type names for an unknown type,
close file names for a file that is not there."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from graphql import DocumentNode, GraphQLError, TypeDefinitionNode
from graphql.pyutils import did_you_mean, suggestion_list
from graphql.type import specified_scalar_types

__all__ = ["close_files", "with_type_suggestions"]

#: Type names of other languages a schema file may use, and the GraphQL scalars meant. (A name that
#: starts with a known one, `Integer` for `Int`, `Bool` for `Boolean`, is found without this list.)
_OTHER_LANGUAGES = {
    "long": ("Int",),
    "short": ("Int",),
    "double": ("Float",),
    "decimal": ("Float",),
    "number": ("Int", "Float"),
    "text": ("String",),
    "char": ("String",),
    "uuid": ("ID",),
}
_UNKNOWN_TYPE = re.compile(r"^Unknown type '(?P<name>[^']+)'\.$")


def with_type_suggestions(errors: list[GraphQLError], document: DocumentNode) -> list[GraphQLError]:
    """graphql-core's errors, where an unknown type it has no suggestion for (its edit distance is
    strict: `Integer` is four edits from `Int`) gets the close names among the file's types and the
    built-in scalars: by spelling, by one name starting with the other, or as another language spells
    the scalar."""
    known = list(specified_scalar_types) + [
        definition.name.value for definition in document.definitions if isinstance(definition, TypeDefinitionNode)
    ]
    improved = []
    for error in errors:
        match = _UNKNOWN_TYPE.match(error.message)
        close = _close_types(match["name"], known) if match else []
        improved.append(GraphQLError(error.message + did_you_mean(close), nodes=error.nodes) if close else error)
    return improved


def _close_types(name: str, known: list[str]) -> list[str]:
    lowered = name.lower()
    found = suggestion_list(name, known)
    found += [k for k in known if len(k) >= 3 and k.lower() != lowered and (lowered.startswith(k.lower()) or k.lower().startswith(lowered))]
    found += [k for k in _OTHER_LANGUAGES.get(lowered, ()) if k in known]
    return list(dict.fromkeys(found))[:3]


#: Entries of a folder compared with a mistyped file name, at most (a folder of millions is not read whole).
_FOLDER_ENTRIES = 5000


def close_files(typed: str) -> str:
    """ " Did you mean kitchen.graphql?" for a file name typed with a slip, naming the files beside where it
    points whose names are close, as the path was typed; "" when none is."""
    path = Path(typed).expanduser()
    try:
        with os.scandir(path.parent) as entries:
            names = [entry.name for _, entry in zip(range(_FOLDER_ENTRIES), entries) if entry.is_file()]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.75)
    if not close:
        return ""
    folder = os.path.dirname(typed)
    return f" Did you mean {' or '.join(os.path.join(folder, name) for name in close)}?"
