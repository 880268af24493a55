"""A GitHub-shaped API on loopback: GitHub's published schema, executable over the small world of
tests/pyservers/github_world.py, for evals a terminal agent does by hand.

`python -m tests.pyservers.github PORT` serves GraphQL on 127.0.0.1:PORT at any path (POST /reset puts
the world back as it started). The schema is the public one (../shared/schemas/github.schema.graphql, or
$DAGTOOLS_SCHEMAS), repaired by dagtools' loader as any user's would be; the resolvers know no task:

- a field is read from the object's dict by its name; a few are computed (`Query.repository`, `node`,
  `Repository.issue`, `latestRelease`, `stargazerCount`, ...), in `_COMPUTED`;
- a field whose type is a Relay connection turns the list under its name into one: `first`, `last`,
  `after`, `before`, `totalCount`, `pageInfo`, `edges`, `nodes`, and the filters GitHub has where they
  are cheap: `states`, `labels`, `filterBy`, `author`, `orderBy`, `headRefName`, `baseRefName`;
- a field with nothing under it is null where nullable, else its type's zero (0, "", false, the first
  enum value, an empty list, an object of zeros), so any valid query runs;
- the mutations in `_MUTATIONS` change the world (comments, closing and reopening, labels, new issues,
  stars); the others answer an error saying so.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLError,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLResolveInfo,
    GraphQLScalarType,
    GraphQLSchema,
    get_nullable_type,
    graphql,
    is_abstract_type,
)

from tests.pyservers.github_world import Obj, World, add_item, make_world

__all__ = ["app", "github_schema", "main"]

_SCHEMAS = Path(__file__).resolve().parents[3] / "shared" / "schemas"
#: GitHub refuses a page larger than this, as here.
PAGE_LIMIT = 100


def github_schema(path: Path | None = None) -> GraphQLSchema:
    """GitHub's published schema, built by dagtools' loader (which drops the fields GitHub defines twice)."""
    import os

    from dagtools import load_schema

    folder = Path(os.environ.get("DAGTOOLS_SCHEMAS") or _SCHEMAS)
    return load_schema(path or folder / "github.schema.graphql").schema


# -- reading -----------------------------------------------------------------------------------------


def _repository(world: World, _parent: Obj, args: dict[str, Any]) -> Obj:
    found = world.repository(args["owner"], args["name"])
    if found is None:
        raise GraphQLError(
            f"Could not resolve to a Repository with the name '{args['owner']}/{args['name']}'.", extensions={"type": "NOT_FOUND"}
        )
    return found


def _owner(typename: str | None) -> Callable[[World, Obj, dict[str, Any]], Obj | None]:
    def find(world: World, _parent: Obj, args: dict[str, Any]) -> Obj | None:
        found = world.owners.get(args["login"].lower())
        if found is None or (typename and found["__typename"] != typename):
            article = "an" if typename == "Organization" else "a"
            raise GraphQLError(
                f"Could not resolve to {article} {typename or 'RepositoryOwner'} with the login of '{args['login']}'.",
                extensions={"type": "NOT_FOUND"},
            )
        return found

    return find


def _node(world: World, ident: str) -> Obj:
    found = world.objects.get(ident)
    if found is None:
        raise GraphQLError(f"Could not resolve to a node with the global id of '{ident}'", extensions={"type": "NOT_FOUND"})
    return found


def _numbered(kinds: tuple[str, ...], key: str = "number") -> Callable[[World, Obj, dict[str, Any]], Obj | None]:
    """A repository's issue, pull request, milestone, label or release by its number, name or tag."""

    def find(_world: World, repo: Obj, args: dict[str, Any]) -> Obj | None:
        wanted = next(iter(args.values()))
        for kind in kinds:
            for item in repo.get(kind, []):
                if item.get(key) == wanted:
                    return item
        return None

    return find


def _latest_release(_world: World, repo: Obj, _args: dict[str, Any]) -> Obj | None:
    published = [r for r in repo["releases"] if not r["isPrerelease"] and not r["isDraft"]]
    return max(published, key=lambda r: r["createdAt"], default=None)


