"""An OTLP/HTTP collector on loopback: what a team's collector receives, decoded with the
OpenTelemetry proto package (`ExportTraceServiceRequest`, `ExportMetricsServiceRequest`), not a
mock of the exporter. It can be told to refuse (503) to stand for a collector in trouble.
"""

from __future__ import annotations

import contextlib
import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue


def value_of(value: AnyValue) -> Any:
    """An attribute's value as Python."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    """`KeyValue`s as a dict."""
    return {pair.key: value_of(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


@attrs.frozen
class Span:
    """One span as the collector received it."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int
    status_message: str
    resource: dict[str, Any]


@attrs.define
class Collector:
    """What was received, and whether to refuse."""

    url: str = ""
    spans: list[Span] = attrs.field(factory=list)
    metrics: dict[str, list[tuple[dict[str, Any], int, float]]] = attrs.field(factory=dict)
    """Per metric name: (attributes, count, sum) of each histogram point received."""
    posts: int = 0
    refusing: bool = False
    headers: list[dict[str, str]] = attrs.field(factory=list)
    lock: threading.Lock = attrs.field(factory=threading.Lock)

    def take_traces(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        with self.lock:
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        self.spans.append(
                            Span(
                                span.name,
                                span.trace_id.hex(),
                                span.span_id.hex(),
                                span.parent_span_id.hex(),
                                span.kind,
                                span.start_time_unix_nano,
                                span.end_time_unix_nano,
                                attributes(span.attributes),
                                span.status.code,
                                span.status.message,
                                resource,
                            )
                        )

    def take_metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest.FromString(body)
        with self.lock:
            for resource_metrics in request.resource_metrics:
                for scope in resource_metrics.scope_metrics:
                    for metric in scope.metrics:
                        points = self.metrics.setdefault(metric.name, [])
                        for point in metric.histogram.data_points:
                            points.append((attributes(point.attributes), point.count, point.sum))


def _handler(collector: Collector) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            with collector.lock:
                collector.posts += 1
                collector.headers.append(dict(self.headers.items()))
                refusing = collector.refusing
            if refusing:
                self.send_response(503)
                self.end_headers()
                return
            if self.path.endswith("/v1/traces"):
                collector.take_traces(body)
            elif self.path.endswith("/v1/metrics"):
                collector.take_metrics(body)
            else:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextlib.contextmanager
def running_collector() -> Iterator[Collector]:
    """A collector on 127.0.0.1 (its base URL in `url`), for the block's duration."""
    collector = Collector()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(collector))
    collector.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield collector
    finally:
        server.shutdown()
        server.server_close()
