"""A chat with a priced model records its cost: in the ledger's history and `tokenGauge/usage`."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import PartLog, chat_options, chat_params, conversation

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
    assert unpriced["modelId"] == "acme-coder" and "costUsd" not in unpriced
    assert usage["costs"] == [
        {
            "modelId": "acme-priced",
            "totalUsd": pytest.approx(expected),
            "todayUsd": pytest.approx(expected),
            "requests": 1,
        }
    ]
    assert usage["todayUsd"] == pytest.approx(expected)
