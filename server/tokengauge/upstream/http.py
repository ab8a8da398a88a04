"""HTTP to the user's LLM API: one streaming POST, turned into SSE events or a typed error.

httpx carries the request; `httpx-sse` frames the stream. The read timeout is the idle timeout:
a stream that sends nothing for that long ends with `StreamStalled`. Closing the context (for
example when the chat task is cancelled) closes the connection at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import attrs
import httpx
from httpx_sse import ServerSentEvent, SSEError

from tokengauge.upstream.sse import aiter_events

ERROR_BODY_LIMIT = 64 * 1024
DRAIN_SECONDS = 0.5


@attrs.frozen
class Timeouts:
    """Seconds to wait: to connect, and between two chunks of a stream (idle)."""

    connect: float = 15.0
    idle: float = 120.0


class UpstreamError(Exception):
    """Anything that went wrong talking to the API."""


class HttpStatusError(UpstreamError):
    """The API answered with an error status; `body` is its text (trimmed)."""

    def __init__(self, status: int, body: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.retry_after = retry_after_seconds(headers)
        should_retry = headers.get("x-should-retry")
        self.should_retry = None if should_retry is None else should_retry.lower() == "true"


class ConnectionFailed(UpstreamError):
    """The connection could not be made or broke before the response was complete."""


class StreamStalled(UpstreamError):
    """The stream sent nothing for longer than the idle timeout."""


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds the API asks us to wait: `retry-after-ms`, `retry-after` (seconds or HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        with contextlib.suppress(ValueError):
            return max(0.0, float(millis) / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    with contextlib.suppress(TypeError, ValueError):
        moment = email.utils.parsedate_to_datetime(value)
        return max(0.0, moment.timestamp() - time.time())
    return None


def make_client(timeouts: Timeouts) -> httpx.AsyncClient:
    """The shared HTTP client (connection pool) for every chat."""
    timeout = httpx.Timeout(connect=timeouts.connect, read=timeouts.idle, write=60.0, pool=30.0)
    return httpx.AsyncClient(timeout=timeout, follow_redirects=True)


@contextlib.asynccontextmanager
async def open_sse(
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str], body: Any
) -> AsyncIterator[AsyncIterator[ServerSentEvent]]:
    """POST `body` and yield the response's SSE events; error statuses raise `HttpStatusError`."""
    request_headers = {"accept": "text/event-stream", **headers}
    try:
        async with client.stream("POST", url, headers=request_headers, json=body) as response:
            if response.status_code >= 400:
                text = await _read_limited(response)
                raise HttpStatusError(response.status_code, text, response.headers)
            yield aiter_events(response)
    except httpx.ReadTimeout as exc:
        raise StreamStalled("the API stopped sending data") from exc
    except SSEError as exc:
        raise UpstreamError(f"the API did not answer with an event stream ({exc})") from exc
    except (httpx.TransportError, httpx.StreamError) as exc:
        raise ConnectionFailed(f"{type(exc).__name__}: {exc}") from exc


async def drain(events: AsyncIterator[ServerSentEvent], seconds: float = DRAIN_SECONDS) -> None:
    """Read what follows the end of a response (usually nothing), so httpx can reuse the
    connection; a server that keeps the stream open is cut off after `seconds`."""

    async def read_all() -> None:
        async for _ in events:
            pass

    with contextlib.suppress(asyncio.TimeoutError, httpx.HTTPError, httpx.StreamError, SSEError):
        await asyncio.wait_for(read_all(), seconds)


async def _read_limited(response: httpx.Response) -> str:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data.extend(chunk)
        if len(data) >= ERROR_BODY_LIMIT:
            break
    return bytes(data[:ERROR_BODY_LIMIT]).decode("utf-8", errors="replace")
