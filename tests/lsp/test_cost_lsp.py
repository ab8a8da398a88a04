"""A chat with a priced model records its cost: in the ledger's history and `tokenGauge/usage`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Scripted, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, expect_notification, initialize
from tests.lsp.chat_helpers import PartLog, chat_options, chat_params, conversation, text_message

PRICING = {"inputPerMTok": 2.0, "outputPerMTok": 8.0, "cachedInputPerMTok": 1.0}


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """The server, wired to a fresh test upstream (`client.upstream`), one priced model."""
    async with running_upstream(UpstreamConfig()) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        models = [
            {"id": "acme-coder", "provider": "up-openai", "contextWindow": 32_000},
            {"id": "acme-priced", "provider": "up-openai", "pricing": PRICING},
        ]
        options = chat_options(str(tmp_path / "storage"), up.base_url, models=models)
        await initialize(lsp_client, options)
        yield
        await lsp_client.shutdown_session()


async def test_a_priced_chat_records_its_cost(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    question = "Please explain what this code does: " + "total = compute(x, y) + 1\n" * 40
    await call(client, "tokenGauge/chat", chat_params("acme-priced", conversation(question)))
    await call(client, "tokenGauge/chat", chat_params("acme-coder", conversation(question)))
    first, _ = upstream.model_requests
    expected = (first.prompt_tokens * 2.0 + first.output_tokens * 8.0) / 1e6
    usage = await call(client, "tokenGauge/usage", {})
    priced, unpriced = usage["history"]
    assert priced["modelId"] == "acme-priced"
    assert priced["costUsd"] == pytest.approx(expected)
    assert unpriced["modelId"] == "acme-coder" and unpriced["costUsd"] is None
    assert usage["costs"] == [
        {
            "modelId": "acme-priced",
            "totalUsd": pytest.approx(expected),
            "todayUsd": pytest.approx(expected),
            "requests": 1,
            "reportedUsd": 0.0,  # the test upstream states no cost: the price table's estimate
            "todayReportedUsd": 0.0,
        }
    ]
    assert usage["todayUsd"] == pytest.approx(expected)


async def test_the_dashboard_lists_every_chat_and_is_told_of_each(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    question = "Please explain what this code does: " + "total = compute(x, y) + 1\n" * 40
    told = expect_notification(client, "tokenGauge/activity")
    turn = [
        *conversation(question),
        text_message("assistant", "It adds."),
        text_message("user", "Why?"),
    ]
    await call(client, "tokenGauge/chat", chat_params("acme-priced", turn))
    await asyncio.wait_for(told, 30)
    upstream.script(Scripted(status=503), Scripted(status=401))  # one retry, then refused
    with pytest.raises(JsonRpcException):
        await call(client, "tokenGauge/chat", chat_params("acme-priced", conversation("again?")))
    answered, failed = (await call(client, "tokenGauge/dashboard", {}))["requests"]
    first, *_ = upstream.model_requests
    expected = (first.prompt_tokens * 2.0 + first.output_tokens * 8.0) / 1e6
    assert (answered["outcome"], answered["inputTokens"]) == ("answered", first.prompt_tokens)
    assert answered["costUsd"] == pytest.approx(expected) and answered["kind"] == "turn"
    assert (failed["outcome"], failed["retries"], failed["inputTokens"]) == ("failed", 1, None)
    assert "401" in failed["error"] and failed["costUsd"] is None
    data = await call(client, "tokenGauge/dashboard", {})
    assert data["totals"]["costUsd"] == pytest.approx(expected)
    assert data["totals"]["failed"] == 1
    priced = next(model for model in data["models"] if model["id"] == "acme-priced")
    assert priced["pricing"] == {
        "input": 2.0,
        "output": 8.0,
        "cachedInput": 1.0,
        "cacheWrite": None,
        "reasoning": None,
    }


async def test_what_the_cache_saved_is_recorded_and_shown(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    upstream.config.model.prompt_cache = True
    log: PartLog = client.part_log  # type: ignore[attr-defined]
    question = "Please explain what this code does: " + "total = compute(x, y) + 1\n" * 200
    turn = conversation(question)
    await call(client, "tokenGauge/chat", chat_params("acme-priced", turn))
    again = [*turn, text_message("assistant", "It adds."), text_message("user", "Why?")]
    await call(client, "tokenGauge/chat", chat_params("acme-priced", again))
    first, second = upstream.model_requests
    assert first.cached_tokens == 0 and second.cached_tokens  # the second read the first's prefix
    saved = second.cached_tokens * (2.0 - 1.0) / 1e6  # input less cached input, per million
    data = await call(client, "tokenGauge/dashboard", {})
    rows = data["requests"]
    assert [row["cachedTokens"] for row in rows] == [0, second.cached_tokens]
    assert rows[0]["cacheSavedUsd"] is None and rows[1]["cacheSavedUsd"] == pytest.approx(saved)
    assert data["totals"]["cacheSavedUsd"] == pytest.approx(saved)
    tooltip = log.statuses[-1]["tooltip"]
    share = round(second.cached_tokens / second.prompt_tokens * 100)
    assert f"| of which read from the cache | {second.cached_tokens:,} ({share}%) |" in tooltip
    assert "| saved by the cache (estimated) |" in tooltip


async def test_the_model_picker_is_told_the_prices_it_has(client: LanguageClient):
    models = {model["id"]: model for model in await call(client, "tokenGauge/models", {})}
    assert models["acme-priced"]["pricing"] == "$2.00 in, $1.00 cached, $8.00 out per 1M tokens"
    assert "pricing" not in models["acme-coder"]
