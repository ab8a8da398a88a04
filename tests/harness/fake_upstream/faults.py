"""Writing a response in realistic chunks, applying faults, and noticing client disconnects.

Also ready-made :class:`Scripted` faults built from the real error fixtures.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import struct
import time
import zlib
from collections.abc import Mapping

from aiohttp import web

from tests.harness.fake_upstream.config import Chunking, Fault, Scripted
from tests.harness.fake_upstream.records import COMPLETED, DROPPED, RecordedRequest
from tests.harness.fake_upstream.wire import (
    anthropic_error_event,
    openai_error_event,
    split_events,
)

_POLL = 0.005  # seconds between connection checks while sleeping


def connection_gone(request: web.Request) -> bool:
    """Whether the client connection is closed (or closing)."""
    transport = request.transport
    return transport is None or transport.is_closing()


async def sleep_watching(request: web.Request, record: RecordedRequest, seconds: float) -> bool:
    """Sleep, checking the connection; False (and the record marked) if the client left."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while True:
        if connection_gone(request):
            record.mark_disconnected()
            return False
        remaining = end - loop.time()
        if remaining <= 0:
            return True
        await asyncio.sleep(min(remaining, _POLL))


def apply_event_faults(events: list[bytes], fault: Fault | None, dialect: str) -> list[bytes]:
    """Insert garbage / cut the stream and end it with the dialect's real error event."""
    if fault is None:
        return events
    events = list(events)
    if fault.error_event_after_events is not None:
        error = anthropic_error_event() if dialect == "anthropic" else openai_error_event()
        events = [*events[: fault.error_event_after_events], error]
    if fault.garbage_after_events is not None:
        events.insert(fault.garbage_after_events, fault.garbage.encode())
    return events


def cut(data: bytes, chunking: Chunking, rng: random.Random) -> list[bytes]:
    """Split bytes at arbitrary positions into chunks of the configured size range (or into its
    SSE events, with ``per_event``)."""
    if chunking.per_event:
        return split_events(data)
    low = max(1, chunking.min_bytes)
    high = max(low, chunking.max_bytes)
    chunks, start = [], 0
    while start < len(data):
        size = rng.randint(low, high)
        chunks.append(data[start : start + size])
        start += size
    return chunks


async def send_stream(
    request: web.Request,
    record: RecordedRequest,
    *,
    status: int,
    headers: Mapping[str, str],
    events: list[bytes],
    chunking: Chunking,
    rng: random.Random,
    fault: Fault | None = None,
) -> web.StreamResponse:
    """Stream the events in seeded random chunks with delays, applying the byte/chunk faults.

    A ``Connection: close`` header is honoured: the connection is closed after the response.
    """
    fault = fault or Fault()
    headers = dict(headers)
    data = b"".join(events)
    if fault.gzip_bomb is not None:
        data = gzip_bomb(fault.gzip_bomb_prefix.encode(), fault.gzip_bomb)
        headers["Content-Encoding"] = "gzip"
    if fault.repeat_event is not None:
        data = b"".join(events[: fault.repeat_event + 1])
    response = web.StreamResponse(status=status, headers=headers)
    if response.headers.get("Connection", "").lower() == "close":
        response.force_close()
    record.status = status
    if fault.headers_delay and not await sleep_watching(request, record, fault.headers_delay):
        return response
    if fault.drop_before_headers:
        return await _abort(request, record, response)
    if fault.drop_after_bytes is not None:
        data = data[: fault.drop_after_bytes]
    if fault.trickle_seconds is not None:
        chunking = Chunking(1, 1, fault.trickle_seconds, fault.trickle_seconds)
    chunks = [] if fault.keepalive else cut(data, chunking, rng)
    if fault.drop_after_chunks is not None:
        chunks = chunks[: fault.drop_after_chunks]
    drop = fault.drop_after_bytes is not None or fault.drop_after_chunks is not None
    loop = asyncio.get_running_loop()
    try:
        await response.prepare(request)
        due = loop.time()
        for index, chunk in enumerate(chunks, start=1):
            await _write(response, record, chunk)
            if index == fault.stall_after_chunks:
                if not await sleep_watching(request, record, fault.stall_seconds):
                    return response
                if fault.stall_then == "drop":
                    return await _abort(request, record, response)
                due = loop.time()
            delay = rng.uniform(chunking.min_delay, chunking.max_delay)
            due += delay
            last = index == len(chunks)
            wait = due - loop.time()
            if delay > 0 and not last and not await sleep_watching(request, record, wait):
                return response
        if drop:
            return await _abort(request, record, response)
        forever = _forever(fault, events)
        if forever is not None:
            beat, every = forever
            while await sleep_watching(request, record, every):
                await _write(response, record, beat)
            return response
        await response.write_eof()
    except ConnectionError:
        record.mark_disconnected()
        return response
    except asyncio.CancelledError:
        record.mark_disconnected()  # aiohttp cancels the handler when the client disconnects
        raise
    record.finish(COMPLETED)
    return response


