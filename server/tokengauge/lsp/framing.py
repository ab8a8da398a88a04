"""LSP base-protocol framing (`Content-Length: N` headers, then N bytes of JSON) that survives
a misbehaving client.

Stray bytes between messages, header lines ending in LF only, a header area of any size, a
Content-Length that is too small (a client counting characters instead of UTF-8 bytes) or too
large: each costs at most the message it touches, never the stream. Bytes that are not a header
are skipped up to the next `Content-Length:` with one warning; a body that is not JSON is
re-cut where the bytes around it say the message really ended, else reported as a `Frame` with a
problem (and the request id, if one can be read) so that the caller can still answer it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, Final

import attrs

from tokengauge import jsontext

log = logging.getLogger(__name__)

MAX_BODY: Final = 256 * 2**20
"""Largest message accepted (a conversation with many images stays far below)."""
MAX_HEADER_LINE: Final = 8 * 1024
"""A longer "header line" is junk, not a header."""
_MARKER: Final = b"content-length:"
_HEADER: Final = re.compile(rb"([A-Za-z0-9-]+)[ \t]*:[ \t]*(.*)")
_ID: Final = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\\r\n]|\\.){0,200}")')
_SNIFF_BYTES: Final = 4096
_MAX_CUTS: Final = 4

Read = Callable[[], Awaitable[bytes]]
"""The next chunk of input, b"" at its end."""


@attrs.frozen
class Frame:
    """One message: its parsed JSON `value`, or a `problem` and the request id it seemed to have."""

    value: Any = None
    problem: str | None = None
    request_id: int | str | None = None


class FrameReader:
    """Cuts a byte stream into LSP messages."""

    def __init__(self, read: Read, max_body: int = MAX_BODY) -> None:
        self._read = read
        self._max_body = max_body
        self._buffer = bytearray()
        self._ended = False
        self._skipped = 0

    async def next(self) -> Frame | None:
        """The next message, or None at the end of input."""
        length = await self._headers()
        if length is None:
            return None
        if length > self._max_body:
            return await self._discard_body(length)
        body = await self._body(length)
        return None if body is None else self._frame(body)

    async def _more(self) -> bool:
        if self._ended:
            return False
        chunk = await self._read()
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        return True

    async def _body(self, length: int) -> bytes | None:
        """The `length` bytes of a body; fewer if the next message's header turns up inside them
        (a Content-Length too large); None if the input ended inside it."""
        searched, attempts = 1, 0
        while len(self._buffer) < length:
            # Only the bytes that came since the last look are searched, and a cut is tried at
            # most a few times: a large body costs one pass, whatever its text says.
            found = bytes(self._buffer[searched:]).lower().find(_MARKER)
            cut = searched + found if found >= 0 and attempts < _MAX_CUTS else None
            if cut is not None and _ends_an_object(self._buffer, cut):
                attempts += 1
                if _try_parse(bytes(self._buffer[:cut])) is not None:
                    log.warning("a message's Content-Length was %d; it was %d bytes", length, cut)
                    return self._take(cut)
            searched = max(1, len(self._buffer) - len(_MARKER) + 1)
            if not await self._more():
                inner = self._buffer.lower().find(_MARKER, 1)
                if inner > 0:  # the rest is another message: this one was cut short
                    return self._take(inner)
                log.warning(
                    "the input ended inside a message (%d of %d bytes): dropped",
                    len(self._buffer),
                    length,
                )
                self._buffer.clear()
                return None
        return self._take(length)

    def _take(self, size: int) -> bytes:
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken

    async def _headers(self) -> int | None:
        """The Content-Length of the next header block (consumed); None at the end of input."""
        length: int | None = None
        while True:
            end = self._buffer.find(b"\n", 0, MAX_HEADER_LINE + 1)
            if end < 0:
                if len(self._buffer) > MAX_HEADER_LINE:
                    self._skip_to_marker()
                    length = None
                elif not await self._more():
                    self._report_skipped(len(self._buffer))
                    return None
                continue
            line = bytes(self._buffer[:end]).rstrip(b"\r")
            header = _HEADER.fullmatch(line)
            if not line.strip():
                del self._buffer[: end + 1]
                if length is not None:
                    self._report_skipped(0)
                    return length
                if self._skipped:  # blank lines inside junk are junk too
                    self._skipped += end + 1
            elif header is None or line.lower().find(_MARKER, 1) > 0:
                self._skip_to_marker()
                length = None
            else:
                del self._buffer[: end + 1]
                if header[1].lower() == b"content-length":
                    value = header[2].strip()
                    length = int(value) if value.isdigit() and len(value) < 19 else None

    def _skip_to_marker(self) -> None:
        """Drop bytes up to the next `Content-Length:` after the first byte (or keep a tail that
        may be the start of one); the header block being read is abandoned."""
        found = self._buffer.lower().find(_MARKER, 1)
        if found < 0:
            found = max(1, len(self._buffer) - len(_MARKER) + 1)
        self._skipped += found
        del self._buffer[:found]

    def _report_skipped(self, extra: int) -> None:
        skipped = self._skipped + extra
        self._skipped = 0
        if skipped:
            log.warning("skipped %d bytes of input that were not an LSP message", skipped)

    async def _discard_body(self, length: int) -> Frame:
        while len(self._buffer) < min(length, _SNIFF_BYTES) and await self._more():
            pass
        request_id = sniff_id(bytes(self._buffer[:_SNIFF_BYTES]))
        remaining = length
        while remaining:
            taken = min(remaining, len(self._buffer))
            del self._buffer[:taken]
            remaining -= taken
            if remaining and not await self._more():
                break
        limit = self._max_body // 2**20
        return Frame(
            problem=f"the message is {length:,} bytes; the limit is {limit} MiB",
            request_id=request_id,
        )

    def _frame(self, body: bytes) -> Frame:
        try:
            return Frame(jsontext.parse(body))
        except jsontext.JsonSyntaxError as exc:
            problem = str(exc)
        recut = self._recut(body)
        if recut is not None:
            return recut
        return Frame(problem=problem, request_id=sniff_id(body[:_SNIFF_BYTES]))

    def _recut(self, body: bytes) -> Frame | None:
        """A body that is not JSON because its Content-Length was wrong, parsed where it ends."""
        inner = body.lower().find(_MARKER)
        if inner == 0 or _MARKER.startswith(body[: len(_MARKER)].lower()):
            # A header block with no body: the next message begins right here.
            self._buffer[:0] = body
            return Frame(problem="a message had no body")
        if inner > 0:  # a header inside: this message was cut short, the next one begins there
            self._buffer[:0] = body[inner:]
            value = _try_parse(body[:inner])
            if value is None:
                return Frame(problem="the message was cut short", request_id=sniff_id(body[:inner]))
            log.warning("a message's Content-Length was %d; it was %d bytes", len(body), inner)
            return Frame(value[0])
        following = self._buffer.lower().find(_MARKER)
        rest = len(self._buffer) if following < 0 else following
        if rest:  # too small: the rest of the body came as "stray" bytes before the next header
            value = _try_parse(body + bytes(self._buffer[:rest]))
            if value is not None:
                del self._buffer[:rest]
                log.warning(
                    "a message's Content-Length was %d; it was %d bytes",
                    len(body),
                    len(body) + rest,
                )
                return Frame(value[0])
        return None


def _ends_an_object(data: bytearray, end: int) -> bool:
    """Whether `data[:end]` ends with `}` (whitespace aside), as a JSON-RPC message does."""
    index = end - 1
    while index > 0 and data[index] in b" \t\r\n":
        index -= 1
    return index >= 0 and data[index] == ord("}")


def _try_parse(data: bytes) -> tuple[Any] | None:
    try:
        return (jsontext.parse(data),)
    except jsontext.JsonSyntaxError:
        return None


def sniff_id(head: bytes) -> int | str | None:
    """The `id` of a message that could not be parsed, if it comes before its params."""
    match = _ID.search(head)
    if match is None or b'"params"' in head[: match.start()]:
        return None
    if not match[1].startswith(b'"'):
        return int(match[1])
    parsed = _try_parse(match[1])
    return parsed[0] if parsed is not None else None
