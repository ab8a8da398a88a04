"""HTTP to the user's LLM API: one streaming POST turned into SSE events or a typed error,
bounded GETs of JSON (model lists), and endpoint URLs built from a provider's base URL.

httpx carries the requests; `httpx-sse` frames the stream. What a broken or hostile API can do is
bounded here:
- redirects are followed only within the origin (or from http to https on the same host): the
  headers carry the key (`Authorization`, `x-api-key`, Azure's `api-key`, a provider's own) and a
  307/308 sends the conversation again, so another origin gets neither; a loop ends after 5 hops;
- bodies are decoded by `response_body` (a gzip bomb costs what the caller keeps) and capped;
- a stream must make progress: an event with data (comments and `ping`s are keep-alives, not
  progress) at least every idle timeout, and the whole response within the response timeout,
  whatever trickles in between.
Closing the context (for example when the chat task is cancelled) closes the connection at once.
Every request's credentials (secret header values, the URL's user information and secret query
parameters) are known to the log's redaction before it is sent (`redact.SENT`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import attrs
import httpx
from httpx_sse import ServerSentEvent, SSEError

from tokengauge import jsontext
from tokengauge.counting.text import LONE_SURROGATE
from tokengauge.messages import InvalidInput
from tokengauge.upstream.errors import (
    ConnectionFailed,
    HttpStatusError,
    InvalidUrl,
    RedirectRefused,
    StreamStalled,
    UpstreamError,
)
from tokengauge.upstream.redact import SENT, header_secrets, url_secrets
from tokengauge.upstream.response_body import (
    ACCEPT_ENCODING,
    ERROR_BODY_LIMIT,
    LISTING_LIMIT,
    read_head,
    read_whole,
)
from tokengauge.upstream.sse import Progress, aiter_events

log = logging.getLogger(__name__)

DRAIN_SECONDS: Final = 0.5
MAX_REDIRECTS: Final = 5
DISCOVERY_SECONDS: Final = 60.0
"""Most time one provider's model listing may take."""


@attrs.frozen
class Timeouts:
    """Seconds to wait: to connect; for a stream's next event with data (idle); for a whole
    response (a model list takes at most a minute of it)."""

    connect: float = 15.0
    idle: float = 120.0
    response: float = 1800.0

    @property
    def listing(self) -> float:
        """Most time a model listing may take."""
        return min(self.response, DISCOVERY_SECONDS)


class UpstreamClient(httpx.AsyncClient):
    """The shared connection pool for every request to the APIs; it knows its `Timeouts`."""

    def __init__(self, timeouts: Timeouts) -> None:
        super().__init__(
            timeout=httpx.Timeout(
                connect=timeouts.connect, read=timeouts.idle, write=60.0, pool=30.0
            ),
            follow_redirects=False,
            headers={"accept-encoding": ACCEPT_ENCODING},
        )
        self.timeouts = timeouts


def make_client(timeouts: Timeouts) -> UpstreamClient:
    """The shared HTTP client (connection pool) for every chat and listing."""
    return UpstreamClient(timeouts)


def timeouts_of(client: httpx.AsyncClient) -> Timeouts:
    """The client's `Timeouts` (for a plain httpx client: its read timeout as the idle one)."""
    if isinstance(client, UpstreamClient):
        return client.timeouts
    return Timeouts(idle=client.timeout.read or Timeouts.idle)


