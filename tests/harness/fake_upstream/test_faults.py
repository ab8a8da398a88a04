"""Faults, disconnect detection and the standalone subprocess mode of the test upstream."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import zlib
from typing import Any

import httpx
import pytest

from tests.harness.fake_upstream import faults
from tests.harness.fake_upstream.config import (
    Chunking,
    Fault,
    ListedModel,
    Reply,
    Scripted,
    UpstreamConfig,
)
from tests.harness.fake_upstream.helpers import chat, messages_body, parse_sse
from tests.harness.fake_upstream.process import SubprocessUpstream
from tests.harness.fake_upstream.server import Upstream
from tests.harness.fake_upstream.wire import WIRE_DIR
from tokengauge.calibration.classify import ErrorKind, classify_error


async def read_until_error(
    http: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> tuple[bytes, Exception | None]:
    """Stream a response; the bytes received and the transport error that ended it, if any."""
    received = b""
    try:
        async with http.stream("POST", path, json=body) as response:
            async for piece in response.aiter_bytes():
                received += piece
    except httpx.TransportError as exc:
        return received, exc
    return received, None


async def test_drop_after_bytes_and_chunks(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(faults.drop_after(bytes_=300), faults.drop_after(chunks=4))
    received, error = await read_until_error(http, "/v1/chat/completions", chat())
    assert isinstance(error, httpx.RemoteProtocolError) and len(received) == 300
    received, error = await read_until_error(http, "/v1/messages", messages_body())
    record = upstream.last
    assert error is not None and record.chunks_sent == 4 and len(received) == record.bytes_sent
    assert [r.outcome for r in upstream.requests] == ["dropped", "dropped"]
    assert not any(r.disconnected.is_set() for r in upstream.requests)


async def test_stall_then_continue_or_drop(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(faults.stall(seconds=0.3), faults.stall(seconds=0.2, then="drop"))
    start = time.monotonic()
    received, error = await read_until_error(http, "/v1/chat/completions", chat())
    assert error is None and time.monotonic() - start >= 0.3
    assert parse_sse(received.decode())[-1].data == "[DONE]"
    received, error = await read_until_error(http, "/v1/chat/completions", chat())
    assert isinstance(error, httpx.RemoteProtocolError) and upstream.last.outcome == "dropped"


@pytest.mark.parametrize(
    ("scripted", "status", "header", "kind"),
    [
        (
            faults.rate_limited("anthropic", retry_after=2),
            429,
            ("retry-after", "2"),
            ErrorKind.RATE_LIMIT,
        ),
        (
            faults.rate_limited("openai", retry_after=0.5),
            429,
            ("retry-after", "0.5"),
            ErrorKind.RATE_LIMIT,
        ),
        (faults.overloaded(), 529, ("x-should-retry", "true"), ErrorKind.OTHER),
        (faults.unauthorized("anthropic"), 401, None, ErrorKind.AUTH),
        (faults.unauthorized("openai"), 401, None, ErrorKind.AUTH),
        (faults.server_error(503), 503, None, ErrorKind.OTHER),
        (Scripted(status=529), 529, ("x-should-retry", "true"), ErrorKind.OTHER),
        (
            Scripted(status=429, headers={"retry-after": "3"}),
            429,
            ("retry-after", "3"),
            ErrorKind.RATE_LIMIT,
        ),
        (Scripted(status=500), 500, None, ErrorKind.OTHER),
    ],
)
async def test_error_statuses(
    upstream: Upstream,
    http: httpx.AsyncClient,
    scripted: Scripted,
    status: int,
    header: tuple[str, str] | None,
    kind: ErrorKind,
) -> None:
    upstream.script(scripted)
    response = await http.post("/v1/messages", json=messages_body())
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    json.loads(response.text)
    if header:
        assert response.headers[header[0]] == header[1]
    assert classify_error(status, response.text).kind is kind


async def test_529_replays_real_body(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(faults.overloaded())
    response = await http.post("/v1/messages", json=messages_body())
    assert response.content == (WIRE_DIR / "error-anthropic-529-overloaded.json").read_bytes()
    assert response.headers["request-id"] == "req_01RCc7MbLyQNtGKzBTv8VCep"


async def test_malformed_sse(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(faults.malformed(after_events=2))
    events = parse_sse((await http.post("/v1/chat/completions", json=chat())).text)
    bad = []
    for event in events:
        try:
            event.json()
        except ValueError:
            bad.append(event.data)
    assert bad == ["{this is not json", "[DONE]"]


async def test_stream_ending_with_error_event(upstream: Upstream, http: httpx.AsyncClient) -> None:
    fault = Fault(error_event_after_events=3)
    upstream.script(Scripted(fault=fault), Scripted(fault=fault), faults.midstream_error("openai"))
    openai = parse_sse((await http.post("/v1/chat/completions", json=chat())).text)
    assert len(openai) == 5 and openai[-1].data == "[DONE]"
    assert openai[-2].json()["error"]["message"] == "Token limit reached"
    anthropic = parse_sse((await http.post("/v1/messages", json=messages_body())).text)
    assert [e.name for e in anthropic][-2:] == ["ping", "error"]
    assert anthropic[-1].json()["error"]["type"] == "overloaded_error"
    replayed = await http.post("/v1/chat/completions", json=chat())
    assert replayed.status_code == 200
    assert (
        replayed.content == (WIRE_DIR / "openrouter-chat-stream-midstream-error.sse").read_bytes()
    )


async def cancel_mid_stream(
    up: Upstream, http: httpx.AsyncClient, body: dict[str, Any], path: str
) -> float:
    """Start a stream, cancel the client task once the server has sent bytes; the lag in s."""
    task = asyncio.create_task(read_until_error(http, path, body))
    (record,) = await up.wait_for_requests(1)
    while record.first_byte_at is None:
        await asyncio.sleep(0.005)
    cancelled_at = time.monotonic()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    seen = await record.wait_disconnected(2)
    await record.wait_finished(2)
    assert record.outcome == "client_disconnected"
    return seen - cancelled_at


async def test_disconnect_seen_during_stall(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(faults.stall(seconds=30))
    assert await cancel_mid_stream(upstream, http, chat(), "/v1/chat/completions") < 0.2


async def test_disconnect_seen_during_slow_stream(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    upstream.config.chunking = Chunking(min_bytes=8, max_bytes=16, min_delay=0.02, max_delay=0.05)
    upstream.script(Scripted(reply=Reply(text="word ", repeat=2000)))
    assert await cancel_mid_stream(upstream, http, messages_body(), "/v1/messages") < 0.2
    assert upstream.last.bytes_sent < 100_000


async def test_disconnect_seen_before_headers(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(Scripted(fault=Fault(headers_delay=30)))
    task = asyncio.create_task(read_until_error(http, "/v1/chat/completions", chat()))
    (record,) = await upstream.wait_for_requests(1)
    await asyncio.sleep(0.05)
    cancelled_at = time.monotonic()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert await record.wait_disconnected(2) - cancelled_at < 0.2
    assert record.bytes_sent == 0


def test_subprocess_mode() -> None:
    config = UpstreamConfig(listing="vercel", models=[ListedModel(id="v/m", context_window=1000)])
    with SubprocessUpstream(config) as up, httpx.Client(base_url=up.base_url) as http:
        assert up.base_url.startswith("http://127.0.0.1:")
        assert http.get("/v1/models").json()["data"][0]["context_window"] == 1000
        up.script(Scripted(route="messages", fixture="anthropic-stream-text"))
        response = http.post("/v1/messages", json=messages_body(), headers={"x-api-key": "k-1"})
        assert response.content == (WIRE_DIR / "anthropic-stream-text.sse").read_bytes()
        (record,) = up.requests(route="messages")
        assert record["headers"]["x-api-key"] == "k-1" and record["json"]["max_tokens"] == 100
        up.configure({"model": {"context_window": 10}})
        overflow = http.post("/v1/chat/completions", json=chat())
        assert classify_error(400, overflow.text).limit_tokens == 10
        up.reset(config=True)
        up.script(faults.stall(seconds=30))
        with http.stream("POST", "/v1/chat/completions", json=chat()) as stream:
            next(stream.iter_raw())
        (stalled,) = up.requests(route="chat")
        seen = up.request(stalled["id"], wait="disconnected", timeout=3)
        assert seen["is_disconnected"] and seen["outcome"] == "client_disconnected"


@pytest.mark.parametrize("stop", ["SIGTERM", "stdin closed"])
def test_a_standalone_upstream_stops_cleanly(stop: str) -> None:
    """Stopped as the host scripts and `SubprocessUpstream` stop it (SIGTERM), or by its stdin
    closing, it exits with 0. A SIGTERM used to abort it (status 134, "_enter_buffered_busy") while
    its thread waiting for stdin's end held the buffered reader's lock."""
    with SubprocessUpstream() as up:
        assert up.process is not None and up.process.stdin is not None
        if stop == "SIGTERM":
            up.process.terminate()
        else:
            up.process.stdin.close()
        assert up.process.wait(10) == 0


async def test_drop_before_headers(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(Scripted(fault=Fault(drop_before_headers=True)))
    with pytest.raises(httpx.RemoteProtocolError):
        await http.post("/v1/chat/completions", json=chat())
    assert upstream.last.outcome == "dropped"
    assert (await http.post("/v1/chat/completions", json=chat())).status_code == 200


async def test_control_api_in_process(upstream: Upstream, http: httpx.AsyncClient) -> None:
    script = {"responses": [{"route": "chat", "status": 503, "times": 2}]}
    assert len((await http.post("/_control/script", json=script)).json()["pending"]) == 1
    bad = await http.post("/_control/script", json={"responses": [{"route": "nope"}]})
    assert bad.status_code == 400
    statuses = [(await http.post("/v1/chat/completions", json=chat())).status_code for _ in "abc"]
    assert statuses == [503, 503, 200]
    listed = (await http.get("/_control/requests", params={"since": 1, "route": "chat"})).json()
    assert [r["id"] for r in listed["requests"]] == [2, 3]
    counted = await http.post("/_control/count", json={"dialect": "openai", "body": chat()})
    assert counted.json()["total"] == upstream.requests[-1].prompt_tokens
    waited = await http.get("/_control/requests/3", params={"wait": "finished"})
    assert waited.json()["outcome"] == "completed"
    assert (await http.get("/_control/requests/99")).status_code == 404
    await http.post("/_control/reset", json={})
    assert upstream.requests == [] and upstream.pending_script == []


# Faults of the reliability campaign: keep-alives, trickles, endless streams, bombs, redirects.


async def test_keepalives_only(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(faults.keepalives_only("comment", every=0.05))
    received = b""
    async with http.stream("POST", "/v1/chat/completions", json=chat()) as response:
        async for piece in response.aiter_bytes():
            received += piece
            if received.count(b"keep-alive") >= 3:
                break
    assert set(received.split(b"\n\n")) <= {b": keep-alive", b""}


async def test_trickle_sends_one_byte_at_a_time(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    upstream.script(faults.trickle(0.01))
    async with http.stream("POST", "/v1/chat/completions", json=chat()) as response:
        pieces = []
        async for piece in response.aiter_raw():
            pieces.append(piece)
            if len(pieces) == 5:
                break
    assert [len(p) for p in pieces] == [1] * 5


async def test_endless_repeats_one_event(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(faults.endless(event=1, every=0.01))
    received = b""
    async with http.stream("POST", "/v1/chat/completions", json=chat()) as response:
        async for piece in response.aiter_bytes():
            received += piece
            if received.count(b"\n\n") >= 10:
                break
    events = parse_sse(received.decode())
    assert len({e.data for e in events[1:9]}) == 1 and "[DONE]" not in received.decode()


async def test_gzip_bomb(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(faults.bomb(50 * 2**20))
    async with http.stream("POST", "/v1/chat/completions", json=chat()) as response:
        assert response.headers["content-encoding"] == "gzip"
        raw = b"".join([piece async for piece in response.aiter_raw()])
    assert len(raw) < 100_000
    assert zlib.decompress(raw, zlib.MAX_WBITS | 16)[:10] == b"data: aaaa"


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_redirect(upstream: Upstream, http: httpx.AsyncClient, status: int) -> None:
    upstream.script(faults.redirect("http://127.0.0.1:1/elsewhere", status=status))
    response = await http.post("/v1/chat/completions", json=chat())
    assert response.status_code == status
    assert response.headers["location"] == "http://127.0.0.1:1/elsewhere"


async def test_listing_answer_replaces_the_listing(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    upstream.config.listing_answer = Scripted(
        body="<html>gateway</html>", status=502, content_type="text/html"
    )
    response = await http.get("/v1/models")
    assert response.status_code == 502 and response.text == "<html>gateway</html>"
