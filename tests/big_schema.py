"""A large, realistic schema made here, for tests that need a GitHub-sized API but no particular one.

`forge_sdl()` writes a code-hosting API the size of the public ones (about 300 object types and 8,000
fields) with what makes them hard: Relay `Node` and connections with edges and page info, interfaces
and unions, enums with descriptions, input objects, mutations with payloads and user errors,
deprecated fields, scalars such as `DateTime` and `URI`, and, like GitHub's published SDL, fields
defined twice (loaded leniently, with a warning). The same seed gives the same text, so a failure
reproduces. The public schemas in ../shared/schemas stay the input for tests about those APIs
themselves (marked `public_schemas`).
"""

from __future__ import annotations

import functools
import random
import tempfile
from pathlib import Path

__all__ = ["FORGE_TYPES", "forge_introspection_path", "forge_path", "forge_sdl"]

#: The types every forge has, then generated ones up to the size asked.
FORGE_TYPES = ["Repository", "Issue", "PullRequest", "User", "Organization", "Commit", "Team", "Project", "Release", "Label"]
_NOUNS = (
    "Branch Check Comment Deployment Discussion Environment Gist Hook Invitation Key License Milestone Package Pipeline "
    "Reaction Review Runner Secret Sponsor Status Tag Topic Tree Workflow Alert Artifact Audit Badge Budget Cache Card "
    "Column Credential Domain Draft Entry Event Feed Fork Grant Group Job Ledger Log Member Mirror Note Offer Page Plan "
    "Policy Queue Quota Record Rule Rollout Schedule Seat Snapshot Space Step Subscription Task Ticket Token Usage Vote Wiki"
).split()
_ASPECTS = ["", "Setting", "Summary", "Change", "Template", "Rule"]
_SCALARS = [("name", "String!"), ("title", "String"), ("state", "State!"), ("createdAt", "DateTime!"), ("url", "URI!"), ("count", "Int!")]


def _name_list(types: int) -> list[str]:
    names = list(FORGE_TYPES)
    for aspect in _ASPECTS:
        for noun in _NOUNS:
            if len(names) >= types:
                return names
            if noun + aspect not in names:
                names.append(noun + aspect)
    return names


