"""Running a tools-config entry against its API: a GraphQL query through an executor, or a REST call.

Arguments always travel as GraphQL variables, URL-encoded path segments, query parameters or a JSON
body, never spliced into a document. A path parameter is one segment, always: a value that is empty,
`.` or `..`, or holds a slash or backslash (even percent-encoded, which many servers decode before
routing) is refused, so no argument can move a request to another path. A REST call is bounded like
a GraphQL one: `timeout` is a deadline for the whole request, the answer is read only up to
`max_response_bytes`, redirects are not followed, and error texts are redacted of credentials.

Anything the model can fix, or only wait out (a GraphQL error, an HTTP error status, an API that is
down), raises `ToolCallError`, which a session turns into an
error result; a config that names an API nobody registered raises `ConfigError` at attach time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import anyio
import httpx

from .._closing import AsyncClosing
from .._errors import ConfigError, ExecutorError, ToolCallError
from .._limits import MAX_RESPONSE_BYTES
from .._redact import redact, secrets_of
from ..executors._base import Executor, format_error
from ..executors._bodies import encode_json, read_capped
from ..executors._http import HttpExecutor
from ..executors._tls import tls_context
from ._format import ToolEntry

__all__ = ["ApiTarget", "ConfigApis", "RestApi"]

_EXCERPT = 300


@dataclass(frozen=True, kw_only=True)
class RestApi:
    """A REST API's base URL, with headers, a deadline and an answer size limit for every request to it."""

    base_url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    max_response_bytes: int = MAX_RESPONSE_BYTES

    def redact(self, text: str) -> str:
        """`text` without the credentials in this API's headers and base URL."""
        return redact(text, secrets_of(self.headers, self.base_url))

    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None) -> tuple[int, str, Any]:
        """One request; returns (status, reason, parsed body). A new client per call keeps it loop-safe.

        Raises TimeoutError past `timeout`, and ExecutorError for an answer over `max_response_bytes`."""
        url = self.base_url.rstrip("/") + path
        headers = httpx.Headers(dict(self.headers))
        if body is not None and "content-type" not in headers:
            headers["Content-Type"] = "application/json"
        content = None if body is None else encode_json(body)
        with anyio.fail_after(self.timeout):
            async with httpx.AsyncClient(timeout=self.timeout, headers=headers, follow_redirects=False, verify=tls_context()) as client:
                async with client.stream(method, url, params=params, content=content) as answer:
                    raw = await read_capped(answer, self.max_response_bytes, who=f"{method} {path}")
        return answer.status_code, answer.reason_phrase, _body(raw, answer.encoding or "utf-8")


ApiTarget = Executor | RestApi | str
"""What a config's `api.name` may be registered as: an executor (GraphQL), a `RestApi`, or a URL
(a GraphQL endpoint for query entries, a REST base URL for path entries)."""


class ConfigApis(AsyncClosing):
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
            path = path.replace("{" + name + "}", _segment(entry.name, name, value, entry.api.path))
        method = entry.api.method or "GET"
        params = body = None
        if method in ("GET", "DELETE"):
            params = {k: _query_value(v) for k, v in rest.items() if v is not None}
        else:
            body = rest
        try:
            status, reason, value = await api.request(method, path, params=params, body=body)
        except TimeoutError:
            raise ToolCallError(f"{entry.name} failed: {method} {path} did not answer within {api.timeout:g}s. Try again later.") from None
        except ExecutorError as error:
            raise ToolCallError(f"{entry.name} failed: {api.redact(str(error))}") from error
        except httpx.HTTPError as error:
            raise ToolCallError(api.redact(f"{entry.name} could not reach {api.base_url}: {type(error).__name__}: {error}")) from error
        if not 200 <= status < 300:
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            shown = api.redact(shown if len(shown) <= _EXCERPT * 4 else shown[: _EXCERPT * 4])
            shown = shown if len(shown) <= _EXCERPT else shown[:_EXCERPT] + "..."
            raise ToolCallError(f"{entry.name} failed: {method} {path} answered HTTP {status} {reason}" + (f": {shown}" if shown else ""))
        return value


def _body(raw: bytearray, encoding: str) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw.decode(encoding, "replace")


def _segment(tool: str, name: str, value: Any, template: str) -> str:
    """`value` as one path segment; anything that could name another path is refused."""
    text = _text(value)
    decoded = text
    for _ in range(3):  # %252f is %2f to a server that decodes twice
        decoded = unquote(decoded)
    if decoded in ("", ".", "..") or "/" in decoded or "\\" in decoded:
        shown = json.dumps(text, ensure_ascii=False)
        raise ToolCallError(
            f"{tool} cannot use {shown} as {name}: it is one segment of the path {template}, so it must not be "
            "empty, . or .., nor hold a / or \\ (percent-encoded or not). Pass the identifier itself."
        )
    return quote(text, safe="")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolCallError(
            f"{json.dumps(text)[:80]} is not valid Unicode text (it holds a lone surrogate); send the text without it."
        ) from None
    return text


def _query_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_text(v) for v in value]
    return _text(value)
