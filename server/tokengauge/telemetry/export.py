"""Sending the requests' spans and metrics with the official OpenTelemetry SDK over OTLP/HTTP.

Imported only when telemetry is on (the SDK, its exporter, protobuf and requests cost a server
that does not use them nothing). A request's span is made when the request has ended, with its
real start and end times, under Copilot's span when the request carried its trace context; the
SDK's batch processor queues it and exports from its own thread, so the chat's path pays only for
making the span. A collector that is down or refuses costs a warning, once (the SDK's own
logging of every failed batch is silenced); the queue is bounded and drops what does not fit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Final

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import (
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)

from tokengauge import __version__
from tokengauge.settings import TelemetrySettings
from tokengauge.telemetry.request import (
    DURATION,
    TOKEN_USAGE,
    EndedRequest,
    metric_points,
    span_attributes,
    span_name,
)

log = logging.getLogger(__name__)

EXPORT_TIMEOUT_SECONDS: Final = 3.0
"""How long one export may take, its retries included (in the exporter's thread)."""
QUEUE_SIZE: Final = 4_096
"""Spans waiting for export at most (more are dropped)."""
BATCH_DELAY_MS: Final = 1_000
METRICS_INTERVAL_MS: Final = 15_000
SHUTDOWN_TIMEOUT_MS: Final = 2_000
"""What flushing at shutdown may take (the language client kills the server ~4 s after stop)."""
DURATION_BUCKETS: Final = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24)
DURATION_BUCKETS_LONG: Final = (20.48, 40.96, 81.92)
TOKEN_BUCKETS: Final = tuple(4**power for power in range(14))
"""Copilot's own bucket boundaries for the two metrics."""


class Telemetry:
    """The SDK's tracer and meter providers, sending to one collector."""

    def __init__(self, settings: TelemetrySettings, semconv_opt_in: str = "") -> None:
        """Set up the providers (nothing is sent until a request ends)."""
        logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)  # `_Warning` says it once
        self._semconv = semconv_opt_in
        self._warning = _Warning(settings.endpoint or "the OTLP endpoint of OTEL_EXPORTER_OTLP_*")
        resource = Resource.create(
            {SERVICE_NAME: settings.service_name or "tokengauge", **settings.resource_attributes}
        )
        base = settings.endpoint.rstrip("/") if settings.endpoint else None
        spans = OTLPSpanExporter(
            endpoint=f"{base}/v1/traces" if base else None,
            headers=settings.headers or None,
            timeout=EXPORT_TIMEOUT_SECONDS,
        )
        metrics = OTLPMetricExporter(
            endpoint=f"{base}/v1/metrics" if base else None,
            headers=settings.headers or None,
            timeout=EXPORT_TIMEOUT_SECONDS,
        )
        self._tracers = TracerProvider(resource=resource)
        self._tracers.add_span_processor(
            BatchSpanProcessor(
                _WatchedSpans(spans, self._warning),
                max_queue_size=QUEUE_SIZE,
                schedule_delay_millis=BATCH_DELAY_MS,
            )
        )
        self._tracer = self._tracers.get_tracer("tokengauge", __version__)
        reader = PeriodicExportingMetricReader(
            _WatchedMetrics(metrics, self._warning), export_interval_millis=METRICS_INTERVAL_MS
        )
        self._meters = MeterProvider(resource=resource, metric_readers=[reader])
        meter = self._meters.get_meter("tokengauge", __version__)
        self._histograms = {
            DURATION: meter.create_histogram(
                DURATION,
                unit="s",
                description="GenAI operation duration",
                explicit_bucket_boundaries_advisory=[*DURATION_BUCKETS, *DURATION_BUCKETS_LONG],
            ),
            TOKEN_USAGE: meter.create_histogram(
                TOKEN_USAGE,
                unit="{token}",
                description="Number of input and output tokens used",
                explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS),
            ),
        }

    def request_ended(self, ended: EndedRequest) -> None:
        """The request's span (queued for export) and its metrics."""
        parent = None
        if ended.parent is not None:
            flags = TraceFlags(TraceFlags.SAMPLED if ended.parent.sampled else 0)
            context = SpanContext(ended.parent.trace_id, ended.parent.span_id, True, flags)
            parent = trace.set_span_in_context(NonRecordingSpan(context))
        span = self._tracer.start_span(
            span_name(ended),
            context=parent,
            kind=SpanKind.CLIENT,
            attributes=span_attributes(ended, self._semconv),
            start_time=ended.start_ns,
        )
        if ended.error_type is not None:
            span.set_status(Status(StatusCode.ERROR, ended.record.error or ended.error_type))
        span.end(end_time=max(ended.end_ns, ended.start_ns))
        for point in metric_points(ended):
            self._histograms[point.name].record(point.value, point.attributes)

    def flush(self, timeout_ms: int = SHUTDOWN_TIMEOUT_MS) -> bool:
        """Export what waits now; False if it did not all go within `timeout_ms`."""
        spans = self._tracers.force_flush(timeout_ms)
        metrics = self._meters.force_flush(timeout_ms)
        return bool(spans and metrics)

    def shutdown(self) -> None:
        """Send what waits and stop, giving up after `SHUTDOWN_TIMEOUT_MS` (a collector that
        does not answer must not keep the server from exiting)."""

        def stop() -> None:
            self.flush()
            self._tracers.shutdown()
            self._meters.shutdown(timeout_millis=SHUTDOWN_TIMEOUT_MS)

        stopping = threading.Thread(target=stop, name="telemetry-shutdown", daemon=True)
        stopping.start()
        stopping.join(SHUTDOWN_TIMEOUT_MS / 1000)


class _Warning:
    """Says once that the collector did not take what was sent, and once that it does again."""

    def __init__(self, where: str) -> None:
        self._where = where
        self._lock = threading.Lock()
        self._failing = False
        self._warned = False

    def outcome(self, succeeded: bool, what: str) -> None:
        with self._lock:
            if succeeded:
                if self._failing:
                    log.info("telemetry: %s takes spans and metrics again", self._where)
                self._failing = False
                return
            first = not self._warned
            self._failing = self._warned = True
        if first:
            log.warning(
                "telemetry: the collector at %s did not take the %s (down, or refusing them); "
                "chats go on, and what cannot be sent is dropped",
                self._where,
                what,
            )


class _WatchedSpans(SpanExporter):
    """The OTLP span exporter, its failures said once."""

    def __init__(self, exporter: SpanExporter, warning: _Warning) -> None:
        self._exporter = exporter
        self._warning = warning

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self._exporter.export(spans)
        except Exception:
            result = SpanExportResult.FAILURE
        self._warning.outcome(result is SpanExportResult.SUCCESS, "spans")
        return result

    def shutdown(self) -> None:
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._exporter.force_flush(timeout_millis)


class _WatchedMetrics(MetricExporter):
    """The OTLP metric exporter, its failures said once."""

    def __init__(self, exporter: MetricExporter, warning: _Warning) -> None:
        super().__init__(
            preferred_temporality=exporter._preferred_temporality,
            preferred_aggregation=exporter._preferred_aggregation,
        )
        self._exporter = exporter
        self._warning = warning

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: object
    ) -> MetricExportResult:
        try:
            result = self._exporter.export(metrics_data, timeout_millis=timeout_millis)
        except Exception:
            result = MetricExportResult.FAILURE
        self._warning.outcome(result is MetricExportResult.SUCCESS, "metrics")
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._exporter.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: object) -> None:
        self._exporter.shutdown(timeout_millis=timeout_millis)
