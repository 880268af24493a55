"""A hostile GraphQL server on loopback: the kitchen API, with every answer spoiled one named way.

`HostileServer(schema)` runs the schema for real, then hands the honest answer to the current case,
which turns it into what goes on the wire: a status, a content type, bytes, and optionally a
`Content-Length` that lies. With `case = None` it answers honestly, so a test can set up its objects
first. `CASES` is the corpus: every way of answering wrongly that once crashed a session, and the
ones an HTTP client meets in the wild (truncated JSON, an HTML error page, the wrong content type).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from tests.servers import FaultServer

__all__ = ["CASES", "Case", "HostileServer", "Reply"]


@dataclass(frozen=True)
class Reply:
    """What goes on the wire for one request."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"
    length: int | None = None  # a Content-Length other than the body's: the connection ends early


@dataclass(frozen=True)
class Case:
    """One way to spoil an answer: `spoil` gets the honest answer (`{"data": ..., "errors": ...}`)."""

    name: str
    spoil: Callable[[dict[str, Any]], Reply]
    expect: str = ""  # words the error results must contain, where the case decides them


def _json(value: Any, **options: Any) -> Reply:
    return Reply(json.dumps(value).encode(), **options)


def _text(text: str, **options: Any) -> Reply:
    return Reply(text.encode(), **options)


