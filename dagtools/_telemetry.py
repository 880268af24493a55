"""OpenTelemetry for operators: a span per tool call, a child span per GraphQL request, and metrics.

Operators watch MCP servers and agents with OpenTelemetry. dagtools reports

- a span per tool call, `execute_tool NAME` (the GenAI conventions' name): the tool, the object type
  it belongs to, the kind of result (object, objects, value, text, error, pending) and, for a failed
  call, the class of the error. A turn of several calls (whose reads share one request) is one
  `execute_tools` span with a child per call;
- a child span per GraphQL request sent over HTTP, `query` or `mutation` (the GraphQL conventions'
  name; an in-process schema sends nothing, so its calls have none): the
  operation type, a SHA-256 of the document, the bytes sent and received, the HTTP status, the
  attempts made and how many GraphQL errors came back. Never variables, headers, values, error texts
  or the URL's path, query or user: those can hold what the model or the user sent, or credentials;
- metrics: `dagtools.tool.calls`, `dagtools.tool.errors`, `dagtools.tool.duration` (seconds),
  `dagtools.graphql.request.duration` (seconds) and `dagtools.sessions.open`.

Where they go is the standard OpenTelemetry configuration, nothing of dagtools' own:

- a host that set global tracer or meter providers (its own SDK set-up, logfire, ...) gets dagtools'
  spans and metrics there, parented to its own spans;
- otherwise the `OTEL_*` variables: an `OTEL_EXPORTER_OTLP_ENDPOINT` (or its `_TRACES_`/`_METRICS_`
  form), or `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` set to `otlp` or `console`, turns export
  on, over OTLP/HTTP (protobuf); the exporters read every other variable themselves (headers,
  timeouts, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_METRIC_EXPORT_INTERVAL`).
  `OTEL_SDK_DISABLED=true` turns it off. Spans and metrics left are flushed when the process exits.

Off costs nothing: without a configured provider nothing of OpenTelemetry is imported (a host's own
import is noticed, never made), and each call pays one check of two module globals and of
`sys.modules`. The SDK and the exporter come with the `otel` extra (`pip install
'dagtools-graphql[otel]'`); variables that ask for export without it get one warning (a RuntimeWarning).
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import sys
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from ._errors import ExecutorError, install_command

__all__ = ["Telemetry", "active_telemetry", "note_answer", "note_attempt", "note_error", "session_opened", "use_providers"]

logger = logging.getLogger("dagtools")

#: Providers given in code (`use_providers`), before any other source.
_given: Telemetry | None = None
#: What the OTEL_* variables set up: None until read, False when they ask for nothing.
_from_env: Telemetry | bool | None = None
#: The host's global providers, keyed by their identity, once they are seen.
_from_globals: tuple[tuple[int, int], Telemetry | None] | None = None

_OBJECT_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*#[0-9]+$")
_EXPORTERS = {"otlp", "console"}


def active_telemetry() -> Telemetry | None:
    """Where this call's spans and metrics go, or None (the usual case, and a cheap one)."""
    global _from_env
    if _given is not None:
        return _given
    if _from_env is None:
        _from_env = _configure_from_env() or False
    if _from_env:
        return _from_env  # type: ignore[return-value]
    if "opentelemetry.trace" not in sys.modules and "opentelemetry.metrics" not in sys.modules:
        return None
    return _global_telemetry()


def use_providers(tracer_provider: Any = None, meter_provider: Any = None) -> Telemetry | None:
    """Report to these providers from now on (None for both: back to the environment and the globals)."""
    global _given
    if tracer_provider is None and meter_provider is None:
        _given = None
        return None
    from opentelemetry import metrics, trace

    _given = Telemetry(tracer_provider or trace.NoOpTracerProvider(), meter_provider or metrics.NoOpMeterProvider())
    return _given


# -- where the providers come from ------------------------------------------------------------------


