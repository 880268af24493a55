"""Checking built documents against the schema, in debug mode (`DAGTOOLS_DEBUG=1`) and in the tests.

Documents are built from the schema, so a valid one stays valid; checking each shape once when it is
first built catches a builder bug at its source, naming the document, instead of as an API error
the model reads. Off by default: validation costs about as much as executing the query.
"""

from __future__ import annotations

import os

from graphql import GraphQLError, GraphQLSchema, TypeInfo, TypeInfoVisitor, ValidationContext, parse, specified_rules, validate, visit
from graphql.language import ParallelVisitor

from .._errors import DagtoolsError

__all__ = ["check_document", "debugging", "document_errors"]


def debugging() -> bool:
    """Whether `DAGTOOLS_DEBUG` asks for the extra checks (read at each call: tests switch it)."""
    return os.environ.get("DAGTOOLS_DEBUG", "").strip().lower() not in ("", "0", "false", "no", "off")


def document_errors(schema: GraphQLSchema, text: str) -> list[str]:
    """What the spec's validation rules find wrong with `text` against `schema` (empty when valid)."""
    try:
        document = parse(text)
    except GraphQLError as error:
        return [error.message]
    try:
        return [error.message for error in validate(schema, document)]
    except TypeError:  # the schema itself breaks a rule (a leniently loaded one): check the document alone
        errors: list[GraphQLError] = []
        type_info = TypeInfo(schema)
        context = ValidationContext(schema, document, type_info, errors.append)
        visit(document, TypeInfoVisitor(type_info, ParallelVisitor([rule(context) for rule in specified_rules])))
        return [error.message for error in errors]


def check_document(schema: GraphQLSchema, text: str) -> None:
    """Raise, naming the document, when dagtools built one the schema does not allow."""
    errors = document_errors(schema, text)
    if errors:
        raise DagtoolsError(
            f"dagtools built an invalid GraphQL document (a bug in dagtools; please report it with this message): "
            f"{'; '.join(errors[:3])}\nDocument: {text}"
        )
