"""The upstream HTTP layer's bounds, unit by unit: decoding, JSON bodies, redirects, progress."""

from __future__ import annotations

import json
import math
import zlib

import httpx
import pytest
from httpx_sse import ServerSentEvent

from tokengauge.upstream.errors import StreamStalled, UpstreamError
from tokengauge.upstream.http import _may_follow, json_body
from tokengauge.upstream.response_body import PIECE, Decoder
from tokengauge.upstream.sse import Progress, _event_bytes

TEXT = b'data: {"choices": []}\n\n' * 1000


def compressed(encoding: str, data: bytes) -> bytes:
    if encoding in ("gzip", "x-gzip"):
        return zlib.compress(data, wbits=zlib.MAX_WBITS | 16)
    if encoding == "deflate":
        return zlib.compress(data)
    if encoding == "raw-deflate":
        compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        return compressor.compress(data) + compressor.flush()
    return data


@pytest.mark.parametrize("encoding", ["", "identity", "gzip", "x-gzip", "deflate", "raw-deflate"])
@pytest.mark.parametrize("chunk", [1, 100, 1 << 20])
def test_decoding_in_pieces(encoding: str, chunk: int) -> None:
    raw = compressed(encoding, TEXT)
    decoder = Decoder("deflate" if encoding == "raw-deflate" else encoding)
    pieces = [p for i in range(0, len(raw), chunk) for p in decoder.feed(raw[i : i + chunk])]
    assert b"".join(pieces) == TEXT
    assert max(map(len, pieces)) <= PIECE


def test_a_bomb_comes_out_in_bounded_pieces() -> None:
    bomb = zlib.compress(b"a" * (64 << 20), wbits=zlib.MAX_WBITS | 16)
    sizes = [len(piece) for piece in Decoder("gzip").feed(bomb)]
    assert sum(sizes) == 64 << 20 and max(sizes) <= PIECE


@pytest.mark.parametrize(
    ("encoding", "data", "message"),
    [
        pytest.param("gzip", TEXT, "gzip-compressed, but it is not", id="plain-as-gzip"),
        pytest.param("deflate", TEXT, "deflate-compressed, but it is not", id="plain-as-deflate"),
        pytest.param("br", b"x", "did not ask for", id="brotli"),
        pytest.param("zstd", b"x", "did not ask for", id="zstd"),
    ],
)
def test_encodings_that_lie_are_clear_errors(encoding: str, data: bytes, message: str) -> None:
    with pytest.raises(UpstreamError, match=message):
        list(Decoder(encoding).feed(data))


def test_json_body_escapes_lone_surrogates_only() -> None:
    body = {"text": "caf\u00e9 \U0001f600 broken \ud83d end", "n": 1.5}
    sent = json_body(body)
    assert b"caf\xc3\xa9" in sent and "\U0001f600".encode() in sent
    assert b"broken \\ud83d end" in sent
    assert json.loads(sent) == body
    with pytest.raises(ValueError):
        json_body({"x": math.nan})


@pytest.mark.parametrize(
    ("source", "target", "follow"),
    [
        ("http://a.test:8000/v1/x", "http://a.test:8000/v2/y", True),
        ("https://a.test/v1/x", "https://a.test:443/v2", True),
        ("http://a.test/v1", "https://a.test/v1", True),  # upgrade on the same host
        ("https://a.test/v1", "http://a.test/v1", False),  # downgrade
        ("http://a.test:8000/v1", "https://a.test/v1", False),  # another port
        ("https://a.test/v1", "https://b.test/v1", False),
        ("https://a.test/v1", "https://a.test.evil/v1", False),
        ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1", False),
    ],
)
def test_which_redirects_are_followed(source: str, target: str, follow: bool) -> None:
    assert _may_follow(httpx.URL(source), httpx.URL(target)) is follow


def test_keep_alives_are_not_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr("tokengauge.upstream.sse.time.monotonic", lambda: now[0])
    progress = Progress(idle=5, deadline=130)
    now[0] = 104
    progress.moved(ServerSentEvent(event="ping", data='{"type": "ping"}'))
    progress.moved(ServerSentEvent(data=" "))
    progress.check()
    now[0] = 106
    with pytest.raises(StreamStalled, match="keep-alives"):
        progress.check()
    progress.moved(ServerSentEvent(data='{"choices": []}'))
    progress.check()
    now[0] = 131
    with pytest.raises(StreamStalled, match="response timeout"):
        progress.check()


@pytest.mark.parametrize(
    ("tail", "chunk", "pending", "expected"),
    [
        (b"", b"data: x\n\ndata: yy", 0, 8),
        (b"x\r\n", b"\r\ndata", 50, 4),
        (b"", b"no end yet", 7, 17),
        (b"a\n", b"\n", 9, 0),
    ],
)
def test_open_event_bytes(tail: bytes, chunk: bytes, pending: int, expected: int) -> None:
    assert _event_bytes(tail, chunk, pending) == expected
