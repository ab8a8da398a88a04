"""SSE framing (through `httpx-sse`) and the JSON helpers both stream parsers share.

Framing is `httpx_sse.EventSource`, used through its public API only. One addition: a stream
whose last event lacks its closing blank line (a connection closed right after the event, or a
capture pasted without the final newline) still delivers that event. The SSE spec says to drop
it, but it is typically the error that explains why the stream ended, so we keep it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from httpx_sse import EventSource, ServerSentEvent

log = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"
_EXCERPT = 200


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


class _Terminated(httpx.AsyncByteStream):
    """A response's decoded bytes, plus the line breaks its last event may lack."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        tail = b""
        async for chunk in self._response.aiter_bytes():
            if chunk:
                tail = (tail + chunk)[-4:]
                yield chunk
        end = missing_terminator(tail)
        if end:
            log.debug("the stream's last event had no closing blank line")
            yield end

    async def aclose(self) -> None:
        await self._response.aclose()


async def aiter_events(response: httpx.Response) -> AsyncIterator[ServerSentEvent]:
    """The SSE events of a streaming response; the caller still owns and closes `response`.

    Raises `httpx_sse.SSEError` when the response is not `text/event-stream`.
    """
    content_type = response.headers.get("content-type", "")
    wrapped = httpx.Response(
        response.status_code,
        headers={"content-type": content_type},
        stream=_Terminated(response),
    )
    async for event in EventSource(wrapped).aiter_sse():
        yield event


def json_object(data: str) -> dict[str, Any] | None:
    """`data` parsed as a JSON object (surrounding whitespace allowed), or None."""
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (for `null` and wrong types)."""
    return value if isinstance(value, dict) else {}


def as_int(obj: dict[str, Any], key: str) -> int:
    """`obj[key]` if it is an integer, else 0."""
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def malformed(data: str) -> str:
    """The message for a `data:` line that is not the JSON object the dialect promises."""
    excerpt = data if len(data) <= _EXCERPT else data[:_EXCERPT] + "…"
    return f"malformed stream data: {excerpt!r}"


def error_message(error: Any, fallback: str) -> str:
    """The human message of an error object (`{"message": …}`), a string, or `fallback`."""
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        kind = error.get("type") or error.get("code")
        if kind is not None:
            return str(kind)
    if isinstance(error, str) and error:
        return error
    return fallback


def parse_arguments(arguments: str) -> tuple[bool, Any]:
    """A tool call's JSON arguments: `(True, value)`, `{}` for none, `(False, raw)` if not JSON."""
    if not arguments.strip():
        return True, {}
    try:
        return True, json.loads(arguments)
    except ValueError:
        return False, arguments


def lenient_tool_input(arguments: str, name: str) -> Any:
    """The tool input of a call the API says is complete: invalid JSON is passed on as the string.

    The model wrote those arguments; the tool (and then the model) is best placed to deal with
    them, so we pass them on rather than drop the call.
    """
    ok, value = parse_arguments(arguments)
    if not ok:
        log.warning("tool call %r: arguments are not JSON; passing them on as a string", name)
    return value
