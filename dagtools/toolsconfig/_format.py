"""The tools config: a JSON (or YAML) list in the common function-calling format, extended with
`type` (`api`, `local`, `client`), `context` (parameters the host fills, hidden from the model) and
`api` (which API runs the tool: a GraphQL `query`, or a REST `path` and `method`).

Loading validates everything that can be checked without the API, so a mistake in the file is a
`ConfigError` naming the entry, not a failed call later. `attach_tools_config` adds the tools to a
session; the two Internal entries (chat persistence) are never shown to a model: see `ChatStore`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from graphql import GraphQLError, OperationDefinitionNode, parse

from .._errors import ConfigError
from .._yaml import parse_data

__all__ = [
    "GET_CHAT_MESSAGES",
    "SAVE_CHAT_MESSAGE",
    "ApiSpec",
    "ToolEntry",
    "ToolsConfig",
    "load_tools_config",
]

SAVE_CHAT_MESSAGE = "InternalSaveChatMessage"
GET_CHAT_MESSAGES = "InternalGetChatMessages"
INTERNAL = (SAVE_CHAT_MESSAGE, GET_CHAT_MESSAGES)

EntryType = Literal["api", "local", "client"]
_TYPES = ("function", "api", "local", "client")
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_PATH_PARAMETER = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True, kw_only=True)
class ApiSpec:
    """Which API runs a tool, and how: a GraphQL `query`, or a REST `method` on `path`."""

    name: str = "default"
    query: str | None = None
    path: str | None = None
    method: str | None = None  # REST only; GET when a path is given without one

    @property
    def is_rest(self) -> bool:
        return self.path is not None

    @property
    def path_parameters(self) -> tuple[str, ...]:
        return tuple(_PATH_PARAMETER.findall(self.path or ""))


@dataclass(frozen=True, kw_only=True)
class ToolEntry:
    """One entry of the config. `parameters` is the full schema; `model_parameters` what a model sees."""

    name: str
    description: str
    parameters: dict[str, Any]
    type: EntryType
    context: tuple[str, ...] = ()
    api: ApiSpec | None = None

    @property
    def model_parameters(self) -> dict[str, Any]:
        """The parameters without the context fields: the model can neither see nor set them."""
        if not self.context:
            return self.parameters
        out = dict(self.parameters)
        out["properties"] = {k: v for k, v in self.parameters.get("properties", {}).items() if k not in self.context}
        required = [r for r in self.parameters.get("required", ()) if r not in self.context]
        if required:
            out["required"] = required
        else:
            out.pop("required", None)
        return out

    @property
    def properties(self) -> dict[str, Any]:
        return self.parameters.get("properties", {})


@dataclass(frozen=True, kw_only=True)
class ToolsConfig:
    """The loaded config: the tools a model may see, and the Internal chat-persistence entries."""

    tools: tuple[ToolEntry, ...]
    save_chat_message: ToolEntry | None = None
    get_chat_messages: ToolEntry | None = None

    def __iter__(self):
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def entry(self, name: str) -> ToolEntry:
        for entry in (*self.tools, self.save_chat_message, self.get_chat_messages):
            if entry is not None and entry.name == name:
                return entry
        raise ConfigError(f"The tools config has no entry {name!r}.")

    @property
    def context_fields(self) -> tuple[str, ...]:
        """Every context field some entry needs, in the order they first appear."""
        seen: dict[str, None] = {}
        for entry in (*self.tools, self.save_chat_message, self.get_chat_messages):
            if entry is not None:
                seen.update(dict.fromkeys(entry.context))
        return tuple(seen)


ConfigSource = str | Path | list[Any] | ToolsConfig


def load_tools_config(source: ConfigSource) -> ToolsConfig:
    """Read and validate a tools config: a path to a .json/.yaml file, its text, or the parsed list."""
    if isinstance(source, ToolsConfig):
        return source
    where = "the tools config"
    if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith(("[", "{")) and "\n" not in source):
        path = Path(source)
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"Could not read the tools config {path}: {error}") from None
        data = parse_data(text, where, json_first=path.suffix not in (".yaml", ".yml"))
    elif isinstance(source, str):
        data = parse_data(source, where)
    else:
        data = source
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list):
        raise ConfigError(f"{where} must be a list of tool entries, not {type(data).__name__}.")
    tools: list[ToolEntry] = []
    internal: dict[str, ToolEntry] = {}
    names: set[str] = set()
    for position, raw in enumerate(data):
        entry = _entry(raw, position)
        if entry.name in names:
            raise ConfigError(f"Tool {entry.name!r} is defined twice in {where}.")
        names.add(entry.name)
        if entry.name in INTERNAL:
            _check_internal(entry)
            internal[entry.name] = entry
        else:
            tools.append(entry)
    return ToolsConfig(
        tools=tuple(tools), save_chat_message=internal.get(SAVE_CHAT_MESSAGE), get_chat_messages=internal.get(GET_CHAT_MESSAGES)
    )


def _entry(raw: Any, position: int) -> ToolEntry:
    label = f"Tool entry {position + 1}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{label} must be an object with `type` and `function`, not {type(raw).__name__}.")
    function = raw.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ConfigError(f"{label} needs a `function` object with a `name`.")
    name = function["name"]
    label = f"Tool {name!r}"
    if not _NAME.match(name):
        raise ConfigError(f"{label}: a name must be 1 to 64 letters, digits, _ or -, as every provider requires.")
    unknown = set(raw) - {"type", "function", "context", "api"}
    if unknown:
        raise ConfigError(f"{label}: unknown key(s) {', '.join(sorted(unknown))}; an entry has type, function, context and api.")
    kind = raw.get("type", "function")
    if kind not in _TYPES:
        raise ConfigError(f"{label}: unknown type {kind!r}; use api, local or client (or function).")
    if kind == "function":  # the plain format: an api object says it runs against an API
        kind = "api" if "api" in raw else "local"
    description = function.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{label}: `description` must be a string.")
    parameters = function.get("parameters", {"type": "object", "properties": {}})
    _check_parameters(label, parameters)
    context = raw.get("context", [])
    if not isinstance(context, list) or not all(isinstance(c, str) for c in context):
        raise ConfigError(f"{label}: `context` must be a list of parameter names.")
    missing = [c for c in context if c not in parameters.get("properties", {})]
    if missing:
        raise ConfigError(
            f"{label}: context field(s) {', '.join(missing)} are not among its parameters "
            f"({', '.join(parameters.get('properties', {})) or 'none'})."
        )
    api = None
    if kind == "api":
        api = _api(label, raw.get("api"), parameters)
    elif "api" in raw:
        raise ConfigError(f"{label}: a {kind} tool has no `api`; use type api to run it against an API.")
    return ToolEntry(name=name, description=description, parameters=parameters, type=kind, context=tuple(dict.fromkeys(context)), api=api)


def _check_parameters(label: str, parameters: Any) -> None:
    if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
        raise ConfigError(f'{label}: `parameters` must be a JSON Schema object ({{"type": "object", ...}}).')
    properties = parameters.get("properties", {})
    if not isinstance(properties, dict):
        raise ConfigError(f"{label}: `parameters.properties` must be an object.")
    required = parameters.get("required", [])
    if not isinstance(required, list) or any(r not in properties for r in required):
        raise ConfigError(f"{label}: `parameters.required` must list names among its properties.")


def _api(label: str, raw: Any, parameters: dict[str, Any]) -> ApiSpec:
    if not isinstance(raw, dict):
        raise ConfigError(f"{label}: an api tool needs an `api` object with a `query` (GraphQL) or a `path` (REST).")
    name = raw.get("name", "default")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{label}: `api.name` must name a configured API.")
    query, path = raw.get("query"), raw.get("path")
    if (query is None) == (path is None):
        raise ConfigError(f"{label}: `api` needs exactly one of `query` (GraphQL) or `path` and `method` (REST).")
    properties = parameters.get("properties", {})
    if query is not None:
        if not isinstance(query, str):
            raise ConfigError(f"{label}: `api.query` must be a string.")
        _check_query(label, query, properties)
        return ApiSpec(name=name, query=query)
    method = str(raw.get("method", "GET")).upper()
    if method not in _METHODS:
        raise ConfigError(f"{label}: unknown REST method {raw.get('method')!r}; use one of {', '.join(_METHODS)}.")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ConfigError(f"{label}: `api.path` must be a string starting with /, such as /orders/{{id}}.")
    spec = ApiSpec(name=name, path=path, method=method)
    unknown = [p for p in spec.path_parameters if p not in properties]
    if unknown:
        raise ConfigError(f"{label}: path parameter(s) {', '.join(unknown)} in {path} are not among its parameters.")
    return spec


def _check_query(label: str, query: str, properties: dict[str, Any]) -> None:
    try:
        document = parse(query)
    except GraphQLError as error:
        raise ConfigError(f"{label}: `api.query` is not valid GraphQL: {error.message}") from None
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if len(operations) != 1:
        raise ConfigError(f"{label}: `api.query` must hold exactly one operation, not {len(operations)}.")
    variables = [v.variable.name.value for v in operations[0].variable_definitions or ()]
    extra = [v for v in variables if v not in properties]
    if extra:
        raise ConfigError(f"{label}: the query's variable(s) ${', $'.join(extra)} are not among its parameters.")
    unused = [p for p in properties if p not in variables]
    if unused:
        raise ConfigError(
            f"{label}: parameter(s) {', '.join(unused)} are not variables of its query; declare them ($name: Type) or drop them."
        )


def _check_internal(entry: ToolEntry) -> None:
    label = f"Tool {entry.name!r}"
    if entry.type != "api":
        raise ConfigError(f"{label} stores the chat through the API, so it must be an api tool.")
    properties = entry.properties
    if entry.name == SAVE_CHAT_MESSAGE:
        missing = [f for f in ("role", "content") if f not in properties]
        if missing:
            raise ConfigError(
                f"{label} needs the parameter(s) {', '.join(missing)}; a chat message has role, "
                "content, function_call, name and the context fields."
            )
    else:
        extra = [p for p in properties if p not in entry.context]
        if extra:
            raise ConfigError(
                f"{label} takes only context fields, so that it loads one conversation; {', '.join(extra)} are not in its context."
            )


def context_values(entry: ToolEntry, context: Mapping[str, Any]) -> dict[str, Any]:
    """The entry's context fields from the host's values; ConfigError when one is missing."""
    missing = [c for c in entry.context if c not in context]
    if missing:
        raise ConfigError(
            f"Tool {entry.name!r} needs the context value(s) {', '.join(missing)}; pass them in "
            "`context`, such as context={" + ", ".join(f"{m!r}: ..." for m in missing) + "}."
        )
    return {c: context[c] for c in entry.context}
