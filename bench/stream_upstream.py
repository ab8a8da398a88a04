"""The bench's fake upstream: an aiohttp server on 127.0.0.1 that answers like OpenAI and Anthropic.

It writes real OpenAI Chat Completions / Anthropic Messages SSE events (shapes from the wire
fixtures). Each text delta carries its sequence number (` w00042`), and the upstream stamps
`perf_counter_ns` right after writing it, so that `stream_bench.py` can match every part that
reaches its client to the write it came from. Requests are answered from a queue of `Script`s,
each filling in a `Trace` of what the upstream saw and did.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import attrs
from aiohttp import web

from benchlib import now
from tokengauge.upstream.anthropic_stream import AnthropicStreamParser
from tokengauge.upstream.events import StreamParser
from tokengauge.upstream.openai_stream import OpenAIStreamParser

HOST: Final = "127.0.0.1"
SEQ: Final = re.compile(r"w(\d+)")
"""A text delta is ` w00042`: its sequence number identifies the SSE event it came from."""


# --- the wire: SSE events as the APIs send them ---------------------------------------------------


@attrs.frozen
class Dialect:
    """One wire dialect: its model, its endpoint, and how to write its events."""

    name: str
    label: str
    model_id: str
    path: str
    parser: Callable[[], StreamParser]


OPENAI: Final = Dialect("openai", "OpenAI", "gpt-4o", "/v1/chat/completions", OpenAIStreamParser)
ANTHROPIC: Final = Dialect(
    "anthropic", "Anthropic", "claude-sonnet-4-5", "/v1/messages", AnthropicStreamParser
)
DIALECTS: Final = (OPENAI, ANTHROPIC)


@attrs.frozen
class Stream:
    """One response's SSE events, encoded: opening events, numbered text deltas, closing ones."""

    head: tuple[bytes, ...]
    deltas: tuple[bytes, ...]
    tail: tuple[bytes, ...]

    def events(self) -> list[bytes]:
        """All of them, in order."""
        return [*self.head, *self.deltas, *self.tail]


def delta_text(seq: int) -> str:
    """The text of delta number `seq`, as `SEQ` finds it again."""
    return f" w{seq:05d}"


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE event: `event:` line if named, one `data:` line, blank line."""
    body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {body}\n\n".encode()


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """A `chat.completion.chunk` as in openai-chat-stream-usage-text.sse."""
    return {
        "id": "chatcmpl-bench0000000000000000000000",
        "object": "chat.completion.chunk",
        "created": 1747148050,
        "model": "gpt-4o-2024-08-06",
        "service_tier": "default",
        "system_fingerprint": "fp_bench0000",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "usage": None,
    }


def openai_stream(count: int) -> Stream:
    """`count` text deltas between the opening chunk and the finish, usage and `[DONE]` ones."""
    usage = {
        **openai_chunk({}),
        "choices": [],
        "usage": {
            "prompt_tokens": 12,
            "completion_tokens": count,
            "total_tokens": 12 + count,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
    }
    return Stream(
        head=(sse(openai_chunk({"role": "assistant", "content": "", "refusal": None})),),
        deltas=tuple(sse(openai_chunk({"content": delta_text(k)})) for k in range(count)),
        tail=(sse(openai_chunk({}, "stop")), sse(usage), sse("[DONE]")),
    )


def anthropic_stream(count: int) -> Stream:
    """`count` text deltas in events as in anthropic-stream-text.sse."""
    usage = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 2,
        "service_tier": "standard",
    }
    message: dict[str, Any] = {
        "model": "claude-sonnet-4-5-20250929",
        "id": "msg_bench00000000000000000000",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }

    def delta(seq: int) -> bytes:
        text = {"type": "text_delta", "text": delta_text(seq)}
        return sse(
            {"type": "content_block_delta", "index": 0, "delta": text}, "content_block_delta"
        )

    end = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {**usage, "output_tokens": count},
    }
    return Stream(
        head=(
            sse({"type": "message_start", "message": message}, "message_start"),
            sse(block, "content_block_start"),
            sse({"type": "ping"}, "ping"),
        ),
        deltas=tuple(delta(k) for k in range(count)),
        tail=(
            sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            sse(end, "message_delta"),
            sse({"type": "message_stop"}, "message_stop"),
        ),
    )


def make_stream(dialect: Dialect, count: int) -> Stream:
    """A response of `count` text deltas in `dialect`."""
    return openai_stream(count) if dialect is OPENAI else anthropic_stream(count)


# --- the upstream ---------------------------------------------------------------------------------


@attrs.frozen
class Script:
    """How the upstream answers the next request."""

    stream: Stream
    delay_ns: int = 0
    """Between two text deltas (0: as fast as possible)."""
    close: bool = False
    """Answer `Connection: close`, so that the next request opens a new connection."""


@attrs.define
class Trace:
    """What the upstream saw and did for one request; times are `perf_counter_ns`."""

    received: int = 0
    body_bytes: int = 0
    writes: list[int] = attrs.field(factory=list)
    """After each text delta's write, by sequence number."""
    last_write: int = 0
    """After the closing events."""
    peer: str = ""
    """The client's address and port: one per TCP connection."""


@attrs.define
class Upstream:
    """An aiohttp server speaking both dialects; answers requests from a queue of scripts."""

    queue: collections.deque[tuple[Script, Trace]] = attrs.field(factory=collections.deque)
    base_url: str = ""

    def expect(self, script: Script) -> Trace:
        """Queue the answer to the next request; its trace fills in as it is served."""
        trace = Trace()
        self.queue.append((script, trace))
        return trace

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer with the next script: its events, the deltas paced, each write stamped."""
        received = now()
        body = await request.read()
        if not self.queue:
            return web.json_response({"error": {"message": "unexpected request"}}, status=500)
        script, trace = self.queue.popleft()
        trace.received, trace.body_bytes = received, len(body)
        transport = request.transport
        trace.peer = str(transport.get_extra_info("peername")) if transport else "?"
        response = web.StreamResponse(
            headers={"content-type": "text/event-stream", "cache-control": "no-cache"}
        )
        if script.close:
            response.force_close()
        await response.prepare(request)
        for event in script.stream.head:
            await response.write(event)
        start = now()
        for seq, event in enumerate(script.stream.deltas):
            if script.delay_ns:
                wait = start + seq * script.delay_ns - now()
                if wait > 0:
                    await asyncio.sleep(wait / 1e9)
            await response.write(event)
            trace.writes.append(now())
        for event in script.stream.tail:
            await response.write(event)
        trace.last_write = now()
        await response.write_eof()
        return response


@contextlib.asynccontextmanager
async def running_upstream() -> AsyncIterator[Upstream]:
    """An `Upstream` on a free port of 127.0.0.1, both dialects' endpoints; its `base_url` set."""
    upstream = Upstream()
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post(OPENAI.path, upstream.handle)
    app.router.add_post(ANTHROPIC.path, upstream.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, HOST, 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        upstream.base_url = f"http://{host}:{port}"
        yield upstream
    finally:
        await runner.cleanup()
