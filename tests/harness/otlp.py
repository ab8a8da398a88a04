"""An OTLP/HTTP collector on loopback: what a team's collector receives, decoded with the
OpenTelemetry proto package (`ExportTraceServiceRequest`, `ExportMetricsServiceRequest`) from the
protobuf wire or OTLP's JSON (Copilot Chat's default), not a mock of the exporter. It can be told to
refuse (503) to stand for a collector in trouble.

`python -m tests.harness.otlp --spans FILE` runs one until SIGTERM/SIGINT: its base URL is the first
line of stdout, and every span received is appended to FILE as one JSON line (`Span`'s fields).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gzip
import json
import re
import signal
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
from google.protobuf import json_format  # type: ignore[import-untyped]
from google.protobuf.message import Message  # type: ignore[import-untyped]
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

# OTLP/JSON writes trace and span ids as hex where protobuf's JSON mapping reads bytes as base64.
_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})
_HEX = re.compile(r"[0-9a-fA-F]*")


def value_of(value: AnyValue) -> Any:
    """An attribute's value as Python."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    """`KeyValue`s as a dict."""
    return {pair.key: value_of(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


def _ids_as_base64(value: Any) -> Any:
    """An OTLP/JSON document with its hex ids as protobuf's JSON mapping reads bytes."""
    if isinstance(value, list):
        return [_ids_as_base64(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: base64.b64encode(bytes.fromhex(item)).decode()
        if key in _ID_KEYS and isinstance(item, str) and _HEX.fullmatch(item) and len(item) % 2 == 0
        else _ids_as_base64(item)
        for key, item in value.items()
    }


def decode(request: Message, body: bytes, content_type: str) -> None:
    """Read an export request from its protobuf or (by its content type) OTLP/JSON body."""
    if "json" in content_type:
        document = _ids_as_base64(json.loads(body))
        json_format.ParseDict(document, request, ignore_unknown_fields=True)
    else:
        request.ParseFromString(body)


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
    spans_file: Path | None = None
    """Where each span received is also appended, as one JSON line."""
    lock: threading.Lock = attrs.field(factory=threading.Lock)

    def take_traces(self, body: bytes, content_type: str = "") -> None:
        request = ExportTraceServiceRequest()
        decode(request, body, content_type)
        with self.lock:
            received = len(self.spans)
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
            if self.spans_file is not None:
                with self.spans_file.open("a", encoding="utf-8") as out:
                    for span in self.spans[received:]:
                        out.write(json.dumps(attrs.asdict(span), default=_bytes_hex) + "\n")

    def take_metrics(self, body: bytes, content_type: str = "") -> None:
        request = ExportMetricsServiceRequest()
        decode(request, body, content_type)
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
            body = self.body()
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
            content_type = self.headers.get("Content-Type", "")
            if self.path.endswith("/v1/traces"):
                collector.take_traces(body, content_type)
            elif self.path.endswith("/v1/metrics"):
                collector.take_metrics(body, content_type)
            else:
                self.send_response(404)
                self.end_headers()
                return
            # An empty export response: `{}` in OTLP/JSON, no bytes in protobuf.
            answer = b"{}" if "json" in content_type else b""
            self.send_response(200)
            self.send_header("Content-Type", content_type or "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def body(self) -> bytes:
            """The request's body, sized or (as Node's exporters send it) chunked."""
            if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
                return self.rfile.read(int(self.headers.get("Content-Length", 0)))
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0], 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers
                pass
            return b"".join(chunks)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _bytes_hex(value: Any) -> str:
    """A bytes attribute in a JSON line, as hex."""
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


@contextlib.contextmanager
def running_collector(port: int = 0, spans_file: Path | None = None) -> Iterator[Collector]:
    """A collector on 127.0.0.1 (its base URL in `url`), for the block's duration."""
    collector = Collector(spans_file=spans_file)
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(collector))
    collector.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield collector
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="an OTLP/HTTP collector on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument(
        "--spans", type=Path, required=True, help="append each span here as a JSON line"
    )
    args = parser.parse_args(argv)
    args.spans.touch()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with running_collector(args.port, args.spans) as collector:
        print(collector.url, flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
