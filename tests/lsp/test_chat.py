"""`tokenGauge/chat` end to end: real LSP over stdio, real HTTP to the test upstream."""

from __future__ import annotations

import asyncio
import json
import math
import uuid
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol.types import CancelParams
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream import faults
from tests.harness.fake_upstream.config import Reply, Scripted, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import (
    API_KEY,
    READ_FILE,
    PartLog,
    chat_options,
    chat_params,
    conversation,
)
from tests.lsp.helpers import told_per_true
from tokengauge.counting.request import message_digest
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, structure


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """The server, wired to a fresh test upstream (`client.upstream`)."""
    async with running_upstream(UpstreamConfig()) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.storage = tmp_path / "storage"  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        await initialize(lsp_client, chat_options(str(tmp_path / "storage"), up.base_url))
        yield
        await lsp_client.shutdown_session()


@pytest.fixture
def upstream(client: LanguageClient) -> Upstream:
    """The test upstream behind `client`."""
    return client.upstream  # type: ignore[attr-defined,no-any-return]


def parts_of(client: LanguageClient, params: dict) -> list[dict]:
    return client.part_log.of(params["requestId"])  # type: ignore[attr-defined]


async def chat(client: LanguageClient, params: dict) -> dict:
    return await call(client, "tokenGauge/chat", params)


@pytest.mark.parametrize("model_id", ["gpt-4o", "claude-sonnet-4-5"])
async def test_text_streams_in_order_and_usage_closes_the_loop(
    client: LanguageClient, upstream: Upstream, model_id: str
):
    question = "Please explain what this code does: " + "total = compute(x, y) + 1\n" * 100
    messages = conversation(question)
    params = chat_params(model_id, messages)
    result = await chat(client, params)
    parts = parts_of(client, params)
    text = "".join(p["value"] for p in parts if p["type"] == "text")
    assert text == "ok: " + question[:40]
    assert [p["type"] for p in parts][-1] == "usage"
    assert all(p["type"] == "text" for p in parts[:-1])
    assert len(parts) > 2  # really streamed in pieces
    [request] = upstream.model_requests
    true_input = request.prompt_tokens
    usage = parts[-1]
    assert usage["totalInputTokens"] == true_input
    # What Copilot reads is in the units the window is declared in (the true ones, so far).
    scale = await told_per_true(client, model_id)
    assert usage["data"]["prompt_tokens"] == round(true_input * scale)
    assert usage["data"]["completion_tokens"] == request.output_tokens
    assert result == {"usage": usage["data"], "finishReason": result["finishReason"]}
    assert result["finishReason"] in ("stop", "end_turn")
    # The key went to the API, and only there.
    header = request.header("authorization") or request.header("x-api-key")
    assert API_KEY in header
    # Counts of the same messages now are the actuals the server stored for them, +2%.
    counted = await call(
        client, "tokenGauge/countTokens", {"modelId": model_id, "inputs": messages[1:]}
    )
    family = {m["id"]: m["family"] for m in await call(client, "tokenGauge/models", {})}
    ledger = Ledger(client.storage / "ledger")  # type: ignore[attr-defined]
    try:
        digests = [message_digest(structure(m, Message)) for m in messages[1:]]
        actuals = ledger.get_actuals(family[model_id], digests)
    finally:
        ledger.close()
    assert None not in actuals
    # In the units VS Code is told of the window, less the 3 Copilot adds to every message.
    scale = await told_per_true(client, model_id)
    expected = [math.ceil(math.ceil(a * 1.02 - 1e-9) * scale) - 3 for a in actuals if a]
    assert counted["tokens"] == expected
    estimate = (await call(client, "tokenGauge/usage", {}))["latest"]["estimate"]
    shares = true_input - estimate["system"] - estimate["tools"] - estimate["fixed"]
    assert shares <= sum(actuals) <= true_input  # type: ignore[arg-type]
    status = client.part_log.statuses[-1]  # type: ignore[attr-defined]
    assert status["text"].startswith("$(pulse) ") and status["severity"] == "info"