def _global_telemetry() -> Telemetry | None:
    global _from_globals
    from opentelemetry import metrics, trace

    tracer_provider, meter_provider = trace.get_tracer_provider(), metrics.get_meter_provider()
    key = (id(tracer_provider), id(meter_provider))
    if _from_globals is not None and _from_globals[0] == key:
        return _from_globals[1]
    traced = not isinstance(tracer_provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
    # The API's stand-in before a provider is set is private (_ProxyMeterProvider): told by its name.
    metered = not isinstance(meter_provider, metrics.NoOpMeterProvider) and type(meter_provider).__name__ != "_ProxyMeterProvider"
    telemetry = Telemetry(tracer_provider, meter_provider) if traced or metered else None
    _from_globals = (key, telemetry)
    return telemetry


def _wanted(environ: Mapping[str, str], signal: str) -> list[str]:
    """The exporters the variables ask for, for TRACES or METRICS."""
    named = environ.get(f"OTEL_{signal}_EXPORTER", "").strip().lower()
    if named:
        exporters = [n.strip() for n in named.split(",") if n.strip() and n.strip() != "none"]
        for unknown in sorted(set(exporters) - _EXPORTERS):
            _warn(f"OTEL_{signal}_EXPORTER={named}: dagtools exports with otlp (over HTTP) or console only; {unknown} is ignored.")
        return [n for n in exporters if n in _EXPORTERS]
    endpoint = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")
    return ["otlp"] if endpoint else []


def _configure_from_env() -> Telemetry | None:
    environ = os.environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    traces, metrics = _wanted(environ, "TRACES"), _wanted(environ, "METRICS")
    if not traces and not metrics:
        return None
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        _warn(
            "The OTEL_* variables ask for telemetry, but the OpenTelemetry SDK is not installed, so nothing is exported. "
            f"Install it with: {install_command('otel')}"
        )
        return None
    for signal in ("", "_TRACES", "_METRICS"):
        protocol = environ.get(f"OTEL_EXPORTER_OTLP{signal}_PROTOCOL", "").strip().lower()
        if protocol and protocol != "http/protobuf":
            _warn(
                f"OTEL_EXPORTER_OTLP{signal}_PROTOCOL={protocol}: dagtools exports OTLP over HTTP (http/protobuf) only; "
                "point the endpoint at the collector's HTTP port (4318)."
            )
    resource = Resource.create({})
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "dagtools"}))
    tracer_provider = TracerProvider(resource=resource)
    for name in traces:
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        else:
            tracer_provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    readers: list[Any] = []
    for name in metrics:
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        else:
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stderr)))
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    atexit.register(_flush, tracer_provider, meter_provider)
    logger.info("telemetry: traces to %s, metrics to %s", ", ".join(traces) or "nowhere", ", ".join(metrics) or "nowhere")
    return Telemetry(tracer_provider, meter_provider)


def _warn(text: str) -> None:
    """A set-up that cannot work as asked is said where it is seen without -v (dagtools logs nothing unless
    asked), and once: the variables are read once."""
    warnings.warn(text, RuntimeWarning, stacklevel=2)


def _flush(tracer_provider: Any, meter_provider: Any) -> None:
    """At exit, what is still buffered is sent (a short command's spans would otherwise be lost)."""
    for provider in (tracer_provider, meter_provider):
        try:
            provider.shutdown()
        except Exception:  # an exporter that cannot reach its collector must not fail the exit
            logger.debug("telemetry: flushing at exit failed", exc_info=True)


# -- reporting ---------------------------------------------------------------------------------------


class Telemetry:
    """A tracer and the instruments, made once per pair of providers."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        from opentelemetry import trace

        self._trace = trace
        self.tracer = tracer_provider.get_tracer("dagtools")
        meter = meter_provider.get_meter("dagtools")
        self.calls = meter.create_counter("dagtools.tool.calls", unit="{call}", description="Tool calls run")
        self.errors = meter.create_counter("dagtools.tool.errors", unit="{call}", description="Tool calls that failed")
        self.duration = meter.create_histogram("dagtools.tool.duration", unit="s", description="How long a tool call took")
        self.request_duration = meter.create_histogram(
            "dagtools.graphql.request.duration", unit="s", description="How long a GraphQL request took, retries included"
        )
        self.sessions = meter.create_up_down_counter("dagtools.sessions.open", unit="{session}", description="Sessions open now")

    @contextmanager
    def turn(self, calls: Sequence[tuple[str, str, str]]) -> Iterator[_Turn]:
        """Spans for one turn's calls, each given as (call id, tool name, object type or "")."""
        trace = self._trace
        started = time.perf_counter()
        if len(calls) == 1:
            parent = None
            spans = [self.tracer.start_span(f"execute_tool {calls[0][1]}", attributes=_call_attributes(*calls[0]))]
            current = spans[0]
        else:
            parent = self.tracer.start_span("execute_tools", attributes={"dagtools.turn.calls": len(calls)})
            inside = trace.set_span_in_context(parent)
            spans = [self.tracer.start_span(f"execute_tool {c[1]}", context=inside, attributes=_call_attributes(*c)) for c in calls]
            current = parent
        turn = _Turn(self, calls, spans, started)
        token = _TURN.set(turn)
        try:
            with trace.use_span(current, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                yield turn
        except BaseException as error:
            turn.failed(error)
            raise
        finally:
            _TURN.reset(token)
            turn.end()
            if parent is not None:
                parent.end()

    @contextmanager
    def request(self, document: str, operation: str, url: str, operation_name: str | None = None) -> Iterator[_Request]:
        """A span for one GraphQL request (all its attempts), a child of the call that sent it."""
        parts = urlsplit(url)
        attributes: dict[str, Any] = {
            "graphql.operation.type": operation,
            "dagtools.graphql.document.sha256": hashlib.sha256(document.encode("utf-8", "replace")).hexdigest(),
            "dagtools.graphql.document.size": len(document.encode("utf-8", "replace")),
            "server.address": parts.hostname or "",
        }
        if parts.port or parts.scheme in ("http", "https"):
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
        if operation_name:
            attributes["graphql.operation.name"] = operation_name
        request = _Request()
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            operation, kind=self._trace.SpanKind.CLIENT, attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            token = _REQUEST.set(request)
            outcome = {"graphql.operation.type": operation}
            try:
                yield request
            except BaseException as error:
                outcome["error.type"] = type(error).__name__
                span.set_attribute("error.type", type(error).__name__)
                span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, type(error).__name__))
                raise
            finally:
                _REQUEST.reset(token)
                request.report(span)
                if request.status is not None:
                    outcome["http.response.status_code"] = request.status  # type: ignore[assignment]
                self.request_duration.record(time.perf_counter() - started, outcome)


