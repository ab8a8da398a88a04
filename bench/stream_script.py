"""What `stream_bench` has the fake upstream send, and the trace it reads back of each answer.

The fake upstream (`tests.harness.fake_upstream`, in this process) answers every chat with a
stream rendered ahead in the dialect's real wire format, one SSE event per write. Each text delta
carries its sequence number (` w00042`), so that a part reaching the client is matched to the
write it came from; the upstream's record of the request says when it had the request and when
each write was done, on `time.monotonic`, the clock of `benchlib.now`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Final

import attrs

from tests.harness.fake_upstream.config import Chunking, Reply, Scripted
from tests.harness.fake_upstream.respond import rendered
from tests.harness.fake_upstream.server import Upstream
from tests.harness.fake_upstream.wire import split_events
from tokengauge.settings import DialectName
from tokengauge.upstream.dialects.anthropic.stream import AnthropicStreamParser
from tokengauge.upstream.dialects.events import StreamParser
from tokengauge.upstream.dialects.openai.stream import OpenAIStreamParser

SEQ: Final = re.compile(r"w(\d+)")
"""A text delta is ` w00042`: its sequence number identifies the SSE event it came from."""
PROMPT_TOKENS: Final = 12
"""The input the answers' usage reports."""


@attrs.frozen
class StreamModel:
    """A model the bench chats with: the dialect it speaks, its id, the model its answers name,
    and the server's stream parser for that dialect."""

    dialect: DialectName
    label: str
    model_id: str
    response_model: str
    parser: Callable[[], StreamParser]


OPENAI: Final = StreamModel("openai", "OpenAI", "gpt-4o", "gpt-4o-2024-08-06", OpenAIStreamParser)
ANTHROPIC: Final = StreamModel(
    "anthropic",
    "Anthropic",
    "claude-sonnet-4-5",
    "claude-sonnet-4-5-20250929",
    AnthropicStreamParser,
)
MODELS: Final = (OPENAI, ANTHROPIC)


def delta_text(seq: int) -> str:
    """The text of delta number `seq`, as `SEQ` finds it again."""
    return f" w{seq:05d}"


@attrs.frozen
class Stream:
    """One answer of numbered text deltas: the upstream's script, and its SSE events in order."""

    answer: Scripted
    events: tuple[bytes, ...]
    deltas: tuple[int, ...]
    """The indices in `events` of the text deltas, in sequence order."""


def make_stream(model: StreamModel, count: int) -> Stream:
    """An answer of `count` text deltas from `model`, in its dialect."""
    text = "".join(delta_text(k) for k in range(count))
    answer = rendered(model.dialect, Reply(text=text), PROMPT_TOKENS, model.response_model)
    events = tuple(split_events((answer.body or "").encode()))
    deltas = tuple(i for i, event in enumerate(events) if SEQ.search(event.decode()))
    if len(deltas) != count:
        raise RuntimeError(f"{count} deltas rendered as {len(deltas)} events")
    return Stream(answer, events, deltas)


@attrs.frozen
class Script:
    """How the upstream answers the next request."""

    stream: Stream
    delay_ns: int = 0
    """Between two writes (0: as fast as possible)."""
    close: bool = False
    """Answer `Connection: close`, so that the next request opens a new connection."""


def expect(upstream: Upstream, script: Script) -> None:
    """Make `script` the answer to the next request (what was recorded before is dropped)."""
    upstream.reset()
    delay = script.delay_ns / 1e9
    upstream.config.chunking = Chunking(per_event=True, min_delay=delay, max_delay=delay)
    headers = {"Connection": "close"} if script.close else {}
    upstream.script(dataclasses.replace(script.stream.answer, headers=headers))


@attrs.frozen
class Trace:
    """What the upstream saw and did for one request; times are `benchlib.now()` nanoseconds."""

    received: int
    """When it had the whole request."""
    body_bytes: int
    writes: list[int]
    """After each text delta's write, by sequence number."""
    last_write: int
    """After the closing events."""
    peer: str
    """The client's address and port: one per TCP connection."""


async def traced(upstream: Upstream, script: Script) -> Trace:
    """The trace of the answer to the request `expect` prepared (once the upstream is done)."""
    (record,) = upstream.model_requests
    await record.wait_finished()
    times = [round(t * 1e9) for t in record.write_times]
    if len(times) != len(script.stream.events):
        raise RuntimeError(f"{len(script.stream.events)} events took {len(times)} writes")
    return Trace(
        received=round(record.received_at * 1e9),
        body_bytes=len(record.body),
        writes=[times[i] for i in script.stream.deltas],
        last_write=times[-1],
        peer=record.peer,
    )
