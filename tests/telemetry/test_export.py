"""Spans and metrics through the official SDK's OTLP/HTTP exporter to a real collector on
loopback (`tests/harness/otlp.py`), decoded from the protobuf wire."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from tests.harness.otlp import running_collector
from tokengauge.activity.record import RequestRecord
from tokengauge.settings import ProviderSettings, TelemetrySettings
from tokengauge.telemetry.export import Telemetry
from tokengauge.telemetry.request import EndedRequest, TraceParent

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
PROVIDER = ProviderSettings(id="openrouter", preset="openrouter", base_url="https://x.invalid/v1")


def record(**changes: object) -> RequestRecord:
    fields: dict[str, object] = {
        "time": time.time(),
        "model_id": "anthropic/claude-sonnet-4",
        "kind": "turn",
        "outcome": "answered",
        "estimated_tokens": 10_400,
        "window": 200_000,
        "max_input_tokens": 168_000,
        "conversation": "c0ffee",
        "input_tokens": 10_000,
        "cached_tokens": 8_000,
        "cache_write_tokens": 500,
        "output_tokens": 321,
        "reasoning_tokens": 40,
        "cost_usd": 0.0123,
        "trimmed_tokens": 700,
        "tool_docs_saved": 1_200,
        **changes,
    }
    return RequestRecord(**fields)  # type: ignore[arg-type]


def ended(parent: TraceParent | None = None, **changes: object) -> EndedRequest:
    start = time.time_ns()
    fields: dict[str, object] = {
        "record": record(),
        "provider": PROVIDER,
        "url": "https://openrouter.ai/api/v1/chat/completions",
        "start_ns": start,
        "end_ns": start + 2_500_000_000,
        "first_chunk_ns": start + 400_000_000,
        "parent": parent,
        "max_tokens": 4_096,
        "finish_reason": "stop",
        **changes,
    }
    return EndedRequest(**fields)  # type: ignore[arg-type]


def parent() -> TraceParent:
    found = TraceParent.from_model_options(
        {"_otelTraceContext": {"traceId": TRACE_ID, "spanId": PARENT_ID, "traceFlags": 1}}
    )
    assert found is not None
    return found


def test_a_request_is_one_client_span_under_copilots() -> None:
    with running_collector() as collector:
        telemetry = Telemetry(
            TelemetrySettings(
                enabled=True,
                endpoint=collector.url,
                headers={"x-team-token": "collector-secret"},
                resource_attributes={"team.id": "platform"},
            ),
            semconv_opt_in="gen_ai_latest_experimental",
        )
        request = ended(parent())
        telemetry.request_ended(request)
        assert telemetry.flush()
        telemetry.shutdown()
    [span] = collector.spans
    assert (span.name, span.kind) == ("chat anthropic/claude-sonnet-4", 3)  # SPAN_KIND_CLIENT
    assert (span.trace_id, span.parent_span_id) == (TRACE_ID, PARENT_ID)
    assert (span.start_ns, span.end_ns) == (request.start_ns, request.end_ns)
    assert span.resource["team.id"] == "platform"
    assert span.resource["service.name"] == "tokengauge"
    assert span.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openrouter",
        "gen_ai.request.model": "anthropic/claude-sonnet-4",
        "gen_ai.request.max_tokens": 4_096,
        "gen_ai.request.stream": True,
        "gen_ai.conversation.id": "c0ffee",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.response.time_to_first_chunk": 0.4,
        "gen_ai.usage.input_tokens": 10_000,  # cache reads and writes included
        "gen_ai.usage.output_tokens": 321,
        "gen_ai.usage.cache_read.input_tokens": 8_000,
        "gen_ai.usage.cache_creation.input_tokens": 500,
        "gen_ai.usage.reasoning.output_tokens": 40,
        "server.address": "openrouter.ai",
        "server.port": 443,
        "tokengauge.request.kind": "turn",
        "tokengauge.estimate.input_tokens": 10_400,
        "tokengauge.estimate.error": 0.04,
        "tokengauge.window": 200_000,
        "tokengauge.max_input_tokens": 168_000,
        "tokengauge.trimmed.input_tokens": 700,
        "tokengauge.tool_docs.saved_tokens": 1_200,
        "tokengauge.cost.usd": 0.0123,
        "tokengauge.cost.source": "estimate",
    }
    assert all(h.get("x-team-token") == "collector-secret" for h in collector.headers)
    durations = collector.metrics["gen_ai.client.operation.duration"]
    assert durations[-1][1:] == (1, 2.5)  # cumulative: each export carries all so far
    tokens = {
        a["gen_ai.token.type"]: total
        for a, _, total in collector.metrics["gen_ai.client.token.usage"]
    }
    assert tokens == {"input": 10_000, "output": 321}


def test_without_copilots_context_a_root_span_and_the_older_name_too() -> None:
    with running_collector() as collector:
        telemetry = Telemetry(TelemetrySettings(enabled=True, endpoint=collector.url))
        failed = record(
            outcome="failed",
            error="connection refused",
            input_tokens=None,
            output_tokens=None,
            cost_usd=None,
        )
        telemetry.request_ended(
            ended(
                None,
                record=failed,
                error_type="connection",
                first_chunk_ns=None,
                finish_reason=None,
            )
        )
        telemetry.shutdown()
    [span] = collector.spans
    assert span.parent_span_id == "" and len(span.trace_id) == 32
    assert (span.status_code, span.status_message) == (2, "connection refused")  # ERROR
    assert span.attributes["error.type"] == "connection"
    assert span.attributes["gen_ai.system"] == "openrouter"  # no opt-in: the older name beside
    assert "gen_ai.usage.input_tokens" not in span.attributes
    assert "gen_ai.client.token.usage" not in collector.metrics
    attributes, _, _ = collector.metrics["gen_ai.client.operation.duration"][-1]
    assert attributes["error.type"] == "connection"


def test_a_thousand_requests_lose_no_span() -> None:
    with running_collector() as collector:
        telemetry = Telemetry(TelemetrySettings(enabled=True, endpoint=collector.url))
        for i in range(1_000):
            telemetry.request_ended(ended(parent(), record=record(conversation=f"c{i}")))
        telemetry.shutdown()
    assert sorted(s.attributes["gen_ai.conversation.id"] for s in collector.spans) == sorted(
        f"c{i}" for i in range(1_000)
    )
    assert collector.posts < 100  # batched, not one post per span


@pytest.mark.parametrize("trouble", ["refused", "nothing-listens"])
def test_a_collector_in_trouble_costs_one_warning(
    trouble: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with running_collector() as collector:
        collector.refusing = True
        if trouble == "refused":
            endpoint = collector.url
        else:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
        telemetry = Telemetry(TelemetrySettings(enabled=True, endpoint=endpoint))
        for _ in range(200):
            telemetry.request_ended(ended(parent()))
        telemetry.shutdown()  # does not wait out the exporter's retries
        for _ in range(200):  # …which end in the background
            if any(r.levelno >= logging.WARNING for r in caplog.records):
                break
            time.sleep(0.1)
    said = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and "did not take" in said[0].getMessage()
    assert endpoint in said[0].getMessage()


@pytest.mark.parametrize(
    "context",
    [
        None,
        "00-4bf9-01",
        {"traceId": "0" * 32, "spanId": PARENT_ID},
        {"traceId": TRACE_ID.upper(), "spanId": PARENT_ID},
        {"traceId": TRACE_ID, "spanId": 7},
        {"traceId": TRACE_ID},
    ],
)
def test_a_trace_context_that_is_not_one_is_ignored(context: object) -> None:
    assert TraceParent.from_model_options({"_otelTraceContext": context}) is None
