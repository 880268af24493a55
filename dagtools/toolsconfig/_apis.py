"""Running a tools-config entry against its API: a GraphQL query through an executor, or a REST call.

Arguments always travel as GraphQL variables, URL-encoded path segments, query parameters or a JSON
body, never spliced into a document. Anything the model can fix, or only wait out (a GraphQL error,
an HTTP error status, an API that is down), raises `ToolCallError`, which a session turns into an
error result; a config that names an API nobody registered raises `ConfigError` at attach time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from .._errors import ConfigError, ExecutorError, ToolCallError
from ..executors._base import Executor, format_error
from ..executors._http import HttpExecutor
from ._format import ToolEntry

__all__ = ["ApiTarget", "ConfigApis", "RestApi"]

_EXCERPT = 300


@dataclass(frozen=True, kw_only=True)
class RestApi:
    """A REST API's base URL, with headers and a timeout for every request to it."""

    base_url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 30.0

    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None) -> tuple[int, str, Any]:
        """One request; returns (status, reason, parsed body). A new client per call keeps it loop-safe."""
        url = self.base_url.rstrip("/") + path
        async with httpx.AsyncClient(timeout=self.timeout, headers=dict(self.headers)) as client:
            answer = await client.request(method, url, params=params, **({} if body is None else {"json": body}))
        return answer.status_code, answer.reason_phrase, _body(answer)


ApiTarget = Executor | RestApi | str
"""What a config's `api.name` may be registered as: an executor (GraphQL), a `RestApi`, or a URL
(a GraphQL endpoint for query entries, a REST base URL for path entries)."""


class ConfigApis:
    """The APIs a tools config runs against, by name; `default` falls back to a given executor."""

    def __init__(self, apis: Mapping[str, ApiTarget] | None = None, *, default: Executor | None = None) -> None:
        self._apis: dict[str, ApiTarget] = dict(apis or {})
        if default is not None:
            self._apis.setdefault("default", default)
        self._made: dict[str, HttpExecutor] = {}

    def check(self, entry: ToolEntry) -> None:
        """ConfigError now, rather than a failed call later, when an entry's API is not registered."""
        assert entry.api is not None
        target = self._apis.get(entry.api.name)
        if target is None:
            known = ", ".join(self._apis) or "none"
            raise ConfigError(
                f"Tool {entry.name!r} runs against the API {entry.api.name!r}, which is not "
                f"registered (registered: {known}). Pass it in `executors`."
            )
        if entry.api.is_rest and not isinstance(target, (RestApi, str)):
            raise ConfigError(
                f"Tool {entry.name!r} is a REST tool, but the API {entry.api.name!r} is a GraphQL executor; register its base URL instead."
            )
        if not entry.api.is_rest and isinstance(target, RestApi):
            raise ConfigError(
                f"Tool {entry.name!r} runs a GraphQL query, but the API {entry.api.name!r} is a "
                "REST API; register an executor or the GraphQL endpoint's URL."
            )

    async def run(self, entry: ToolEntry, arguments: dict[str, Any]) -> Any:
        """Run the entry with complete arguments (context filled); returns the data or the JSON body."""
        self.check(entry)
        if entry.api is not None and entry.api.is_rest:
            return await self._rest(entry, arguments)
        return await self._graphql(entry, arguments)

    async def aclose(self) -> None:
        """Close the executors made here from URLs; registered ones belong to whoever made them."""
        made, self._made = self._made, {}
        for executor in made.values():
            await executor.aclose()

    async def _graphql(self, entry: ToolEntry, arguments: dict[str, Any]) -> Any:
        assert entry.api is not None and entry.api.query is not None
        target = self._apis[entry.api.name]
        if isinstance(target, str):
            target = self._made.setdefault(entry.api.name, HttpExecutor(target))
        assert not isinstance(target, RestApi)
        try:
            response = await target.execute(entry.api.query, arguments)
        except ExecutorError as error:
            raise ToolCallError(f"{entry.name} could not run: {error}") from error
        if response.errors:
            messages = "; ".join(format_error(e) for e in response.errors)
            raise ToolCallError(f"{entry.name} failed: {messages}")
        return response.data

    async def _rest(self, entry: ToolEntry, arguments: dict[str, Any]) -> Any:
        assert entry.api is not None and entry.api.path is not None
        target = self._apis[entry.api.name]
        api = RestApi(base_url=target) if isinstance(target, str) else target
        assert isinstance(api, RestApi)
        rest = dict(arguments)
        path = entry.api.path
        for name in entry.api.path_parameters:
            value = rest.pop(name, None)
            if value is None:
                raise ToolCallError(f"{entry.name} needs {name}: it is part of the path {entry.api.path}.")
            path = path.replace("{" + name + "}", quote(_text(value), safe=""))
        method = entry.api.method
        params = body = None
        if method in ("GET", "DELETE"):
            params = {k: _query_value(v) for k, v in rest.items() if v is not None}
        else:
            body = rest
        try:
            status, reason, value = await api.request(method, path, params=params, body=body)
        except httpx.HTTPError as error:
            raise ToolCallError(f"{entry.name} could not reach {api.base_url}: {type(error).__name__}: {error}") from error
        if not 200 <= status < 300:
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            shown = shown if len(shown) <= _EXCERPT else shown[:_EXCERPT] + "..."
            raise ToolCallError(f"{entry.name} failed: {method} {path} answered HTTP {status} {reason}" + (f": {shown}" if shown else ""))
        return value


def _body(answer: httpx.Response) -> Any:
    if not answer.content:
        return None
    try:
        return answer.json()
    except ValueError:
        return answer.text


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def _query_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_text(v) for v in value]
    return _text(value)
