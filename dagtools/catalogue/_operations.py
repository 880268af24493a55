"""Operations as tools: named GraphQL operations a host wrote (`.graphql` files, or an Apollo
persisted-query manifest), each a tool whose parameters are its variables.

They are read and checked against the schema once, when a session or a server starts: an operation
that does not validate is an error naming its file and line, so a host never serves a tool that can
only fail. Each document is sent as written, with `__typename` and the identity field of every
object type added to its selections, so the objects it answers become `Type#N` handles that field
tools chain from. A mutation among them is offered only when the host's mutation setting allows
every root field it writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLObjectType,
    InlineFragmentNode,
    NamedTypeNode,
    NameNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    get_named_type,
    is_abstract_type,
    is_composite_type,
    parse,
    print_ast,
    type_from_ast,
    validate,
    visit,
)

from .._errors import ConfigError
from .._tools import Tool
from ._catalogue import Catalogue
from ._fit import fit
from ._json_schema import PARAMETER_BUDGET
from ._search import SearchEntry, SearchIndex, catalogue_entries, tool_line

__all__ = ["ID_ALIAS", "TYPE_ALIAS", "Operation", "OperationSet", "load_operations", "operations_of"]

_MANIFEST_FORMAT = "apollo-persisted-query-manifest"
#: Bounds on what a host's folder may hold: files read, bytes per file, operations in all.
_MAX_FILES = 2000
_MAX_FILE_BYTES = 1_000_000
_MAX_OPERATIONS = 5000
#: The built-in tools' names, which an operation cannot take.
_RESERVED = frozenset({"selectTools", "save", "readResult", "describeTools", "callTool"})


@dataclass(frozen=True)
class Operation:
    """One named operation, checked against the schema, ready to send."""

    name: str
    kind: str  # "query" or "mutation"
    document: str  # as sent: the operation, its fragments, and the fields minting reads
    tool: Tool
    where: str  # file:line, for messages
    root_fields: tuple[str, ...]


@dataclass
class OperationSet:
    """The operations a host serves, by name, and the search index they share with the catalogue."""

    catalogue: Catalogue
    operations: dict[str, Operation]
    _index: SearchIndex | None = field(default=None, init=False, repr=False)

    def __contains__(self, name: object) -> bool:
        return name in self.operations

    def get(self, name: str) -> Operation | None:
        return self.operations.get(name)

    def names(self) -> list[str]:
        return list(self.operations)

    def search_index(self) -> SearchIndex:
        """The catalogue's tools and these operations in one index, built on first use."""
        if self._index is None:
            own = [
                SearchEntry(
                    name=op.name,
                    fields={"name": op.name, "kind": op.kind, "returns": " ".join(op.root_fields), "description": op.tool.description},
                    line=tool_line(op.tool.description, f"The {op.kind} {op.name}.") + " An operation: selectTools it, then call it.",
                    root=True,
                )
                for op in self.operations.values()
            ]
            self._index = SearchIndex(catalogue_entries(self.catalogue) + own)
        return self._index


def operations_of(catalogue: Catalogue, source: str | Path) -> OperationSet:
    """The operations in `source`, read and checked once per catalogue and shared by its sessions."""
    return catalogue.derived(f"operations {source}", lambda: load_operations(source, catalogue))