KEEPALIVES = {"comment": b": keep-alive\n\n", "ping": b'event: ping\ndata: {"type": "ping"}\n\n'}


def _forever(fault: Fault, events: list[bytes]) -> tuple[bytes, float] | None:
    """What a fault sends until the client leaves, and how often: keep-alives or one event."""
    if fault.keepalive:
        return KEEPALIVES[fault.keepalive], fault.keepalive_every
    if fault.repeat_event is not None:
        return events[fault.repeat_event], fault.repeat_every
    return None


async def _write(response: web.StreamResponse, record: RecordedRequest, chunk: bytes) -> None:
    await response.write(chunk)
    record.write_times.append(time.monotonic())
    record.bytes_sent += len(chunk)


@functools.lru_cache(maxsize=4)
def gzip_bomb(prefix: bytes, size: int) -> bytes:
    """gzip of `prefix` and `size` bytes of "a": ~1 KB per MB, no line break anywhere.

    Made in a few hundred ms whatever the size, not by compressing it all (256 MiB at level 9
    took 1.35 s, as long as a test's idle timeout, before the response could begin): a raw
    deflate stream in which each 1 MiB of "a" after a full flush compresses to the same bytes,
    repeated, inside a gzip header and a trailer of the whole data's CRC-32 and length.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = b"a" * min(size, 1 << 20)
    whole, rest = divmod(size, len(block))
    out = [compressor.compress(prefix), compressor.flush(zlib.Z_FULL_FLUSH)]
    crc = zlib.crc32(prefix)
    if whole:
        once = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
        out.append(once * whole)
        for _ in range(whole):
            crc = zlib.crc32(block, crc)
    out += [compressor.compress(block[:rest]), compressor.flush()]
    crc = zlib.crc32(block[:rest], crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    trailer = struct.pack("<II", crc, (len(prefix) + size) & 0xFFFFFFFF)
    return header + b"".join(out) + trailer


async def _abort(
    request: web.Request, record: RecordedRequest, response: web.StreamResponse
) -> web.StreamResponse:
    """Kill the connection mid-body (the client sees an incomplete chunked read).

    Waits (briefly) for the bytes already written to leave the socket buffer first, so the client
    receives exactly what ``bytes_sent`` says.
    """
    record.finish(DROPPED)
    transport = request.transport
    for _ in range(200):
        if transport is None or transport.is_closing() or not transport.get_write_buffer_size():
            break
        await asyncio.sleep(_POLL)
    if transport is not None:
        transport.abort()
    return response


# Ready-made faults from the real error fixtures.


def rate_limited(
    dialect: str = "anthropic", retry_after: float = 1, route: str = "any"
) -> Scripted:
    """HTTP 429 with ``retry-after`` and the provider's real rate-limit body."""
    fixture = (
        "error-anthropic-429-rate-limit"
        if dialect == "anthropic"
        else ("error-openrouter-429-upstream-ratelimit")
    )
    return Scripted(
        route=route, fixture=fixture, status=429, headers={"retry-after": f"{retry_after:g}"}
    )


def overloaded(route: str = "any") -> Scripted:
    """Anthropic HTTP 529 overloaded (``x-should-retry: true``, real headers and body)."""
    return Scripted(route=route, fixture="error-anthropic-529-overloaded", status=529)