def _roots(answer: dict[str, Any], replace: Callable[[Any], Any]) -> Reply:
    """Every root field's value (one per call of a batch) replaced."""
    data = answer.get("data") or {}
    return _json({**answer, "data": {key: replace(value) for key, value in data.items()}})


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for inner in value.values():
            yield from _objects(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _objects(inner)


def _each_object(answer: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> Reply:
    for obj in _objects(answer.get("data")):
        if "__typename" in obj:
            change(obj)
    return _json(answer)


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        obj[key] = value

    return change


def _other_type(obj: dict[str, Any]) -> None:
    obj["__typename"] = "Oven" if obj["__typename"] != "Oven" else "Sink"


def _deep_text(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


def _with_raw(answer: dict[str, Any], key: str, raw: str) -> Reply:
    """The honest answer with one field of every object replaced by raw JSON text (not expressible in Python)."""
    marker = "\x00raw\x00"
    _each_object(answer, _set(key, marker))
    return Reply(json.dumps(answer).replace(json.dumps(marker), raw).encode())


def _error_with(**fields: Any) -> Callable[[dict[str, Any]], Reply]:
    return lambda answer: _json({"data": None, "errors": [{"message": "it broke", **fields}]})


CASES: list[Case] = [
    # -- not a GraphQL response at all
    Case("truncated JSON", lambda a: Reply(json.dumps(a).encode()[: max(1, len(json.dumps(a)) // 2)])),
    Case("body shorter than its Content-Length", lambda a: Reply(json.dumps(a).encode()[:10], length=500)),
    Case("empty body", lambda a: Reply(b"")),
    Case("plain text", lambda a: _text("all good", content_type="text/plain")),
    Case("HTML error page with 200", lambda a: _text("<html><body><h1>Oops</h1></body></html>", content_type="text/html")),
    Case("HTML error page with 502", lambda a: _text("<html><body>Bad gateway</body></html>", status=502, content_type="text/html")),
    Case("invalid UTF-8", lambda a: Reply(b'{"data": {"potato": "\xff\xfe"}}')),
    Case("JSON array at the top", lambda a: _json([a])),
    Case("JSON string at the top", lambda a: _json("data")),
    Case("neither data nor errors", lambda a: _json({"extensions": {}})),
    Case("wrong content type on a good answer", lambda a: Reply(json.dumps(a).encode(), content_type="text/html")),
    Case("deeply nested JSON", lambda a: _text('{"data": ' + _deep_text(100_000) + "}")),
    Case("deeply nested JSON in a field", lambda a: _with_raw(a, "variety", _deep_text(100_000, '"x"'))),
    Case("integer of 5000 digits", lambda a: _with_raw(a, "temperature", "1" * 5000)),
    # -- data that is not what the schema says
    Case("data is null, no errors", lambda a: _json({"data": None}), "neither data nor errors"),
    Case("data is null, errors empty", lambda a: _json({"data": None, "errors": []})),
    Case("data is a list", lambda a: _json({"data": [1, 2]})),
    Case("data is a string", lambda a: _json({"data": "potato"})),
    Case("data is a number", lambda a: _json({"data": 3})),
    Case("object field answered with a string", lambda a: _roots(a, lambda v: "Potato#1"), "a string"),
    Case("object field answered with a number", lambda a: _roots(a, lambda v: 7)),
    Case("field answered with a list", lambda a: _roots(a, lambda v: [v, v])),
    Case("list field answered with an object", lambda a: _roots(a, lambda v: v[0] if isinstance(v, list) and v else {"a": 1})),
    Case("list of lists", lambda a: _roots(a, lambda v: [[v]])),
    Case("list item is a string", lambda a: _roots(a, lambda v: [*v, "x"] if isinstance(v, list) else v)),
    Case("__typename is a list", lambda a: _each_object(a, _set("__typename", ["Potato"])), "__typename"),
    Case("__typename is an object", lambda a: _each_object(a, _set("__typename", {"name": "Potato"})), "__typename"),
    Case("__typename is a number", lambda a: _each_object(a, _set("__typename", 1)), "__typename"),
    Case("__typename is unknown", lambda a: _each_object(a, _set("__typename", "Nope")), "__typename"),
    Case("__typename is a scalar", lambda a: _each_object(a, _set("__typename", "String")), "__typename"),
    Case("__typename is an input type", lambda a: _each_object(a, _set("__typename", "BakeSettings")), "__typename"),
    Case("__typename is an interface", lambda a: _each_object(a, _set("__typename", "Food")), "__typename"),
    Case("__typename of another type", lambda a: _each_object(a, _other_type), "__typename"),
    Case("__typename empty", lambda a: _each_object(a, _set("__typename", "")), "__typename"),
    Case("__typename with a lone surrogate", lambda a: _with_raw(a, "__typename", '"Pot\\udc80ato"'), "__typename"),
    Case("__typename of 100000 characters", lambda a: _each_object(a, _set("__typename", "P" * 100_000)), "__typename"),
    Case("id is an object", lambda a: _each_object(a, _set("id", {"deep": [1, 2]}))),
    Case("id is a list", lambda a: _each_object(a, _set("id", [1]))),
    Case("id is nested deeply", lambda a: _with_raw(a, "id", _deep_text(500))),
    Case("id is true", lambda a: _each_object(a, _set("id", True))),
    Case("scalar field is an object", lambda a: _each_object(a, _set("variety", {"a": 1}))),
    Case("Boolean field is a string", lambda a: _each_object(a, _set("rinsed", "yes"))),
    Case("Int field is a float", lambda a: _each_object(a, _set("temperature", 1.5))),
    Case("Int field is infinite", lambda a: _with_raw(a, "temperature", "1e400")),
    Case("Int field is NaN", lambda a: _with_raw(a, "temperature", "NaN")),
    Case("enum field is a number", lambda a: _each_object(a, _set("cut", 3))),
    Case("string with a lone surrogate", lambda a: _with_raw(a, "variety", '"Rus\\udc80set"')),
    Case("field the type does not have", lambda a: _each_object(a, _set("secret", "x"))),
    Case("object nested in itself", lambda a: _each_object(a, _set("fries", {"__typename": "Fries", "plate": {"__typename": "Plate"}}))),
    # -- errors that are not what the spec says
    Case("errors is a string", lambda a: _json({"data": None, "errors": "it broke"}), "it broke"),
    Case("errors is an object", lambda a: _json({"data": None, "errors": {"message": "it broke"}}), "it broke"),
    Case("errors is a number", lambda a: _json({"data": None, "errors": 5})),
    Case("errors is true", lambda a: _json({"data": None, "errors": True})),
    Case("error is a string", lambda a: _json({"data": None, "errors": ["it broke"]}), "it broke"),
    Case("error is a list", lambda a: _json({"data": None, "errors": [["it", "broke"]]})),
    Case("error without a message", lambda a: _json({"data": None, "errors": [{}]})),
    Case("error message is an object", _error_with(message={"text": "it broke"}), "it broke"),
    Case("error message is nested deeply", lambda a: _text('{"data": null, "errors": [{"message": ' + _deep_text(900) + "}]}")),
    Case("error message with a lone surrogate", lambda a: _text('{"data": null, "errors": [{"message": "br\\udc80oke"}]}')),
    Case("error path is a number", _error_with(path=3), "it broke"),
    Case("error path is a string", _error_with(path="c0.potato"), "it broke"),
    Case("error path is an object", _error_with(path={"c0": 1}), "it broke"),
    Case("error path holds a list", _error_with(path=[["c0"]]), "it broke"),
    Case("error path holds null", _error_with(path=[None, "x"]), "it broke"),
    Case("error path is empty", _error_with(path=[]), "it broke"),
    Case("error path of another alias", _error_with(path=["c9", "x"]), "it broke"),
    Case("error path of a float", _error_with(path=[1.5]), "it broke"),
    Case("errors beside good data", lambda a: _json({**a, "errors": [{"message": "partly broke", "path": 7}]})),
]


class HostileServer(FaultServer):
    """The kitchen API on loopback, answering through the current `case` (None: honestly)."""

    def __init__(self, schema: Any) -> None:
        super().__init__(schema)
        self.case: Case | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (body := await self.read_request(reader)) is not None:
            honest = json.loads(await self._graphql(body))
            reply = self.case.spoil(honest) if self.case is not None else _json(honest)
            phrase = HTTPStatus(reply.status).phrase
            length = reply.length if reply.length is not None else len(reply.body)
            out = f"HTTP/1.1 {reply.status} {phrase}\r\nContent-Length: {length}\r\nContent-Type: {reply.content_type}\r\n\r\n"
            writer.write(out.encode("latin-1") + reply.body)
            await writer.drain()
            if reply.length is not None:
                return  # the body was cut short: close the connection
