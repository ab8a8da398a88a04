"""Response bodies read with bounds: decompressed in small pieces, capped, timed.

httpx decompresses each network chunk whole (a 64 KiB chunk of a gzip bomb is 64 MiB at once) and
reads a body to its end if asked. Here the body's raw bytes go through our own zlib decoder with
an output bound per step, so how much is held depends only on what the caller keeps: the first
`ERROR_BODY_LIMIT` bytes of an error, a model list up to `LISTING_LIMIT`, one SSE event up to
`EVENT_LIMIT`. A body that claims an encoding it does not have, or one we never asked for, is an
`UpstreamError` a person can read.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final

import httpx

from tokengauge.upstream.errors import UpstreamError

ACCEPT_ENCODING: Final = "gzip, deflate"
"""What we ask for: the encodings `Decoder` takes."""
PIECE: Final = 64 * 1024
"""Most decompressed bytes produced by one step."""
ERROR_BODY_LIMIT: Final = 64 * 1024
LISTING_LIMIT: Final = 16 * 2**20
EVENT_LIMIT: Final = 16 * 2**20


class Decoder:
    """One `Content-Encoding` (identity, gzip or deflate) undone in pieces of at most `PIECE`."""

    def __init__(self, content_encoding: str) -> None:
        name = content_encoding.strip().lower()
        self._name = name
        self._zlib: Any = None
        # Deflate may come with a zlib header or without (raw, as httpx also allows): the first
        # bytes are kept until the first output says which.
        self._head: bytes | None = None
        if name in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif name == "deflate":
            self._zlib = zlib.decompressobj()
            self._head = b""
        elif name not in ("", "identity"):
            raise UpstreamError(
                f"the API compressed its answer as {content_encoding!r}, which Token Gauge did not "
                f"ask for (it accepts {ACCEPT_ENCODING})"
            )

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded bytes of `data`, in pieces."""
        if self._zlib is None:
            for start in range(0, len(data), PIECE):
                yield data[start : start + PIECE]
            return
        if self._head is not None:
            self._head += data
        while data:
            try:
                piece = self._zlib.decompress(data, PIECE)
            except zlib.error:
                if self._head is None:
                    raise UpstreamError(
                        f"the API said its answer was {self._name}-compressed, but it is not"
                    ) from None
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                data, self._head = self._head, None
                continue
            if piece:
                self._head = None
                yield piece
            data = self._zlib.unconsumed_tail


async def decoded(response: httpx.Response) -> AsyncIterator[bytes]:
    """The response's body, decoded by `Decoder`, as it arrives."""
    decoder = Decoder(response.headers.get("content-encoding", ""))
    async for chunk in response.aiter_raw():
        for piece in decoder.feed(chunk):
            yield piece


async def read_head(response: httpx.Response, limit: int) -> bytes:
    """The first `limit` decoded bytes of the body (an error body: the rest is not read)."""
    data = bytearray()
    async for piece in decoded(response):
        data += piece
        if len(data) >= limit:
            break
    return bytes(data[:limit])


async def read_whole(response: httpx.Response, limit: int) -> bytearray:
    """The whole decoded body; `UpstreamError` as soon as it is over `limit` bytes."""
    data = bytearray()
    async for piece in decoded(response):
        data += piece
        if len(data) > limit:
            raise UpstreamError(f"the API answered with more than {limit // 2**20} MiB")
    return data
