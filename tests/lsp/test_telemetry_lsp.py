"""Telemetry end to end: a real server over stdio sends chats to the test upstream, and each one
reaches a real OTLP/HTTP collector on loopback as a span under Copilot's trace context; with
telemetry off, the server never imports OpenTelemetry."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import call, running_server
from tests.harness.otlp import Collector, running_collector
from tests.lsp.chat_helpers import API_KEY, chat_options, chat_params, conversation

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
SPAN_ID = "b7ad6b7169203331"


async def spans_of(collector: Collector, count: int) -> list[Any]:
    for _ in range(100):  # the batch goes out within a second or so
        if len(collector.spans) >= count:
            break
        await asyncio.sleep(0.1)
    return list(collector.spans)


async def test_each_chat_is_a_span_in_copilots_trace(tmp_path: Path) -> None:
    with running_collector() as collector:
        async with running_upstream(UpstreamConfig()) as upstream:
            telemetry = {
                "enabled": True,
                "endpoint": collector.url,
                "headers": {"authorization": "Bearer collector-token-0123456789"},
                "resourceAttributes": {"team.id": "platform"},
            }
            options = chat_options(str(tmp_path), upstream.base_url, telemetry=telemetry)
            async with running_server(options) as client:
                context = {"traceId": TRACE_ID, "spanId": SPAN_ID, "traceFlags": 1}
                params = chat_params(
                    "gpt-4o", conversation(), modelOptions={"_otelTraceContext": context}
                )
                started = time.time_ns()
                await call(client, "tokenGauge/chat", params)
                await call(
                    client, "tokenGauge/chat", chat_params("claude-sonnet-4-5", conversation())
                )
                spans = await spans_of(collector, 2)
                logs = [m.message for m in client.log_messages]
            [request] = [r for r in upstream.model_requests if r.json["model"] == "gpt-4o"]
    by_model = {span.attributes["gen_ai.request.model"]: span for span in spans}
    traced, root = by_model["gpt-4o"], by_model["claude-sonnet-4-5"]
    assert (traced.trace_id, traced.parent_span_id) == (TRACE_ID, SPAN_ID)
    assert root.parent_span_id == "" and root.trace_id != TRACE_ID
    assert traced.name == "chat gpt-4o" and traced.start_ns >= started
    assert traced.attributes["gen_ai.usage.input_tokens"] == request.prompt_tokens
    assert traced.attributes["gen_ai.usage.output_tokens"] == request.output_tokens
    assert traced.attributes["gen_ai.provider.name"] == "openai"
    assert traced.attributes["server.address"] == "127.0.0.1"
    assert traced.attributes["gen_ai.response.time_to_first_chunk"] > 0
    assert "tokengauge.estimate.input_tokens" in traced.attributes
    assert root.attributes["gen_ai.provider.name"] == "anthropic"
    assert traced.resource["team.id"] == "platform"
    # Content only when asked for; the collector's token and the API key nowhere in the log.
    assert not any(name.startswith("gen_ai.input") for name in traced.attributes)
    assert not any("collector-token" in line or API_KEY in line for line in logs)
    assert any("telemetry: each request's span" in line for line in logs)


REFUSING_OTEL = """
import runpy, sys

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "opentelemetry":
            raise ImportError(f"{name} imported")
        return None

sys.meta_path.insert(0, Refuse())
runpy.run_module("tokengauge", run_name="__main__", alter_sys=True)
"""
"""The server, where importing any OpenTelemetry module fails."""


@pytest.mark.parametrize("enabled", [False, True])
async def test_telemetry_off_imports_nothing_of_it(tmp_path: Path, enabled: bool) -> None:
    """Startup and chats cost nothing more with telemetry off: the SDK is never imported (on,
    the same server shows the import is refused, so the check can tell)."""
    command = (sys.executable, "-c", REFUSING_OTEL)
    async with running_upstream(UpstreamConfig()) as upstream:
        options = chat_options(str(tmp_path), upstream.base_url, telemetry={"enabled": enabled})
        async with running_server(options, command) as client:
            result = await call(client, "tokenGauge/chat", chat_params("gpt-4o", conversation()))
            await call(client, "tokenGauge/dashboard", {})
            await asyncio.sleep(0.5)  # telemetry starts in the background
            logs = [m.message for m in client.log_messages]
    assert result["usage"]["completion_tokens"] > 0
    refused = [line for line in logs if "telemetry could not start" in line]
    assert refused == ([] if not enabled else refused[:1]) and bool(refused) is enabled