def _search(world: World, _parent: Obj, args: dict[str, Any]) -> Obj:
    """GitHub's search over the world, for the qualifiers most asked: repo:, org:, user:, is:, label:, author:, words."""
    words, qualifiers = [], []
    for part in re.findall(r'\w+:"[^"]*"|\S+', args["query"]):
        name, _, value = part.partition(":")
        (qualifiers.append((name.lower(), value.strip('"').lower())) if value else words.append(part.lower()))
    kind = args["type"]
    repos = [r for owner in world.owners.values() for r in owner.get("repositories", [])]
    found: list[Obj]
    if kind == "REPOSITORY":
        found = repos
    elif kind == "ISSUE":
        found = [item for r in repos for item in (*r["issues"], *r["pullRequests"])]
    elif kind == "USER":
        found = [o for o in world.owners.values() if o["__typename"] == "User"]
    else:
        found = []
    for name, value in qualifiers:
        found = [o for o in found if _qualifies(o, name, value)]
    found = [o for o in found if all(w in (o.get("title") or o.get("name") or o.get("login") or "").lower() for w in words)]
    count = len(found)
    return {"__typename": "SearchResultItemConnection", "items": found, "issueCount": count, "repositoryCount": count, "userCount": count}


def _qualifies(obj: Obj, name: str, value: str) -> bool:
    repo = obj.get("repository", obj)
    if name == "repo":
        return str(repo.get("nameWithOwner", "")).lower() == value
    if name in ("org", "user"):
        return str(repo.get("owner", {}).get("login", "")).lower() == value
    if name == "is":
        typename = {"issue": "Issue", "pr": "PullRequest"}.get(value)
        return obj["__typename"] == typename if typename else str(obj.get("state", "")).lower() == value
    if name == "state":
        return str(obj.get("state", "")).lower() == value
    if name == "label":
        return any(label["name"].lower() == value for label in obj.get("labels", []))
    if name == "author":
        return str((obj.get("author") or {}).get("login", "")).lower() == value
    return True


_COMPUTED: dict[tuple[str, str], Callable[[World, Obj, dict[str, Any]], Any]] = {
    ("Query", "repository"): _repository,
    ("Query", "user"): _owner("User"),
    ("Query", "organization"): _owner("Organization"),
    ("Query", "repositoryOwner"): _owner(None),
    ("Query", "viewer"): lambda world, _parent, _args: world.viewer,
    ("Query", "node"): lambda world, _parent, args: _node(world, args["id"]),
    ("Query", "nodes"): lambda world, _parent, args: [world.objects.get(i) for i in args["ids"]],
    ("Query", "search"): _search,
    ("Repository", "issue"): _numbered(("issues",)),
    ("Repository", "pullRequest"): _numbered(("pullRequests",)),
    ("Repository", "issueOrPullRequest"): _numbered(("issues", "pullRequests")),
    ("Repository", "milestone"): _numbered(("milestones",)),
    ("Repository", "label"): _numbered(("labels",), "name"),
    ("Repository", "release"): _numbered(("releases",), "tagName"),
    ("Repository", "latestRelease"): _latest_release,
    ("Repository", "stargazerCount"): lambda _w, repo, _a: len(repo["stargazers"]),
    ("Repository", "viewerHasStarred"): lambda world, repo, _a: world.viewer in repo["stargazers"],
    ("Label", "issues"): lambda _w, label, _a: [i for i in label["repository"]["issues"] if label in i["labels"]],
    ("Label", "pullRequests"): lambda _w, label, _a: [p for p in label["repository"]["pullRequests"] if label in p["labels"]],
    ("Release", "isLatest"): lambda world, release, _a: _latest_release(world, release["repository"], {}) is release,
    ("Milestone", "progressPercentage"): lambda _w, m, _a: (
        100.0 * sum(i["state"] != "OPEN" for i in m["issues"]) / max(1, len(m["issues"]))
    ),
}
for _typename in ("Issue", "PullRequest", "Milestone"):
    _COMPUTED[(_typename, "closed")] = lambda _w, obj, _a: obj["state"] != "OPEN"
for _typename in ("Issue", "PullRequest", "IssueComment", "PullRequestReview"):
    _COMPUTED[(_typename, "viewerDidAuthor")] = lambda world, obj, _a: obj.get("author") is world.viewer
for _typename in ("Issue", "PullRequest"):
    _COMPUTED[(_typename, "participants")] = lambda _w, item, _a: list(
        {id(u): u for u in (item["author"], *(c["author"] for c in item["comments"]))}.values()
    )