def json_body(value: Any) -> bytes:
    """`value` as the UTF-8 JSON httpx would send, with lone surrogates (which UTF-8 cannot
    carry, and which VS Code strings may hold) written as `\\uXXXX` escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _with_json_type(headers: Mapping[str, str]) -> httpx.Headers:
    """`headers` saying the body is JSON (whatever case they spell `content-type` in)."""
    merged = httpx.Headers({"content-type": "application/json"})
    merged.update(headers)
    return merged


def _build(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    headers: Mapping[str, str] | httpx.Headers,
    content: bytes | None,
) -> httpx.Request:
    """The request, or `InvalidUrl` when the provider's baseUrl makes no valid URL. Its
    credentials join `SENT` first, so that no log line shows them."""
    SENT.add([*header_secrets(headers), *url_secrets(url)])
    try:
        request = client.build_request(method, url, headers=headers, content=content)
    except httpx.InvalidURL as exc:
        raise InvalidUrl(str(exc)) from None
    if request.url.scheme not in ("http", "https") or not request.url.host:
        raise InvalidUrl("it must start with http:// or https:// and name a host")
    port = request.url.port
    if port is not None and not 0 < port < 65536:
        raise InvalidUrl(f"port {port} is out of range")
    return request


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _may_follow(source: httpx.URL, target: httpx.URL) -> bool:
    """Same origin, or the same host moving from http to https (its default port)."""
    if _origin(source) == _origin(target):
        return True
    upgrade = (source.scheme, target.scheme) == ("http", "https")
    return upgrade and source.host == target.host and source.port is None and target.port is None


async def send(client: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    """Send `request` (streamed), following redirects that stay with the origin; the response
    must be closed by the caller. `RedirectRefused` for another origin or a loop."""
    for _ in range(MAX_REDIRECTS + 1):
        response = await client.send(request, stream=True, follow_redirects=False)
        target = response.next_request
        if target is None:
            return response
        await response.aclose()
        if not _may_follow(request.url, target.url):
            where = f"{target.url.scheme}://{target.url.netloc.decode('ascii', 'replace')}"
            raise RedirectRefused(f"redirected to another address ({where})", where)
        request = target
    raise RedirectRefused(f"redirected more than {MAX_REDIRECTS} times")


@contextlib.contextmanager
def _translated(timeouts: Timeouts) -> Iterator[None]:
    """httpx's and httpx-sse's exceptions as `UpstreamError`s (the httpx one as the cause)."""
    try:
        yield
    except httpx.ReadTimeout as exc:
        raise StreamStalled(f"stopped sending data for {timeouts.idle:g} s", "idleTimeout") from exc
    except SSEError as exc:
        raise UpstreamError(f"the API did not answer with an event stream ({exc})") from exc
    except (httpx.TransportError, httpx.StreamError) as exc:
        raise ConnectionFailed(str(exc)) from exc


@contextlib.asynccontextmanager
async def open_sse(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    body: Any,
    on_headers: Callable[[httpx.Headers], None] | None = None,
) -> AsyncIterator[AsyncIterator[ServerSentEvent]]:
    """POST `body` and yield the response's SSE events; error statuses raise `HttpStatusError`;
    `on_headers` is handed the headers of a response that streams (a proxy may state the cost
    there)."""
    timeouts = timeouts_of(client)
    request_headers = httpx.Headers({"accept": "text/event-stream"})
    request_headers.update(_with_json_type(headers))
    request = _build(client, "POST", url, request_headers, json_body(body))
    deadline = time.monotonic() + timeouts.response
    with _translated(timeouts):
        try:
            response = await asyncio.wait_for(send(client, request), timeouts.response)
        except asyncio.TimeoutError:
            raise StreamStalled(
                f"did not answer within {timeouts.response:g} s", "responseTimeout"
            ) from None
    try:
        with _translated(timeouts):
            if response.status_code >= 400:
                text = await read_head(response, ERROR_BODY_LIMIT)
                raise HttpStatusError(
                    response.status_code, text.decode("utf-8", errors="replace"), response.headers
                )
            if on_headers is not None:
                on_headers(response.headers)
            yield aiter_events(response, Progress(timeouts.idle, deadline))
    finally:
        await response.aclose()


@attrs.frozen
class JsonAnswer:
    """A JSON answer and the response headers it came with."""

    data: Any
    headers: httpx.Headers


async def json_or_none(
    client: httpx.AsyncClient, url: str, *, headers: Mapping[str, str], body: Any = None
) -> Any:
    """A JSON answer's data (a POST of `body` when there is one), or None, logged, when the
    server cannot give one: for readings that only add to what is known (model sizes, what a
    local server has loaded) and never block a chat."""
    method = "GET" if body is None else "POST"
    try:
        answer = await get_json_retried(client, method, url, headers=headers, body=body)
    except (UpstreamError, InvalidInput) as exc:
        log.debug("%s %s failed: %s", method, url, exc)
        return None
    return answer.data


async def get_json_retried(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Any = None,
) -> JsonAnswer:
    """`get_json`, once more after a broken connection: a local server may close a kept-alive
    connection after a stream without saying so (llama.cpp's does), and the next request on it
    fails before any answer."""
    try:
        return await get_json(client, method, url, headers=headers, body=body)
    except ConnectionFailed:
        return await get_json(client, method, url, headers=headers, body=body)


async def get_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Any = None,
) -> JsonAnswer:
    """One JSON answer (a model list), at most `LISTING_LIMIT` bytes, parsed strictly.

    Raises `HttpStatusError` for an error status, `ConnectionFailed` / `StreamStalled` when the
    API cannot be reached or stops, `UpstreamError` for what the API did wrong (a redirect
    elsewhere, a body too large or not JSON).
    """
    timeouts = timeouts_of(client)
    content = None if body is None else json_body(body)
    request_headers = headers if body is None else _with_json_type(headers)
    request = _build(client, method, url, request_headers, content)
    with _translated(timeouts):
        response = await send(client, request)
        try:
            if response.status_code >= 400:
                text = await read_head(response, ERROR_BODY_LIMIT)
                raise HttpStatusError(
                    response.status_code, text.decode("utf-8", errors="replace"), response.headers
                )
            data = await read_whole(response, LISTING_LIMIT)
        finally:
            await response.aclose()
    try:
        return JsonAnswer(jsontext.parse(data), response.headers)
    except jsontext.JsonSyntaxError as exc:
        raise UpstreamError(f"the answer is not JSON: {exc}") from None


async def drain(events: AsyncIterator[ServerSentEvent], seconds: float = DRAIN_SECONDS) -> None:
    """Read what follows the end of a response (usually nothing), so httpx can reuse the
    connection; a server that keeps the stream open is cut off after `seconds`."""

    async def read_all() -> None:
        async for _ in events:
            pass

    with contextlib.suppress(
        asyncio.TimeoutError, httpx.HTTPError, httpx.StreamError, SSEError, UpstreamError
    ):
        await asyncio.wait_for(read_all(), seconds)


def join_url(base_url: str, path: str) -> str:
    """`base_url` + `/path`, keeping a query string (Azure's `?api-version=`) at the end."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + path.lstrip("/")))


def server_root(base_url: str) -> str:
    """The base URL without a trailing `/v1` (where Ollama's and LiteLLM's own APIs live)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    path = path[: -len("/v1")] if path.endswith("/v1") else path
    return urlunsplit(parts._replace(path=path, query=""))