def forge_sdl(*, types: int = 300, seed: int = 7) -> str:
    """The SDL of a forge API with `types` object types (each about 15 fields)."""
    rng = random.Random(seed)
    names = _name_list(types)
    parts = [
        '"""An ISO-8601 date and time."""\nscalar DateTime',
        '"""An RFC 3986 URI."""\nscalar URI',
        '"""Where an object stands."""\nenum State {\n  "Being worked on."\n  OPEN\n  "Done with."\n  CLOSED\n'
        '  MERGED @deprecated(reason: "Use CLOSED.")\n}',
        '"""An object with an ID."""\ninterface Node {\n  id: ID!\n}',
        '"""Something people can comment on."""\ninterface Commentable {\n  id: ID!\n  viewerCanComment: Boolean!\n}',
        "type PageInfo {\n  hasNextPage: Boolean!\n  hasPreviousPage: Boolean!\n  startCursor: String\n  endCursor: String\n}",
        "type UserError {\n  message: String!\n  field: [String!]\n}",
        '"""Which way to sort."""\nenum OrderDirection {\n  ASC\n  DESC\n}',
    ]
    for index, name in enumerate(names):
        others = rng.sample(names, k=min(6, len(names)))
        commentable = index % 3 == 0
        fields = [f'  "The {name}\'s ID."\n  id: ID!']
        fields += [f'  "The {name}\'s {field}."\n  {field}: {kind}' for field, kind in _SCALARS]
        if commentable:
            fields.append("  viewerCanComment: Boolean!")
        for other in others[:3]:
            plural = other[0].lower() + other[1:] + "s"
            fields.append(
                f'  "The {other} objects of this {name}."\n'
                f"  {plural}(first: Int, after: String, last: Int, before: String, orderBy: {other}Order, filterBy: {other}Filter): "
                f"{other}Connection!"
            )
        for other in others[3:5]:
            fields.append(f'  "The {other} this {name} belongs to."\n  {other[0].lower() + other[1:]}: {other}')
        fields.append('  "What it was called before."\n  oldName: String @deprecated(reason: "Use name.")')
        fields.append(f"  timeline(since: DateTime, first: Int = 10): [{names[(index + 1) % len(names)]}Event!]!")
        interfaces = "Node & Commentable" if commentable else "Node"
        parts.append(f'"""A {name} on the forge."""\ntype {name} implements {interfaces} {{\n' + "\n".join(fields) + "\n}")
        parts.append(f'"""A change to a {name}."""\ntype {name}Event {{\n  at: DateTime!\n  actor: User\n  action: String!\n}}')
        parts.append(
            f"type {name}Connection {{\n  edges: [{name}Edge]\n  nodes: [{name}]\n  pageInfo: PageInfo!\n  totalCount: Int!\n}}\n"
            f"type {name}Edge {{\n  cursor: String!\n  node: {name}\n}}\n"
            f"input {name}Order {{\n  field: String!\n  direction: OrderDirection!\n}}\n"
            f'"""Which {name} objects to list; every condition given must hold."""\ninput {name}Filter {{\n'
            + "\n".join(
                f'  "Only those whose {field} {test} this."\n  {field}{suffix}: {kind.rstrip("!")}'
                for field, kind in _SCALARS
                for suffix, test in (("", "equals"), ("Not", "differs from"))
            )
            + f'\n  "Any of these filters."\n  or: [{name}Filter!]\n  "All of these filters."\n  and: [{name}Filter!]\n}}'
        )
    parts.append("union SearchResult = " + " | ".join(names[:12]))
    lookups = [f'  "Look up a {n} by ID."\n  {n[0].lower() + n[1:]}(id: ID!): {n}' for n in names]
    parts.append(
        "type Query {\n  node(id: ID!): Node\n  nodes(ids: [ID!]!): [Node]!\n"
        '  "Search across the forge."\n  search(query: String!, first: Int): [SearchResult!]!\n' + "\n".join(lookups) + "\n}"
    )
    mutations = []
    for name in names[:60]:
        lower = name[0].lower() + name[1:]
        parts.append(
            f"input Create{name}Input {{\n  name: String!\n  title: String\n  clientMutationId: String\n}}\n"
            f"type Create{name}Payload {{\n  {lower}: {name}\n  userErrors: [UserError!]!\n  clientMutationId: String\n}}"
        )
        mutations.append(f'  "Create a {name}."\n  create{name}(input: Create{name}Input!): Create{name}Payload')
    parts.append("type Mutation {\n" + "\n".join(mutations) + "\n}")
    # As in GitHub's published SDL: fields defined twice, which a lenient load keeps once each and warns about.
    parts += [f"extend type {name} {{\n  name: String!\n}}" for name in FORGE_TYPES + names[-4:]]
    return "\n\n".join(parts) + "\n"


@functools.cache
def forge_path() -> Path:
    """The forge SDL in a file of its own (written once per test run)."""
    folder = Path(tempfile.mkdtemp(prefix="dagtools-forge-"))
    path = folder / "forge.graphql"
    path.write_text(forge_sdl())
    return path


@functools.cache
def forge_introspection_path() -> Path:
    """The forge as an introspection answer (`{"data": {"__schema": ...}}`), as a live API gives it, with
    one problem a lenient load tolerates, as GitHub's published introspection has some: a type that
    says it implements `Commentable` without its field."""
    import json

    from graphql import introspection_from_schema

    from dagtools import load_schema

    schema = load_schema(forge_path()).schema
    data = introspection_from_schema(schema)
    for entry in data["__schema"]["types"]:
        if entry["name"] == "Issue":  # the second forge type: Node only
            entry["interfaces"] = [*entry["interfaces"], {"kind": "INTERFACE", "name": "Commentable", "ofType": None}]
            break
    path = forge_path().with_name("forge.introspection.json")
    path.write_text(json.dumps({"data": data}))
    return path
