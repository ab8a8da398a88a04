"""LSP framing that survives a misbehaving client."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tokengauge.lsp.framing import Frame, FrameReader, sniff_id


def body(request_id: int, text: str = "hello") -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "m", "params": {"text": text}}
    return json.dumps(message, ensure_ascii=False).encode()


def framed(data: bytes, length: int | None = None, line_end: bytes = b"\r\n") -> bytes:
    size = len(data) if length is None else length
    return b"Content-Length: %d%s%s%s" % (size, line_end, line_end, data)


async def read_all(data: bytes, chunk: int, max_body: int | None = None) -> list[Frame]:
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]

    async def read() -> bytes:
        return chunks.pop(0) if chunks else b""

    reader = FrameReader(read) if max_body is None else FrameReader(read, max_body)
    frames = []
    while (frame := await reader.next()) is not None:
        frames.append(frame)
    return frames


def ids(frames: list[Frame]) -> list[Any]:
    return [f.value["id"] if f.problem is None else ("problem", f.request_id) for f in frames]


CHUNKS = [
    pytest.param(1, id="1-byte-reads"),
    pytest.param(7, id="7"),
    pytest.param(65536, id="64k"),
]

STREAMS = [
    pytest.param(framed(body(1)) + framed(body(2)), [1, 2], id="clean"),
    pytest.param(
        framed(body(1), line_end=b"\n") + framed(body(2), line_end=b"\n"), [1, 2], id="lf-only"
    ),
    pytest.param(
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        + framed(body(1))
        + b"content-length: %d\r\ncontent-type: x\r\n\r\n%s" % (len(body(2)), body(2)),
        [1, 2],
        id="other-headers-any-case",
    ),
    pytest.param(
        b"stray bytes\r\n" + framed(body(1)) + b"\x00\xff" + framed(body(2)), [1, 2], id="stray"
    ),
    pytest.param(b"x" * 200_000 + framed(body(1)), [1], id="200k-junk-no-newline"),
    pytest.param(b"Header: " + b"y" * 100_000 + b"\r\n" + framed(body(1)), [1], id="100k-header"),
    pytest.param(
        b"\r\n\r\n" + framed(body(1)) + b"\r\n" + framed(body(2)), [1, 2], id="blank-lines"
    ),
    pytest.param(
        framed(body(1), len(body(1)) + 25) + framed(body(2)), [1, 2], id="length-too-large"
    ),
    pytest.param(
        framed(b'{"jsonrpc":"2.0","id":3,"method":"m","params":{') + framed(body(4)),
        [("problem", 3), 4],
        id="not-json",
    ),
    pytest.param(b"Content-Length: abc\r\n\r\n" + framed(body(1)), [1], id="length-not-a-number"),
    pytest.param(
        b"Content-Length: 99999999999999999999\r\n\r\n" + framed(body(1)), [1], id="absurd-length"
    ),
]


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize(("data", "expected"), STREAMS)
async def test_framing_recovers(data: bytes, expected: list[Any], chunk: int) -> None:
    assert ids(await read_all(data, chunk)) == expected


async def test_a_length_too_small_is_mended_with_the_bytes_already_read() -> None:
    """A client counting characters instead of UTF-8 bytes: the rest of its body arrives with
    it (one write), so the reader finds it after the body it was told about."""
    text = "héllo wörld ✓ 日本語"
    data = framed(body(1, text), len(body(1, text).decode())) + framed(body(2))
    assert ids(await read_all(data, 65536)) == [1, 2]
    assert ids(await read_all(data, 7)) == [("problem", 1), 2]  # read in pieces: answered


async def test_a_body_over_the_limit_is_skipped_and_its_id_kept() -> None:
    frames = await read_all(framed(body(5, "z" * 5000)) + framed(body(6)), 1024, max_body=1000)
    assert ids(frames) == [("problem", 5), 6]
    assert frames[0].problem is not None and "limit" in frames[0].problem


async def test_input_ending_inside_a_body_is_dropped_with_a_warning(caplog) -> None:
    assert ids(await read_all(framed(body(1)) + framed(body(2))[:-4], 100)) == [1]
    assert "ended inside a message" in caplog.text


async def test_skipped_bytes_are_reported_once(caplog) -> None:
    await read_all(b"junk\r\n" * 1000 + framed(body(1)), 64)
    assert caplog.text.count("skipped 6000 bytes") == 1


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        pytest.param(b'{"jsonrpc":"2.0","id":42,"method":"m","par', 42, id="number"),
        pytest.param(b'{"id":"abc-1","method":"m"', "abc-1", id="string"),
        pytest.param(b'{"method":"m","params":{"id":7}', None, id="only-inside-params"),
        pytest.param(b'{"method":"m"', None, id="none"),
    ],
)
def test_sniff_id(head: bytes, expected: Any) -> None:
    assert sniff_id(head) == expected


async def test_a_header_block_whose_body_is_the_next_message() -> None:
    data = b"Content-Length: 10\r\n\r\n" + framed(body(1)) + framed(body(2))
    assert ids(await read_all(data, 65536)) == [("problem", None), 1, 2]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("x" * 20_000_000, id="20-MB"),
        pytest.param("}Content-Length: 5\r\n" * 500_000, id="10-MB-of-header-lookalikes"),
    ],
)
async def test_a_large_body_costs_one_pass(text: str) -> None:
    """Each new chunk of a body was searched with the whole body before it (quadratic)."""
    data = framed(body(1, text)) + framed(body(2))
    start = time.perf_counter()
    assert ids(await read_all(data, 65536)) == [1, 2]
    assert time.perf_counter() - start < 5