for _field in ("assignableUsers", "mentionableUsers", "collaborators"):
    _COMPUTED[("Repository", _field)] = lambda _w, repo, _a: repo["owner"].get("membersWithRole") or [repo["owner"]]
_COMPUTED[("Repository", "languages")] = lambda _w, repo, _a: [repo["primaryLanguage"]]
for _field, _kind in (("issues", "issues"), ("pullRequests", "pullRequests")):
    _COMPUTED[("User", _field)] = lambda world, user, _a, kind=_kind: [
        item for owner in world.owners.values() for r in owner.get("repositories", []) for item in r[kind] if item["author"] is user
    ]
for _typename in ("User", "Organization"):
    _COMPUTED[(_typename, "repository")] = lambda _w, owner, args: next(
        (r for r in owner["repositories"] if r["name"] == args["name"]), None
    )


# -- connections -------------------------------------------------------------------------------------

#: `orderBy.field` values by the key they sort on, where it is not the field's name in camelCase.
_ORDER_KEYS: dict[str, Callable[[Obj], Any]] = {
    "STARGAZERS": lambda o: len(o.get("stargazers", [])),
    "COMMENTS": lambda o: len(o.get("comments", [])),
    "DUE_DATE": lambda o: o.get("dueOn") or "",
}


def _camel(enum_name: str) -> str:
    head, *rest = enum_name.lower().split("_")
    return head + "".join(part.title() for part in rest)


def _filtered(items: list[Obj], args: dict[str, Any]) -> list[Obj]:
    given = {**(args.get("filterBy") or {}), **{k: v for k, v in args.items() if v is not None}}
    if given.get("states"):
        items = [o for o in items if o.get("state") in given["states"]]
    if given.get("labels"):
        items = [o for o in items if any(label["name"] in given["labels"] for label in o.get("labels", []))]
    for name, field in (("createdBy", "author"), ("author", "author")):
        if given.get(name):
            items = [o for o in items if (o.get(field) or {}).get("login") == given[name]]
    for name in ("headRefName", "baseRefName", "isFork", "isArchived"):
        if given.get(name) is not None:
            items = [o for o in items if o.get(name, False if name.startswith("is") else None) == given[name]]
    if given.get("milestoneNumber"):
        items = [o for o in items if str((o.get("milestone") or {}).get("number")) == str(given["milestoneNumber"])]
    order = given.get("orderBy")
    if order and order.get("field"):
        key = _ORDER_KEYS.get(order["field"]) or (lambda o, name=_camel(order["field"]): o.get(name) or "")
        items = sorted(items, key=key, reverse=order.get("direction") == "DESC")
    return items


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _index(cursor: str, argument: str) -> int:
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError, UnicodeDecodeError):
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor for `{argument}`.") from None


def _connection(items: list[Obj], connection: GraphQLObjectType, args: dict[str, Any], field: str) -> Obj:
    """The Relay connection over `items` that `args` ask for, as GitHub pages it."""
    for argument in ("first", "last"):
        size = args.get(argument)
        if size is not None and not 0 <= size <= PAGE_LIMIT:
            raise GraphQLError(
                f"Requesting {size} records on the `{field}` connection exceeds the `{argument}` limit of {PAGE_LIMIT} records."
            )
    items = _filtered(items, args)
    start, end = 0, len(items)
    if args.get("after"):
        start = max(start, _index(args["after"], "after") + 1)
    if args.get("before"):
        end = min(end, _index(args["before"], "before"))
    window = list(range(start, max(start, end)))
    if args.get("first") is not None:
        window = window[: args["first"]]
    if args.get("last") is not None:
        window = window[len(window) - args["last"] :] if args["last"] else []
    edge_type = get_nullable_type(get_nullable_type(connection.fields["edges"].type).of_type) if "edges" in connection.fields else None
    edges = [{"__typename": getattr(edge_type, "name", "Edge"), "cursor": _cursor(i), "node": items[i]} for i in window]
    return {
        "__typename": connection.name,
        "totalCount": len(items),
        "nodes": [items[i] for i in window],
        "edges": edges,
        "pageInfo": {
            "__typename": "PageInfo",
            "hasNextPage": bool(window) and window[-1] < len(items) - 1,
            "hasPreviousPage": bool(window) and window[0] > 0,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": edges[-1]["cursor"] if edges else None,
        },
    }


