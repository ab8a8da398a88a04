"""Section 4 of `stream_bench`: the server's per-event work in this process, piece by piece.

No network and no LSP: the stream parser alone, SSE framing + parser as the server runs them
(`aiter_events` over one chunk per event), the `chatPart` notification's encoding through a real,
unstarted server's pygls protocol, and what the bench's own pygls client spends per notification.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

import httpx

from bench.benchlib import Report, now, rate, repeat, us
from bench.stream_script import StreamModel, delta_text, make_stream
from tests.harness.lsp import plain_client
from tokengauge.lsp.server import create_server
from tokengauge.lsp.state import ServerChatSink
from tokengauge.messages import TextPart, unstructure
from tokengauge.protocol import CHAT_PART, ChatPart, ChatPartParams
from tokengauge.upstream.dialects.events import StreamParser
from tokengauge.upstream.sse import aiter_events, iter_file_events


class ChunkStream(httpx.AsyncByteStream):
    """A response body that arrives one SSE event per chunk, as the upstream writes it."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


class NullWriter:
    """Where pygls writes the server's messages in process: counts bytes."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self.bytes += len(data)

    def close(self) -> None:
        pass


def best_of(reps: int, run: Callable[[], int]) -> tuple[int, int]:
    """Fastest wall time of `reps` runs, and the last run's result."""
    times, result = repeat(run, reps)
    return min(times), result


async def best_of_async(reps: int, run: Callable[[], Any]) -> tuple[int, int]:
    """`best_of` for a coroutine function."""
    times, result = [], 0
    for _ in range(reps):
        start = now()
        result = await run()
        times.append(now() - start)
    return min(times), result


def feed_all(parser: StreamParser, pairs: Iterable[tuple[str, str]]) -> int:
    """Feed (event, data) pairs and finish: how many stream events came out."""
    produced = 0
    for event, data in pairs:
        produced += len(parser.feed(event, data))
    return produced + len(parser.finish())


async def frame_and_parse(model: StreamModel, chunks: Sequence[bytes]) -> int:
    """The server's path minus the network: `aiter_events` over one chunk per event, then parse."""
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=ChunkStream(chunks)
    )
    parser = model.parser()
    produced = 0
    async for event in aiter_events(response):
        produced += len(parser.feed(event.event, event.data))
    return produced + len(parser.finish())


def notify_parts(parts: Sequence[ChatPart]) -> int:
    """`ServerChatSink.part` for each part, into a real (unstarted) server's pygls protocol."""
    server = create_server()
    writer = NullWriter()
    server.protocol.set_writer(writer)
    sink = ServerChatSink(server)
    for part in parts:
        sink.part("bench-1", part)
    return writer.bytes


def client_dispatch(bodies: Sequence[bytes]) -> int:
    """What the bench's pygls client does per notification: parse, structure, call the handler."""
    handled = 0

    def on_part(params: Any) -> None:
        nonlocal handled
        handled += 1

    protocol = plain_client({CHAT_PART: on_part}).protocol
    for body in bodies:
        protocol.handle_message(json.loads(body, object_hook=protocol.structure_message))
    return handled


async def in_process(report: Report, model: StreamModel, events: int, reps: int) -> None:
    """Section 4 for one model: each stage on a burst of `events` deltas, best of `reps`."""
    section = "4. in process, per event (no network, no LSP)"
    stream = make_stream(model, events)
    chunks = stream.events
    pairs = [(e.event, e.data) for e in iter_file_events(b"".join(chunks))]
    count = len(stream.deltas)
    parse_ns, produced = best_of(reps, lambda: feed_all(model.parser(), pairs))
    report.add(
        section,
        f"{model.label}: parser alone ({model.parser.__name__}.feed)",
        f"{us(parse_ns / len(pairs))}/event",
        f"{rate(len(pairs), parse_ns)}; {len(pairs):,} events → {produced:,} stream events",
    )
    frame_ns, _ = await best_of_async(reps, lambda: frame_and_parse(model, chunks))
    report.add(
        section,
        f"{model.label}: SSE framing + parser (aiter_events, one chunk per event)",
        f"{us(frame_ns / len(chunks))}/event",
        f"{rate(len(chunks), frame_ns)}; framing alone ≈ {us((frame_ns - parse_ns) / len(chunks))}"
        "/event",
    )
    parts = [TextPart(delta_text(k)) for k in range(count)]
    notify_ns, written = best_of(reps, lambda: notify_parts(parts))
    report.add(
        section,
        f"{model.label}: chatPart notification (ServerChatSink.part → pygls → bytes)",
        f"{us(notify_ns / count)}/part",
        f"{rate(count, notify_ns)}; {written / count:,.0f} bytes per notification",
    )
    report.add(
        section,
        f"{model.label}: sum (framing + parse + notification)",
        f"{us((frame_ns + notify_ns) / count)}/part",
        "compare with the server's CPU per part in section 2 (which adds HTTP and stdout writes)",
    )
    bodies = [
        json.dumps(
            {"jsonrpc": "2.0", "method": CHAT_PART, "params": unstructure(ChatPartParams("b", p))}
        ).encode()
        for p in parts
    ]
    client_ns, _ = best_of(reps, lambda: client_dispatch(bodies))
    report.add(
        section,
        f"{model.label}: the bench's pygls client, per chatPart",
        f"{us(client_ns / count)}/part",
        f"{rate(count, client_ns)}; JSON parse + structure + handler, without reading the pipe "
        "(the client side of sections 1–2; VS Code's client is vscode-jsonrpc)",
    )