def unauthorized(dialect: str = "anthropic", route: str = "any") -> Scripted:
    """HTTP 401 with Anthropic's real ``invalid x-api-key`` body (or OpenAI's shape)."""
    if dialect == "anthropic":
        return Scripted(route=route, fixture="error-anthropic-401-invalid-api-key", status=401)
    body = (
        '{"error":{"message":"Incorrect API key provided: sk-***. You can find your API key at '
        'https://platform.openai.com/account/api-keys.","type":"invalid_request_error",'
        '"param":null,"code":"invalid_api_key"}}'
    )
    return Scripted(route=route, body=body, status=401)


def server_error(status: int = 500, body: str | None = None, route: str = "any") -> Scripted:
    """HTTP 5xx with a JSON body."""
    error = {"message": "Internal server error", "type": "server_error", "code": status}
    return Scripted(route=route, body=body or json.dumps({"error": error}), status=status)


def error_for_status(item: Scripted, dialect: str) -> Scripted:
    """A status-only scripted error made concrete: the provider's real body for that status."""
    if item.status == 401:
        base = unauthorized(dialect)
    elif item.status == 429:
        base = rate_limited(dialect)
        base.headers = {}
    elif item.status == 529:
        base = overloaded()
    elif dialect == "anthropic":
        error = {"type": "api_error", "message": "Internal server error"}
        base = Scripted(body=json.dumps({"type": "error", "error": error}, separators=(",", ":")))
    else:
        base = server_error(item.status or 500)
    base.status, base.fault = item.status, item.fault
    base.headers = {**base.headers, **item.headers}
    return base


def midstream_error(dialect: str = "anthropic", route: str = "any") -> Scripted:
    """An HTTP 200 stream that ends with the provider's real error event."""
    fixture = (
        "error-anthropic-overloaded-stream-event"
        if dialect == "anthropic"
        else "openrouter-chat-stream-midstream-error"
    )
    return Scripted(route=route, fixture=fixture)


def drop_after(
    bytes_: int | None = None, chunks: int | None = None, route: str = "any"
) -> Scripted:
    """The model's normal stream, with the connection aborted after K bytes or K chunks."""
    return Scripted(route=route, fault=Fault(drop_after_bytes=bytes_, drop_after_chunks=chunks))


def stall(
    after_chunks: int = 1, seconds: float = 30.0, then: str = "continue", route: str = "any"
) -> Scripted:
    """The model's normal stream, pausing mid-body (long stalls make cancellation tests easy)."""
    return Scripted(
        route=route,
        fault=Fault(stall_after_chunks=after_chunks, stall_seconds=seconds, stall_then=then),
    )


def malformed(after_events: int = 1, route: str = "any") -> Scripted:
    """The model's normal stream with a garbage ``data:`` line inserted."""
    return Scripted(route=route, fault=Fault(garbage_after_events=after_events))


def redirect(location: str, status: int = 307, route: str = "any", times: int = 1) -> Scripted:
    """A redirect to `location` (another origin, or this one for a loop)."""
    return Scripted(
        route=route, body="", status=status, headers={"Location": location}, times=times
    )


def keepalives_only(kind: str = "comment", every: float = 0.2, route: str = "any") -> Scripted:
    """HTTP 200, an event stream that sends only keep-alives (comments or `ping`s) for ever."""
    return Scripted(route=route, fault=Fault(keepalive=kind, keepalive_every=every))


def trickle(seconds: float = 0.2, route: str = "any") -> Scripted:
    """The model's normal stream, one byte at a time."""
    return Scripted(route=route, fault=Fault(trickle_seconds=seconds))


def endless(event: int, every: float = 0.1, route: str = "any") -> Scripted:
    """The model's stream up to event `event`, then that event again and again, never ending."""
    return Scripted(route=route, fault=Fault(repeat_event=event, repeat_every=every))


def bomb(size: int, prefix: str = "data: ", status: int = 200, route: str = "any") -> Scripted:
    """A gzip body that decompresses to `prefix` and `size` bytes without a line break."""
    ctype = "text/event-stream" if status < 400 else "application/json"
    return Scripted(
        route=route,
        body="",
        status=status,
        content_type=ctype,
        fault=Fault(gzip_bomb=size, gzip_bomb_prefix=prefix),
    )