def load_operations(source: str | Path, catalogue: Catalogue) -> OperationSet:
    """The operations in `source`: a folder of `.graphql`/`.gql` files (read recursively), one such
    file, or a persisted-query manifest (`.json`). Raises ConfigError naming the file and line of the
    first operation that cannot be served."""
    path = Path(source)
    if not path.exists():
        raise ConfigError(f"Operations {source}: no such file or folder. Give a folder of .graphql files or a persisted-query manifest.")
    pieces: list[tuple[str, str, int]] = []  # (text, file, first line)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in (".graphql", ".gql") and p.is_file())
        if len(files) > _MAX_FILES:
            raise ConfigError(f"Operations {source}: {len(files)} files; at most {_MAX_FILES} are read.")
        pieces = [(_read(p), str(p), 1) for p in files]
    elif path.suffix == ".json":
        pieces = _manifest(path)
    else:
        pieces = [(_read(path), str(path), 1)]
    operations: dict[str, Operation] = {}
    for text, where, first_line in pieces:
        for operation in _operations_of(text, where, first_line, catalogue):
            if operation.name in operations:
                raise ConfigError(f"{operation.where}: {operation.name} is defined already, at {operations[operation.name].where}.")
            if operation.name in _RESERVED or len(operation.name) > 64:
                raise ConfigError(f"{operation.where}: {operation.name} cannot name a tool (a built-in tool's name, or over 64 letters).")
            if operation.name in catalogue or catalogue.unavailable(operation.name):
                raise ConfigError(f"{operation.where}: {operation.name} is the name of a field tool; rename the operation.")
            if _allowed(catalogue, operation):
                operations[operation.name] = operation
            if len(operations) > _MAX_OPERATIONS:
                raise ConfigError(f"Operations {source}: more than {_MAX_OPERATIONS} operations.")
    return OperationSet(catalogue, operations)


def _read(path: Path) -> str:
    if path.stat().st_size > _MAX_FILE_BYTES:
        raise ConfigError(f"{path}: larger than {_MAX_FILE_BYTES} bytes; an operation file is read whole.")
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot be read: {error}.") from None


def _manifest(path: Path) -> list[tuple[str, str, int]]:
    """An Apollo persisted-query manifest: `{"format", "version": 1, "operations": [{id, name, type, body}]}`."""
    try:
        data = json.loads(_read(path))
    except ValueError as error:
        raise ConfigError(f"{path}: not JSON: {error}.") from None
    if not isinstance(data, dict) or data.get("format") != _MANIFEST_FORMAT or data.get("version") != 1:
        raise ConfigError(f'{path}: not a persisted-query manifest (want "format": "{_MANIFEST_FORMAT}", "version": 1).')
    entries = data.get("operations")
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: `operations` must be a list of {{id, name, type, body}}.")
    pieces = []
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("body"), str):
            raise ConfigError(f"{path}: operation {number} has no `body` text.")
        pieces.append((entry["body"], f"{path} operation {number} ({entry.get('name', 'unnamed')})", 1))
    return pieces


def _operations_of(text: str, where: str, first_line: int, catalogue: Catalogue) -> Iterable[Operation]:
    schema = catalogue.schema
    try:
        document = parse(text)
    except GraphQLError as error:
        raise ConfigError(f"{_at(where, error, first_line)}: {error.message}") from None
    fragments = [d for d in document.definitions if isinstance(d, FragmentDefinitionNode)]
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        line = _line(definition, text) + first_line - 1
        if definition.name is None:
            raise ConfigError(f"{where}:{line}: an operation without a name; name it, since its name is the tool's name.")
        name = definition.name.value
        if definition.operation == OperationType.SUBSCRIPTION:
            raise ConfigError(f"{where}:{line}: {name} is a subscription; only queries and mutations can be tools.")
        single = DocumentNode(definitions=(definition, *fragments))
        errors = validate(schema, single)
        if errors:
            raise ConfigError(f"{_at(where, errors[0], first_line)}: {name}: {errors[0].message}")
        sent = print_ast(_with_identity(catalogue, single))
        description = _leading_comment(text, definition) or f"Runs the {definition.operation.value} {name}."
        yield Operation(
            name=name,
            kind=definition.operation.value,
            document=sent,
            tool=_tool(catalogue, name, definition, description),
            where=f"{where}:{line}",
            root_fields=tuple(s.name.value for s in definition.selection_set.selections if isinstance(s, FieldNode)),
        )


def _at(where: str, error: GraphQLError, first_line: int) -> str:
    locations = error.locations or []
    return f"{where}:{locations[0].line + first_line - 1}" if locations else where


def _line(node: Any, text: str) -> int:
    return text.count("\n", 0, node.loc.start) + 1 if node.loc is not None else 1


