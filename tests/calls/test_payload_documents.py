"""What a mutation's one document reads of its result, on the public schemas in ../shared/schemas.

A mutation never runs again, so its document reads what the model will want of its payload: the
objects it links to with their previews, and its user errors with their scalars; an interface of
many types by its identity alone; no connection, no root type; and never a document that grows
with the schema (every document is validated against its schema as it is built, DAGTOOLS_DEBUG).
"""

from __future__ import annotations

import pytest

from dagtools import compile_catalogue
from dagtools.calls._documents import QueryBuilder
from dagtools.registry._handles import Step
from tests.conftest import load_shared, shared_schema_names

#: The longest mutation document on any public schema; GitHub's `addComment` read 9 KB before.
LONGEST = 2_500


def mutation_documents(name: str) -> dict[str, str]:
    catalogue = compile_catalogue(load_shared(name).schema, mutations=True)  # type: ignore[attr-defined]
    builder = QueryBuilder.of(catalogue)
    mutation = catalogue.schema.mutation_type
    fields = mutation.fields if mutation is not None else {}
    return {f: builder.build((Step.of(f, {a: None for a in field.args}),), operation="mutation").text for f, field in fields.items()}


@pytest.mark.parametrize("name", [n for n in shared_schema_names() if "dagger" not in n] or ["github.schema.graphql"])
def test_every_mutation_document_is_valid_and_short(name: str) -> None:
    documents = mutation_documents(name)
    longest = max(documents.items(), key=lambda item: len(item[1]), default=("", ""))
    assert len(longest[1]) <= LONGEST, (name, longest[0], len(longest[1]))


@pytest.mark.public_schemas
def test_github_payloads_read_their_objects_previews_and_identity_alone_where_many_types() -> None:
    documents = mutation_documents("github.schema.graphql")
    close = documents["closeIssue"]
    assert "issue { __typename id title number" in close and " state " in close
    comment = documents["addComment"]
    assert "subject { __typename id }" in comment  # `Node`: hundreds of types, one identity field
    assert "commentEdge { __typename ... on IssueCommentEdge { cursor node { __typename id" in comment and " body " in comment
    assert "timelineEdge { __typename ... on IssueTimelineItemEdge { cursor node { __typename ... on Node { id } } } }" in comment


@pytest.mark.public_schemas
def test_user_error_lists_are_read_with_their_scalars() -> None:
    storefront = mutation_documents("shopify.storefront.schema.json")["customerCreate"]
    assert "customerUserErrors { __typename ... on CustomerUserError { code message field } }" in storefront
    saleor = mutation_documents("saleor.schema.graphql")["accountRegister"]
    read = saleor.split("... on AccountError { ", 1)[1].split(" }", 1)[0].split()
    assert {"code", "field", "message"} <= set(read)