async def test_usage_part_carries_the_whole_prompt_with_cache_reads(
    client: LanguageClient, upstream: Upstream, wire: Path
):
    """Copilot's background compaction reads `prompt_tokens` from the usage part: for Anthropic it
    must be input + cache read + cache write, not the uncached input alone."""
    upstream.script(Scripted(fixture="anthropic-stream-cache-read"))
    params = chat_params("claude-sonnet-4-5", conversation())
    result = await chat(client, params)
    start = next(
        line
        for line in (wire / "anthropic-stream-cache-read.sse").read_text().splitlines()
        if line.startswith("data:") and "message_start" in line
    )
    usage = json.loads(start[5:])["message"]["usage"]
    whole = (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )
    assert whole > usage["input_tokens"] * 100  # this capture is almost all cache reads
    part = parts_of(client, params)[-1]
    assert part["type"] == "usage" and part["totalInputTokens"] == whole
    assert (
        part["data"]["prompt_tokens_details"]["cached_tokens"] == usage["cache_read_input_tokens"]
    )
    scale = await told_per_true(client, "claude-sonnet-4-5")
    assert result["usage"]["prompt_tokens"] == round(whole * scale)


async def test_tool_call_and_max_tokens(client: LanguageClient, upstream: Upstream):
    upstream.script(
        Scripted(reply=Reply(tool_call=True, tool_arguments={"path": "src/app.py", "n": 3}))
    )
    params = chat_params(
        "claude-sonnet-4-5",
        conversation(),
        tools=[READ_FILE],
        toolMode="required",
        modelOptions={"temperature": 0.2},
    )
    result = await chat(client, params)
    calls = [p for p in parts_of(client, params) if p["type"] == "toolCall"]
    assert len(calls) == 1
    assert calls[0]["name"] == "read_file"
    assert calls[0]["input"] == {"path": "src/app.py", "n": 3}
    assert calls[0]["callId"]
    assert result["finishReason"] == "tool_use"
    body = upstream.model_requests[0].json
    assert body["tool_choice"] == {"type": "any"}
    assert body["tools"][0]["name"] == "read_file"
    assert 0 < body["max_tokens"] <= 64_000


async def test_overflow_learns_the_window_and_a_request_that_cannot_fit_says_so(
    client: LanguageClient, upstream: Upstream
):
    """The API's window is far smaller than configured: the overflow teaches it, and a request
    that cannot fit even trimmed is refused with a clear message instead of sent again."""
    upstream.config.model.context_window = 60
    upstream.config.model.check_max_tokens = False
    messages = conversation("word " * 200)
    params = chat_params("claude-sonnet-4-5", messages)
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, params)
    message = caught.value.message
    assert "cannot fit" in message and "Sonnet (test)" in message
    assert caught.value.data == {"kind": "overflow"}
    assert API_KEY not in message
    assert len(upstream.model_requests) == 1  # not sent again
    true_input = upstream.model_requests[0].prompt_tokens
    counted = await call(
        client,
        "tokenGauge/countTokens",
        {"modelId": "claude-sonnet-4-5", "inputs": messages},
    )
    scale = await told_per_true(client, "claude-sonnet-4-5")
    assert sum(tokens + 3 for tokens in counted["tokens"]) / scale > 60
    assert client.part_log.models_changed == 1  # type: ignore[attr-defined]
    models = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}
    assert models["claude-sonnet-4-5"]["contextWindow"] == 60
    assert true_input > 60


async def test_input_plus_max_tokens_is_retried_once_with_a_fitting_max_tokens(
    client: LanguageClient, upstream: Upstream
):
    upstream.config.model.context_window = 20_000  # the prompt fits, 16k of output does not
    params = chat_params("claude-sonnet-4-5", conversation("word " * 6000))
    await chat(client, params)
    first, second = upstream.model_requests
    assert first.status == 400 and second.status == 200
    assert second.json["max_tokens"] < first.json["max_tokens"]
    assert second.prompt_tokens + second.json["max_tokens"] <= 20_000


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(faults.rate_limited("anthropic", retry_after=0.2), id="429-retry-after"),
        pytest.param(faults.overloaded(), id="529-should-retry"),
        pytest.param(faults.server_error(503), id="503"),
        pytest.param(Scripted(fault=faults.Fault(drop_before_headers=True)), id="reset"),
    ],
)
async def test_transient_errors_back_off_and_retry(
    client: LanguageClient, upstream: Upstream, fault: Scripted
):
    upstream.script(fault)
    params = chat_params("claude-sonnet-4-5", conversation())
    await chat(client, params)
    assert [r.status for r in upstream.model_requests][-1] == 200
    assert len(upstream.model_requests) == 2
    waits = [s for s in client.part_log.statuses if "retrying" in s["text"]]  # type: ignore[attr-defined]
    assert waits and waits[0]["severity"] == "warning"