def _leading_comment(text: str, definition: OperationDefinitionNode) -> str:
    """The `#` lines right above the operation: what the host wrote for the model."""
    if definition.loc is None:
        return ""
    above = text[: definition.loc.start].splitlines()
    lines: list[str] = []
    for line in reversed(above):
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        lines.append(stripped.lstrip("#").strip())
    return " ".join(reversed(lines)).strip()


def _tool(catalogue: Catalogue, name: str, definition: OperationDefinitionNode, description: str) -> Tool:
    renderer = catalogue.renderer(name, object_references=False)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for variable in definition.variable_definitions or ():
        var_name = variable.variable.name.value
        type_ = type_from_ast(catalogue.schema, variable.type)
        assert type_ is not None  # validated
        schema = renderer.type(type_)  # type: ignore[arg-type]
        if get_named_type(type_).name == "ID":
            schema = {**schema, "description": "An ID the API gave, or a Type#N object you hold that has one."}
        properties[var_name] = schema
        if is_required_variable(variable):
            required.append(var_name)
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        parameters["required"] = required
    defs = renderer.finish(len(json.dumps(parameters)))
    if defs:
        parameters["$defs"] = defs
    is_mutation = definition.operation == OperationType.MUTATION
    return Tool(
        name=name,
        description=description,
        parameters=fit(parameters, PARAMETER_BUDGET),  # within the same budget as a field tool's
        kind="api",
        read_only=not is_mutation,
        destructive=is_mutation,
    )


def is_required_variable(variable: Any) -> bool:
    from graphql import NonNullTypeNode

    return isinstance(variable.type, NonNullTypeNode) and variable.default_value is None


def _allowed(catalogue: Catalogue, operation: Operation) -> bool:
    if operation.kind != "mutation":
        return True
    if isinstance(catalogue.mutations, bool):
        return catalogue.mutations
    return all(f in catalogue.mutations or f"Mutation_{f}" in catalogue.mutations for f in operation.root_fields)


#: The aliases the added fields are read under, so they never meet the operation's own fields; the
#: answer shown to the model drops them.
TYPE_ALIAS = "dagtools_type"
ID_ALIAS = "dagtools_id"


def _with_identity(catalogue: Catalogue, document: DocumentNode) -> DocumentNode:
    """The document with `__typename` and each object type's identity field in every selection
    (under their own aliases), so the objects it answers can be minted as handles."""
    type_info = TypeInfo(catalogue.schema)
    roots = (catalogue.schema.query_type, catalogue.schema.mutation_type)

    class AddIdentity(Visitor):
        def enter_selection_set(self, node: SelectionSetNode, *_: Any) -> SelectionSetNode | None:
            parent = type_info.get_parent_type()
            named = get_named_type(parent) if parent is not None else None
            if named is None or not is_composite_type(named) or named in roots:
                return None
            if any(isinstance(s, FieldNode) and s.alias is not None and s.alias.value == TYPE_ALIAS for s in node.selections):
                return None  # added already (a fragment spread twice)
            added: list[Any] = [_field("__typename", TYPE_ALIAS)]
            concretes = catalogue.schema.get_possible_types(named) if is_abstract_type(named) else [named]
            for concrete in concretes:
                identity = catalogue.identity(concrete.name) if isinstance(concrete, GraphQLObjectType) else None
                if identity is None:
                    continue
                if concrete is named:
                    added.append(_field(identity.field, ID_ALIAS))
                else:
                    added.append(
                        InlineFragmentNode(
                            type_condition=NamedTypeNode(name=NameNode(value=concrete.name)),
                            selection_set=SelectionSetNode(selections=(_field(identity.field, ID_ALIAS),)),
                        )
                    )
            return SelectionSetNode(selections=(*node.selections, *added))

    return visit(document, TypeInfoVisitor(type_info, AddIdentity()))


def _field(name: str, alias: str) -> FieldNode:
    return FieldNode(name=NameNode(value=name), alias=NameNode(value=alias))
