"""chat: the usage JSON Copilot reads, and `ChatRunner` on its own (no LSP) against the fake
upstream."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import attrs
import pytest

from tests.harness.fake_upstream.config import Scripted
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tokengauge.chat import ChatError, ChatRunner, openai_usage
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, TextPart, Usage
from tokengauge.protocol import ChatParams, ChatPart, Status, UsagePart
from tokengauge.settings import parse_settings
from tokengauge.upstream.http import Timeouts, make_client
from tokengauge.upstream.retry import RetryPolicy


def test_openai_usage_shape():
    usage = Usage(
        total_input_tokens=1050,
        output_tokens=20,
        input_tokens=100,
        cache_read_tokens=900,
        cache_write_tokens=50,
        reasoning_tokens=7,
    )
    assert openai_usage(usage) == {
        "prompt_tokens": 1050,
        "completion_tokens": 20,
        "total_tokens": 1070,
        "prompt_tokens_details": {"cached_tokens": 900},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }


@attrs.define
class Recorded:
    """A `ChatSink` that keeps what a chat sent out."""

    parts: list[ChatPart] = attrs.field(factory=list)
    statuses: list[Status] = attrs.field(factory=list)
    calibrations: list[str] = attrs.field(factory=list)
    models_changes: int = 0

    def part(self, request_id: str, part: ChatPart) -> None:
        self.parts.append(part)

    def status(self, status: Status) -> None:
        self.statuses.append(status)

    def models_changed(self) -> None:
        self.models_changes += 1

    def calibration_changed(self, model_id: str) -> None:
        self.calibrations.append(model_id)


@contextlib.asynccontextmanager
async def runner(upstream: Upstream, sink: Recorded) -> AsyncIterator[ChatRunner]:
    settings = parse_settings(
        {
            "providers": [
                {"id": "up", "dialect": "openai", "baseUrl": upstream.url("/v1"), "discover": False}
            ],
            "models": [{"id": "gpt-4o", "provider": "up"}],
        }
    )
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    gauge = Gauge(settings, Ledger(None))
    async with make_client(Timeouts()) as client:
        yield ChatRunner(gauge, client, sink, RetryPolicy(max_attempts=3), sleep)
    gauge.ledger.close()


def params(text: str) -> ChatParams:
    return ChatParams("req-1", "gpt-4o", [Message("user", [TextPart(text)])])


async def test_a_chat_streams_its_parts_then_its_usage_and_learns():
    sink = Recorded()
    async with running_upstream() as upstream, runner(upstream, sink) as chats:
        result = await chats.run(params("hello there"))
    *texts, usage = sink.parts
    assert texts and all(isinstance(part, TextPart) for part in texts)
    assert "".join(part.value for part in texts if isinstance(part, TextPart)).startswith("ok: ")
    assert isinstance(usage, UsagePart) and not usage.estimated and usage.trimmed is None
    assert result.finish_reason == "stop" and result.trimmed is None
    assert result.usage == usage.data
    assert usage.data["prompt_tokens"] == usage.total_input_tokens > 0
    assert sink.calibrations == ["gpt-4o"] and sink.statuses


async def test_a_rate_limit_is_waited_out_before_the_first_part():
    sink = Recorded()
    async with running_upstream() as upstream, runner(upstream, sink) as chats:
        upstream.script(Scripted(status=429, headers={"retry-after": "2"}))
        result = await chats.run(params("again"))
        statuses = [r.status for r in upstream.model_requests]
    assert statuses == [429, 200]
    assert result.finish_reason == "stop"
    assert any("retrying in 2s" in status.text for status in sink.statuses)


async def test_an_auth_error_fails_at_once_with_what_to_do():
    sink = Recorded()
    async with running_upstream() as upstream, runner(upstream, sink) as chats:
        upstream.script(Scripted(status=401))
        with pytest.raises(ChatError) as failed:
            await chats.run(params("key?"))
        assert len(upstream.model_requests) == 1
    assert failed.value.kind == "auth" and "Set API Key" in failed.value.message
    assert sink.parts == []