async def test_gives_up_after_three_tries(client: LanguageClient, upstream: Upstream):
    upstream.script(faults.server_error(500), faults.server_error(502), faults.server_error(503))
    with pytest.raises(
        JsonRpcException, match=r"had a server error at .* \(503 Service Unavailable\)"
    ):
        await chat(client, chat_params("gpt-4o", conversation()))
    assert len(upstream.model_requests) == 3


@pytest.mark.parametrize("model_id", ["gpt-4o", "claude-sonnet-4-5"])
async def test_rejected_key(client: LanguageClient, upstream: Upstream, model_id: str):
    dialect = "anthropic" if model_id.startswith("claude") else "openai"
    upstream.script(faults.unauthorized(dialect))
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, chat_params(model_id, conversation()))
    assert "rejected the API key" in caught.value.message
    assert "Run 'Token Gauge: Set API Key'" in caught.value.message
    assert len(upstream.model_requests) == 1


@pytest.mark.parametrize(
    ("model_id", "fault", "needle"),
    [
        pytest.param(
            "claude-sonnet-4-5",
            faults.midstream_error("anthropic"),
            "Overloaded",
            id="anthropic-error-event",
        ),
        pytest.param(
            "gpt-4o",
            faults.midstream_error("openai"),
            "Token limit reached",
            id="openrouter-error-chunk",
        ),
        pytest.param(
            "gpt-4o",
            faults.drop_after(chunks=3),
            "incomplete|complete the request",
            id="dropped-mid-stream",
        ),
        pytest.param(
            "gpt-4o", faults.stall(after_chunks=2, seconds=5), "stopped sending", id="stalled"
        ),
        pytest.param(
            "claude-sonnet-4-5",
            faults.malformed(after_events=2),
            "malformed stream data",
            id="malformed-sse",
        ),
    ],
)
async def test_broken_streams_end_in_a_clear_error(
    client: LanguageClient, upstream: Upstream, model_id: str, fault: Scripted, needle: str
):
    fault.times = 3
    upstream.script(fault)
    params = chat_params(model_id, conversation())
    with pytest.raises(JsonRpcException, match=needle):
        await chat(client, params)
    assert all(p["type"] != "usage" for p in parts_of(client, params))


async def test_cancel_closes_the_upstream_connection(client: LanguageClient, upstream: Upstream):
    upstream.script(faults.stall(after_chunks=2, seconds=30))
    msg_id = str(uuid.uuid4())
    pending = asyncio.ensure_future(
        client.protocol.send_request_async(
            "tokenGauge/chat", chat_params("gpt-4o", conversation()), msg_id=msg_id
        )
    )
    [request] = await upstream.wait_for_requests(1, route="chat")
    await asyncio.sleep(0.3)  # the stream is open and stalled
    cancelled_at = asyncio.get_running_loop().time()
    client.protocol.notify("$/cancelRequest", CancelParams(id=msg_id))
    seen = await request.wait_disconnected(5)
    assert seen - cancelled_at < 1.0
    with pytest.raises(JsonRpcException) as answer:  # LSP: a cancelled request still gets an answer
        await asyncio.wait_for(pending, 5)
    assert answer.value.code == -32800  # RequestCancelled


async def test_bad_chat_params(client: LanguageClient):
    with pytest.raises(JsonRpcException, match=r"modelOptions|temperature"):
        await chat(
            client, chat_params("gpt-4o", conversation(), modelOptions={"temperature": "hot"})
        )
    with pytest.raises(JsonRpcException, match="unknown model"):
        await chat(client, chat_params("nope", conversation()))