def _is_connection(named: Any) -> bool:
    return isinstance(named, GraphQLObjectType) and named.name.endswith("Connection") and "pageInfo" in named.fields


# -- the default resolver ----------------------------------------------------------------------------

_ZEROS = {"Int": 0, "Float": 0.0, "Boolean": False, "DateTime": "1970-01-01T00:00:00Z", "Date": "1970-01-01"}


def _zero(schema: GraphQLSchema, kind: Any) -> Any:
    """What a field with no data answers: null where it may, else the type's zero."""
    if not isinstance(kind, GraphQLNonNull):
        return None
    inner = kind.of_type
    if isinstance(inner, GraphQLList):
        return []
    if isinstance(inner, GraphQLScalarType):
        return _ZEROS.get(inner.name, "")
    if isinstance(inner, GraphQLEnumType):
        return next(iter(inner.values))
    if is_abstract_type(inner):
        return {"__typename": schema.get_possible_types(inner)[0].name}
    return {"__typename": inner.name}


def resolve(parent: Obj, info: GraphQLResolveInfo, **args: Any) -> Any:
    world: World = info.context
    computed = _COMPUTED.get((info.parent_type.name, info.field_name))
    if info.parent_type is info.schema.mutation_type:
        return _mutate(world, info.field_name, args)
    value = computed(world, parent, args) if computed else parent.get(info.field_name)
    named = get_nullable_type(info.return_type)
    if _is_connection(named) and not (isinstance(value, dict) and "__typename" in value):
        return _connection(value or [], named, args, info.field_name)
    if isinstance(value, dict) and value.get("__typename", "").endswith("Connection") and "items" in value:
        return {**_connection(value["items"], named, args, info.field_name), **value}  # a search's counts beside its page
    return _zero(info.schema, info.return_type) if value is None else value


def resolve_type(value: Obj, _info: GraphQLResolveInfo, _abstract: Any) -> str:
    return str(value["__typename"])


# -- writing -----------------------------------------------------------------------------------------


def _of(world: World, ident: str, *typenames: str) -> Obj:
    found = _node(world, ident)
    if found["__typename"] not in typenames:
        raise GraphQLError(
            f"Could not resolve to a node with the global id of '{ident}' as a {' or '.join(typenames)}.", extensions={"type": "NOT_FOUND"}
        )
    return found


def _add_comment(world: World, given: dict[str, Any]) -> Obj:
    subject = _of(world, given["subjectId"], "Issue", "PullRequest")
    if not given["body"].strip():
        raise GraphQLError("Body can't be blank", extensions={"type": "UNPROCESSABLE"})
    n = len(subject["comments"]) + 1
    comment = world.add(
        "IssueComment",
        f"{subject['repository']['nameWithOwner']}#{subject['number']}:{n}",
        body=given["body"],
        author=world.viewer,
        createdAt=world.now(),
        issue=subject,
        repository=subject["repository"],
        url=f"{subject['url']}#issuecomment-{n}",
    )
    subject["comments"].append(comment)
    edge = {"__typename": "IssueCommentEdge", "cursor": _cursor(n - 1), "node": comment}
    return {"commentEdge": edge, "subject": subject, "timelineEdge": None}


def _set_state(state: str) -> Callable[[World, dict[str, Any]], Obj]:
    def change(world: World, given: dict[str, Any]) -> Obj:
        issue = _of(world, given["issueId"], "Issue")
        issue.update(state=state, stateReason=given.get("stateReason") or ("COMPLETED" if state == "CLOSED" else "REOPENED"))
        issue.update(closedAt=world.now() if state == "CLOSED" else None, updatedAt=world.clock.strftime("%Y-%m-%dT%H:%M:%SZ"))
        return {"issue": issue}

    return change


def _labels(adding: bool) -> Callable[[World, dict[str, Any]], Obj]:
    def change(world: World, given: dict[str, Any]) -> Obj:
        labelable = _of(world, given["labelableId"], "Issue", "PullRequest")
        for label in [_of(world, ident, "Label") for ident in given["labelIds"]]:  # every id found before any change
            if adding and label not in labelable["labels"]:
                labelable["labels"].append(label)
            elif not adding and label in labelable["labels"]:
                labelable["labels"].remove(label)
        return {"labelable": labelable}

    return change


