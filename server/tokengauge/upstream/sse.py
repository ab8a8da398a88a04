"""SSE framing (through `httpx-sse`), bounded and timed.

Framing is `httpx_sse.EventSource`, used through its public API only, over the body as `body`
decodes it (bounded decompression). Additions:
- a stream whose last event lacks its closing blank line (a connection closed right after the
  event, or a capture pasted without the final newline) still delivers that event. The SSE spec
  says to drop it, but it is typically the error that explains why the stream ended;
- one event may not exceed `EVENT_LIMIT` bytes (httpx-sse would gather a line without end, or
  data lines without a blank one, for ever);
- `Progress` ends a stream that sends only keep-alives (comments, `ping` events, empty data)
  for longer than the idle timeout, or that is not over by its deadline: trickling bytes reset
  httpx's read timeout, they do not count as progress.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Iterator
from typing import Final

import attrs
import httpx
from httpx_sse import EventSource, ServerSentEvent

from tokengauge.upstream.errors import StreamStalled, UpstreamError
from tokengauge.upstream.response_body import EVENT_LIMIT, decoded

log = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"


def missing_terminator(tail: bytes) -> bytes:
    """The line breaks a stream ending in `tail` needs so that its last event is complete."""
    if not tail:
        return b""
    if tail.endswith(b"\r\n"):
        rest, newline = tail[:-2], b"\n"
    elif tail.endswith((b"\n", b"\r")):
        # After a lone "\r", "\n" would merge with it into one break: repeat "\r" instead.
        rest, newline = tail[:-1], tail[-1:]
    else:
        return b"\n\n"
    return b"" if rest.endswith((b"\n", b"\r")) else newline


def iter_file_events(data: bytes) -> Iterator[ServerSentEvent]:
    """The SSE events of a captured stream (CRLF or LF; last event kept if unterminated)."""
    content = data + missing_terminator(data[-4:])
    response = httpx.Response(200, headers={"content-type": EVENT_STREAM}, content=content)
    yield from EventSource(response).iter_sse()


@attrs.define
class Progress:
    """When a stream last carried something (an event with data), and when it must be over."""

    idle: float
    deadline: float
    last: float = attrs.field(factory=lambda: time.monotonic())

    def moved(self, event: ServerSentEvent) -> None:
        """Note an event; keep-alives (a `ping`, empty data) are not progress."""
        if event.event != "ping" and event.data.strip():
            self.last = time.monotonic()

    def check(self) -> None:
        """`StreamStalled` if the stream is past its deadline or idle too long."""
        now = time.monotonic()
        if now > self.deadline:
            raise StreamStalled(
                "was still sending when the response timeout ran out", "responseTimeout"
            )
        if now - self.last > self.idle:
            raise StreamStalled(f"sent only keep-alives for {self.idle:g} s", "idleTimeout")


_EVENT_ENDS: Final = (b"\n\n", b"\r\r", b"\r\n\r\n", b"\n\r\n", b"\r\n\n")


def _event_bytes(tail: bytes, chunk: bytes, pending: int) -> int:
    """Bytes of the event still open after `chunk` (`tail`: the bytes just before it)."""
    data = tail + chunk
    ends = [data.rfind(end) + len(end) for end in _EVENT_ENDS if data.rfind(end) >= 0]
    return len(data) - max(ends) if ends else pending + len(chunk)


class _Bounded(httpx.AsyncByteStream):
    """A response's decoded bytes, checked as they arrive, plus the line breaks its last event
    may lack."""

    def __init__(self, response: httpx.Response, progress: Progress) -> None:
        self._response = response
        self._progress = progress

    async def __aiter__(self) -> AsyncIterator[bytes]:
        tail, pending = b"", 0
        async for chunk in decoded(self._response):
            self._progress.check()
            pending = _event_bytes(tail, chunk, pending)
            if pending > EVENT_LIMIT:
                raise UpstreamError(f"the API sent an event over {EVENT_LIMIT // 2**20} MiB")
            tail = (tail + chunk)[-4:]
            yield chunk
        end = missing_terminator(tail)
        if end:
            log.debug("the stream's last event had no closing blank line")
            yield end

    async def aclose(self) -> None:
        await self._response.aclose()


async def aiter_events(
    response: httpx.Response, progress: Progress | None = None
) -> AsyncIterator[ServerSentEvent]:
    """The SSE events of a streaming response; the caller still owns and closes `response`.

    Raises `httpx_sse.SSEError` when the response is not `text/event-stream`, `UpstreamError`
    when it breaks a bound (see the module docstring; no time bound without `progress`).
    """
    progress = progress or Progress(idle=math.inf, deadline=math.inf)
    content_type = response.headers.get("content-type", "")
    wrapped = httpx.Response(
        response.status_code,
        headers={"content-type": content_type},
        stream=_Bounded(response, progress),
    )
    async for event in EventSource(wrapped).aiter_sse():
        progress.moved(event)
        yield event
