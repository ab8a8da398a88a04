"""chat: `ChatRunner` on its own (no LSP) against the fake upstream: a request streamed, retried
and failed, and the status it leaves."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import attrs
import pytest

from tests.harness.fake_upstream.config import Scripted
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tokengauge.chat import ChatError, ChatRunner
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, TextPart
from tokengauge.protocol import ChatParams, ChatPart, Status, UsagePart
from tokengauge.settings import parse_settings
from tokengauge.upstream.http import Timeouts, make_client
from tokengauge.upstream.retry import RetryPolicy


@attrs.define
class Recorded:
    """A `ChatSink` that keeps what a chat sent out."""

    parts: list[ChatPart] = attrs.field(factory=list)
    statuses: list[Status] = attrs.field(factory=list)
    calibrations: list[str] = attrs.field(factory=list)
    models_changes: int = 0
    activities: int = 0
    notices: list[tuple[str, str | None]] = attrs.field(factory=list)

    def part(self, request_id: str, part: ChatPart) -> None:
        self.parts.append(part)

    def status(self, status: Status) -> None:
        self.statuses.append(status)

    def models_changed(self) -> None:
        self.models_changes += 1

    def calibration_changed(self, model_id: str) -> None:
        self.calibrations.append(model_id)

    def activity(self) -> None:
        self.activities += 1

    def notice(self, message: str, setting: str | None) -> None:
        self.notices.append((message, setting))


async def no_wait(seconds: float) -> None:
    """Retries at once (the waits are the retry policy's business, tested there)."""


@contextlib.asynccontextmanager
async def runner(
    upstream: Upstream, sink: Recorded, sleep: Callable[[float], Awaitable[None]] = no_wait
) -> AsyncIterator[ChatRunner]:
    settings = parse_settings(
        {
            "providers": [
                {"id": "up", "dialect": "openai", "baseUrl": upstream.url("/v1"), "discover": False}
            ],
            "models": [{"id": "gpt-4o", "provider": "up"}],
        }
    )
    gauge = Gauge(settings, Ledger(None))
    async with make_client(Timeouts()) as client:
        yield ChatRunner(gauge, client, sink, RetryPolicy(max_attempts=3), sleep)
    gauge.ledger.close()


def params(text: str) -> ChatParams:
    return ChatParams("req-1", "gpt-4o", [Message("user", [TextPart(text)])])


def conversation(text: str) -> ChatParams:
    """A request of a conversation (more than a question and its instructions): it moves the
    status bar, where a helper's request (a chat title) does not."""
    turns = [Message("user", [TextPart("before")]), Message("assistant", [TextPart("answer")])]
    return ChatParams("req-1", "gpt-4o", [*turns, Message("user", [TextPart(text)])])


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
    # Copilot reads the input in the units the window is declared in: the true ones before the
    # API's counts showed a ratio.
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
    assert failed.value.kind == "auth"
    assert failed.value.message == (
        f"up asked for an API key at {upstream.url('/v1/chat/completions')} (401 Unauthorized), "
        "and none is set. Run 'Token Gauge: Set API Key' to enter a valid key for up."
    )
    assert sink.parts == [] and sink.statuses == []  # no retry, no status to put right


NO_USAGE = (
    'data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,'
    '"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
    'data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,'
    '"delta":{},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)


@pytest.mark.parametrize(
    ("script", "outcome", "last"),
    [
        pytest.param(
            [Scripted(status=429, headers={"retry-after": "0"})],
            "ok",
            ("$(pulse) ", "info"),
            id="answered-with-usage",
        ),
        pytest.param(
            [Scripted(status=503), Scripted(body=NO_USAGE)],
            "ok",
            ("$(pulse) GPT-4o: answered", "info"),
            id="answered-without-usage",
        ),
        pytest.param(
            [Scripted(status=429, headers={"retry-after": "0"}, times=3)],
            "rate limited (429)",
            ("$(error) GPT-4o: rate limited (429)", "error"),
            id="failed",
        ),
        pytest.param(
            [Scripted(status=502), Scripted(status=401)],
            "key rejected (401)",
            ("$(error) GPT-4o: key rejected (401)", "error"),
            id="failed-otherwise",
        ),
    ],
)
async def test_a_retry_status_is_always_followed_by_a_true_one(
    script: list[Scripted], outcome: str, last: tuple[str, str]
):
    sink = Recorded()
    async with running_upstream() as upstream, runner(upstream, sink) as chats:
        upstream.script(*script)
        try:
            await chats.run(params("again"))
            ended = "ok"
        except ChatError as exc:
            ended = exc.brief
    assert ended == outcome
    retrying = [status for status in sink.statuses if "retrying in" in status.text]
    assert retrying and sink.statuses[0] == retrying[0]
    text, severity = last
    assert sink.statuses[-1].text.startswith(text) and sink.statuses[-1].severity == severity
    assert "retrying" not in sink.statuses[-1].text


@pytest.mark.parametrize("history", [False, True], ids=["first-request", "after-usage"])
async def test_cancelling_a_retry_wait_puts_the_status_right(history: bool):
    sink = Recorded()
    waiting = asyncio.Event()

    async def sleep(seconds: float) -> None:
        waiting.set()
        await asyncio.Event().wait()  # until cancelled

    async with running_upstream() as upstream, runner(upstream, sink, sleep) as chats:
        if history:
            await chats.run(conversation("first"))
        before = list(sink.statuses)
        upstream.script(Scripted(status=503))
        task = asyncio.ensure_future(chats.run(params("again")))
        await waiting.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    *_, retrying, last = sink.statuses
    assert "retrying in" in retrying.text
    if history:  # the usage status of the request before
        assert last == before[-1] and last.text.startswith("$(pulse) ")
    else:
        assert (last.text, last.severity) == ("$(pulse) GPT-4o: cancelled", "info")


async def test_a_rate_limit_that_outlasts_the_tries_says_how_long_to_wait():
    sink = Recorded()
    async with running_upstream() as upstream, runner(upstream, sink) as chats:
        upstream.script(Scripted(status=429, headers={"retry-after": "20"}, times=3))
        with pytest.raises(ChatError) as failed:
            await chats.run(params("again"))
        url = upstream.url("/v1/chat/completions")
    assert failed.value.kind == "rate_limit"
    assert failed.value.message.startswith(
        f"up is limiting requests at {url} (429 Too Many Requests) and asks to wait 20 s"
    )
    assert failed.value.message.endswith(
        "Wait 20 s before sending again; if it keeps happening, check your plan's limits with up."
    )