def _create_issue(world: World, given: dict[str, Any]) -> Obj:
    repo = _of(world, given["repositoryId"], "Repository")
    if not given["title"].strip():
        raise GraphQLError("Title can't be blank", extensions={"type": "UNPROCESSABLE"})
    number = 1 + max((o["number"] for o in (*repo["issues"], *repo["pullRequests"])), default=0)
    labels = [_of(world, i, "Label") for i in given.get("labelIds") or []]  # every id found before any change
    assignees = [_of(world, i, "User") for i in given.get("assigneeIds") or []]
    milestone = _of(world, given["milestoneId"], "Milestone") if given.get("milestoneId") else None
    issue = add_item(world, "Issue", repo, number, given["title"], world.viewer, world.now()[:10], labels)
    issue.update(body=given.get("body") or "", createdAt=world.clock.strftime("%Y-%m-%dT%H:%M:%SZ"), state="OPEN", comments=[])
    issue.update(assignees=assignees, milestone=milestone)
    if milestone is not None:
        milestone["issues"].append(issue)
    repo["issues"].append(issue)
    return {"issue": issue}


def _star(adding: bool) -> Callable[[World, dict[str, Any]], Obj]:
    def change(world: World, given: dict[str, Any]) -> Obj:
        repo = _of(world, given["starrableId"], "Repository")
        if adding and world.viewer not in repo["stargazers"]:
            repo["stargazers"].append(world.viewer)
        elif not adding and world.viewer in repo["stargazers"]:
            repo["stargazers"].remove(world.viewer)
        return {"starrable": repo}

    return change


_MUTATIONS: dict[str, Callable[[World, dict[str, Any]], Obj]] = {
    "addComment": _add_comment,
    "closeIssue": _set_state("CLOSED"),
    "reopenIssue": _set_state("OPEN"),
    "addLabelsToLabelable": _labels(adding=True),
    "removeLabelsFromLabelable": _labels(adding=False),
    "createIssue": _create_issue,
    "addStar": _star(adding=True),
    "removeStar": _star(adding=False),
}


def _mutate(world: World, name: str, args: dict[str, Any]) -> Obj:
    if name not in _MUTATIONS:
        raise GraphQLError(f"{name} is not served here; the mutations served are {', '.join(sorted(_MUTATIONS))}.")
    given = args.get("input") or {}
    return {**_MUTATIONS[name](world, given), "clientMutationId": given.get("clientMutationId")}


# -- HTTP --------------------------------------------------------------------------------------------


def app(schema: GraphQLSchema | None = None) -> Callable[..., Any]:
    """The API as an ASGI app: GraphQL over POST at any path, and POST /reset for a fresh world."""
    served = schema or github_schema()
    state = {"world": make_world()}
    introspections: dict[str, dict[str, Any]] = {}  # the schema never changes: each introspection is answered once

    async def answer(body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            request = json.loads(body or b"null")
            query, variables, operation = request["query"], request.get("variables"), request.get("operationName")
        except (ValueError, TypeError, KeyError):
            return 400, {"errors": [{"message": 'Problems parsing JSON: send {"query": "...", "variables": {...}}'}]}
        if "__schema" in query and query in introspections:
            return 200, introspections[query]
        result = await graphql(served, query, {"__typename": "Query"}, state["world"], variables, operation, resolve, resolve_type)
        payload: dict[str, Any] = {"data": result.data} if result.data is not None or not result.errors else {}
        if result.errors:
            payload["errors"] = [error.formatted for error in result.errors]
        if "__schema" in query and not result.errors and len(introspections) < 8:
            introspections[query] = payload
        return 200, payload

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        if scope["method"] != "POST":
            status, payload = 405, {"errors": [{"message": "POST a GraphQL request as JSON."}]}
        elif scope["path"].rstrip("/") == "/reset":
            state["world"] = make_world()
            status, payload = 200, {"reset": True}
        else:
            status, payload = await answer(b"".join(chunks))
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(payload).encode()})

    return asgi


def main(argv: list[str]) -> None:
    import uvicorn

    if len(argv) != 1 or not argv[0].isdigit():
        sys.exit("usage: python -m tests.pyservers.github PORT")
    uvicorn.run(app(), host="127.0.0.1", port=int(argv[0]), log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
