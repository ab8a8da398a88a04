"""SSE framing on the live path: an httpx streaming response cut anywhere (hypothesis) or
byte by byte gives the events of the whole capture, the last event arrives however the stream
ends, and a body that is not an event stream is refused.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.upstream.dialects.stream_cases import CASES, Expected, parse, read
from tokengauge.upstream.dialects.dialect import make_parser
from tokengauge.upstream.dialects.events import StreamEvent
from tokengauge.upstream.sse import aiter_events, iter_file_events, missing_terminator


class Chunks(httpx.AsyncByteStream):
    """A response body that arrives in the given pieces."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = chunks
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


async def stream(dialect: Any, chunks: Sequence[bytes]) -> list[StreamEvent]:
    body = Chunks(chunks)
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    parser = make_parser(dialect)
    events: list[StreamEvent] = []
    try:
        async for sse in aiter_events(response):
            events += parser.feed(sse.event, sse.data)
    finally:
        await response.aclose()
    assert body.closed
    return events + parser.finish()


def cut(data: bytes, points: Sequence[int]) -> list[bytes]:
    bounds = [0, *sorted(set(points)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


ALL = [(str(case.values[0]), str(case.values[1])) for case in CASES]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_chunking_gives_the_same_events(data: st.DataObject):
    name, dialect = data.draw(st.sampled_from(ALL), label="capture")
    raw = read(name)
    points = data.draw(st.lists(st.integers(0, len(raw)), max_size=60), label="cuts")
    assert asyncio.run(stream(dialect, cut(raw, points))) == parse(dialect, raw)[0]


@pytest.mark.parametrize(("name", "dialect", "expected"), CASES)
def test_byte_by_byte_gives_the_same_events(name: str, dialect: str, expected: Expected):
    raw = read(name)
    chunks = [raw[i : i + 1] for i in range(len(raw))]
    assert asyncio.run(stream(dialect, chunks)) == parse(dialect, raw)[0]


@pytest.mark.parametrize(
    "end",
    [
        pytest.param(b"", id="none"),
        pytest.param(b"\n", id="lf"),
        pytest.param(b"\r", id="cr"),
        pytest.param(b"\r\n", id="crlf"),
        pytest.param(b"\n\n", id="lf-lf"),
        pytest.param(b"\r\r", id="cr-cr"),
        pytest.param(b"\r\n\r\n", id="crlf-crlf"),
        pytest.param(b"\n\r\n", id="lf-crlf"),
    ],
)
def test_last_event_delivered_however_the_stream_ends(end: bytes):
    data = b'event: error\ndata: {"a": 1}   ' + end
    expected = [("error", '{"a": 1}   ')]
    assert [(e.event, e.data) for e in iter_file_events(data)] == expected

    async def live() -> list[tuple[str, str]]:
        body = Chunks([data[i : i + 1] for i in range(len(data))])
        response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
        return [(e.event, e.data) async for e in aiter_events(response)]

    assert asyncio.run(live()) == expected


@pytest.mark.parametrize(
    ("tail", "end"),
    [
        pytest.param(b"", b"", id="empty"),
        pytest.param(b"}  ", b"\n\n", id="unterminated"),
        pytest.param(b"}\n", b"\n", id="one-lf"),
        pytest.param(b"}\r", b"\r", id="one-cr"),
        pytest.param(b"}\r\n", b"\n", id="one-crlf"),
        pytest.param(b"}\n\n", b"", id="done-lf"),
        pytest.param(b"\r\n\r\n", b"", id="done-crlf"),
    ],
)
def test_missing_terminator(tail: bytes, end: bytes):
    assert missing_terminator(tail) == end


def test_a_response_that_is_not_an_event_stream_is_refused():
    from httpx_sse import SSEError

    async def run() -> None:
        response = httpx.Response(200, headers={"content-type": "application/json"}, content=b"{}")
        async for _ in aiter_events(response):
            pass

    with pytest.raises(SSEError):
        asyncio.run(run())