class _Turn:
    def __init__(self, telemetry: Telemetry, calls: Sequence[tuple[str, str, str]], spans: list[Any], started: float) -> None:
        self.telemetry = telemetry
        self.calls = calls
        self.spans = spans
        self.started = started
        self.errors: dict[str, str] = {}  # call id -> the class of the error it failed with
        self.results: list[Any] | None = None
        self.crashed: str = ""

    def finish(self, results: Sequence[Any]) -> None:
        self.results = list(results)

    def failed(self, error: BaseException) -> None:
        self.crashed = type(error).__name__

    def end(self) -> None:
        telemetry, trace = self.telemetry, self.telemetry._trace
        elapsed = time.perf_counter() - self.started
        results = self.results or [None] * len(self.calls)
        for (call_id, name, type_name), span, result in zip(self.calls, self.spans, results):
            kind = _kind(result) if result is not None else "crashed"
            error = self.crashed or (self.errors.get(call_id, "ToolCallError") if kind == "error" else "")
            span.set_attribute("dagtools.result.kind", kind)
            attributes = {"gen_ai.tool.name": name, "dagtools.tool.type": type_name, "dagtools.result.kind": kind}
            if error:
                span.set_attribute("error.type", error)
                span.set_status(trace.Status(trace.StatusCode.ERROR, error))
                telemetry.errors.add(1, {"gen_ai.tool.name": name, "error.type": error})
            span.end()
            telemetry.calls.add(1, attributes)
            telemetry.duration.record(elapsed, attributes)


class _Request:
    def __init__(self) -> None:
        self.status: int | None = None
        self.sent = 0
        self.received = 0
        self.attempts = 0
        self.graphql_errors = 0

    def answered(self, errors: Sequence[Any]) -> None:
        self.graphql_errors = len(errors)

    def report(self, span: Any) -> None:
        span.set_attribute("dagtools.graphql.attempts", self.attempts)
        span.set_attribute("dagtools.graphql.errors", self.graphql_errors)
        if self.attempts:
            span.set_attribute("http.request.body.size", self.sent)
        if self.status is not None:
            span.set_attribute("http.response.status_code", self.status)
            span.set_attribute("http.response.body.size", self.received)


_TURN: ContextVar[_Turn | None] = ContextVar("dagtools_turn", default=None)
_REQUEST: ContextVar[_Request | None] = ContextVar("dagtools_request", default=None)


def _call_attributes(call_id: str, name: str, type_name: str) -> dict[str, Any]:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id}
    if type_name:
        attributes["dagtools.tool.type"] = type_name
    return attributes


def _kind(result: Any) -> str:
    """What a call gave, told from its shape, never its value: `{"result": "Potato#2"}` is an object."""
    if result.pending:
        return "pending"
    if result.is_error:
        return "error"
    value = result.value
    if isinstance(value, str):
        return "text"
    inner = value.get("result") if isinstance(value, dict) else None
    if isinstance(inner, str) and _OBJECT_ID.match(inner):
        return "object"
    if isinstance(inner, list) and inner and all(isinstance(v, str) and _OBJECT_ID.match(v) for v in inner):
        return "objects"
    return "value"


# -- the hooks' one-line calls ---------------------------------------------------------------------------


def note_error(call_id: str, error: BaseException) -> None:
    """A call failed with `error`: its span says of which class (the executor's, when the API failed)."""
    turn = _TURN.get()
    if turn is not None:
        cause = error.__cause__
        turn.errors[call_id] = type(cause if isinstance(cause, ExecutorError) else error).__name__


def note_attempt(sent: int) -> None:
    """The request being sent goes out (again): `sent` bytes."""
    request = _REQUEST.get()
    if request is not None:
        request.attempts += 1
        request.sent = sent


def note_answer(status: int, received: int) -> None:
    """The request's latest attempt was answered: HTTP `status`, `received` bytes."""
    request = _REQUEST.get()
    if request is not None:
        request.status, request.received = status, received


def session_opened() -> Callable[[], Awaitable[None]] | None:
    """Count a session open; the closer returned counts it closed (None when telemetry is off)."""
    telemetry = active_telemetry()
    if telemetry is None:
        return None
    telemetry.sessions.add(1)

    async def closed() -> None:
        telemetry.sessions.add(-1)

    return closed
