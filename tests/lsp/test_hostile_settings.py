"""Settings and listings that broke the server: over real LSP, every answer is JSON VS Code can
read (no NaN, no Infinity: its client stops a server that sends them), no internal error.

A listed price of 1e308 per token made every cost at it infinite, and the usage report and the
dashboard with it, for as long as the history kept the request; listed windows were unbounded;
`usageRetentionDays: 1e308` failed `initialize`; a base URL with an unclosed IPv6 bracket failed
discovery, the chat and the key check with internal errors; a provider id given twice silently
replaced the first entry.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol.types import MessageType
from pygls.exceptions import JsonRpcException

from tests.harness.fake_upstream.config import ListedModel, UpstreamConfig
from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import call, running_server
from tests.lsp.chat_helpers import API_KEY, chat_params, conversation
from tokengauge.activity.record import RequestRecord
from tokengauge.ledger.store import LEDGER_DIR, Ledger
from tokengauge.settings import MAX_TOKENS

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NOT_A_PRICE = {"prompt": "1e308", "completion": "0.000002"}
"""US dollars per token: per million tokens, beyond any float."""


async def answer(client: Any, method: str, params: Any) -> Any:
    """The request's result, checked to be JSON (Python reads `Infinity` and `NaN`, VS Code not)."""
    result = await asyncio.wait_for(call(client, method, params), 60)
    json.dumps(result, allow_nan=False)
    return result


def old_record(now: float) -> dict[str, Any]:
    """A request an older server kept with an infinite cost (JSON's `Infinity` on the disk)."""
    record = RequestRecord(now - 3_600, "openrouter/big", "turn", "answered", 900, 200_000, 180_000)
    return record.to_json() | {"costUsd": math.inf, "inputTokens": 1_000, "outputTokens": 10}


async def test_absurd_prices_and_windows_leave_every_answer_json(tmp_path: Path):
    storage = tmp_path / "storage"
    ledger = Ledger(storage / LEDGER_DIR)
    ledger.append_usage(old_record(time.time()))
    ledger.close()
    listed = [
        ListedModel(id="openrouter/big", context_window=10**18, max_output_tokens=10**18),
        ListedModel(id="openrouter/priced", context_window=65_536, pricing=NOT_A_PRICE),
        ListedModel(id="openrouter/tiny", context_window=3, max_output_tokens=2),
    ]
    config = UpstreamConfig(listing="openrouter", models=listed)
    async with running_upstream(config) as up:
        options = {
            "storageDir": str(storage),
            "providers": [{"id": "router", "dialect": "openai", "baseUrl": up.base_url + "/v1"}],
            "models": [
                {
                    "id": "set-priced",
                    "provider": "router",
                    "pricing": {"inputPerMTok": 1e308, "outputPerMTok": 1},
                }
            ],
            "connectTimeout": 2,
        }
        async with running_server(options) as client:
            credentials = {"router": {"apiKey": API_KEY}}
            await answer(client, "tokenGauge/discoverModels", {"credentials": credentials})
            models = {m["id"]: m for m in await answer(client, "tokenGauge/models", {})}
            for model in models.values():
                assert 0 < model["maxInputTokens"] <= MAX_TOKENS
                assert 0 < model["maxOutputTokens"] <= MAX_TOKENS
                assert model["contextWindow"] <= MAX_TOKENS
            assert "pricing" not in models["openrouter/priced"]
            # Not listed, as good as: the fallback window (a window of 3 left no output).
            assert models["openrouter/tiny"]["contextWindow"] == 32_768
            for model_id in ("openrouter/priced", "set-priced", "openrouter/big"):
                await answer(client, "tokenGauge/chat", chat_params(model_id, conversation()))
            usage = await answer(client, "tokenGauge/usage", {})
            # Only the model listed at a price that is one has a cost; the old request none.
            [cost] = usage["costs"]
            assert cost["modelId"] == "openrouter/big" and cost["requests"] == 1
            assert [r["costUsd"] is None for r in usage["history"]] == [True, True, True, False]
            dashboard = await answer(client, "tokenGauge/dashboard", {})
            assert len(dashboard["requests"]) == 4
            assert dashboard["totals"]["costUsd"] == pytest.approx(cost["totalUsd"])


async def test_settings_that_failed_requests_are_warned_about_and_served(tmp_path: Path):
    async with running_upstream() as up:
        options = {
            "storageDir": str(tmp_path / "storage"),
            "usageRetentionDays": 1e308,
            "providers": [
                {"id": "up", "dialect": "openai", "baseUrl": up.base_url + "/v1"},
                {"id": "bracket", "dialect": "openai", "baseUrl": "http://[::1"},
                {"id": "up", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1"},
            ],
            "models": [
                {"id": "acme-coder", "provider": "up", "contextWindow": 32_000},
                {"id": "bracketed", "provider": "bracket", "contextWindow": 32_000},
            ],
            "connectTimeout": 2,
        }
        async with running_server(options) as client:
            warnings = [m.message for m in client.log_messages if m.type == MessageType.Warning]
            assert any("providers[0] and providers[2] both have the id 'up'" in w for w in warnings)
            assert any("providers[1].baseUrl: it is not a URL" in w for w in warnings)
            keys = {"up": {"apiKey": API_KEY}, "bracket": {"apiKey": API_KEY}}
            found = await answer(client, "tokenGauge/discoverModels", {"credentials": keys})
            assert [p["providerId"] for p in found["providers"]] == ["up"]
            models = [m["id"] for m in await answer(client, "tokenGauge/models", {})]
            assert "bracketed" not in models
            params = chat_params("acme-coder", conversation())
            result = await answer(client, "tokenGauge/chat", params)
            assert result["finishReason"] == "stop" and len(up.model_requests) == 1
            with pytest.raises(JsonRpcException) as caught:
                await call(client, "tokenGauge/checkKey", {"providerId": "bracket", "apiKey": "k"})
            assert caught.value.code == INVALID_PARAMS
            assert "unknown provider 'bracket'" in caught.value.message
            with pytest.raises(JsonRpcException) as caught:
                provider = {"id": "Group", "baseUrl": "http://[::1/v1"}
                await call(client, "tokenGauge/addProvider", {"provider": provider, "apiKey": "k"})
            assert caught.value.code == INVALID_PARAMS
            assert "params.provider.baseUrl: it is not a URL" in caught.value.message
            dashboard = await answer(client, "tokenGauge/dashboard", {})
            assert dashboard["retentionDays"] == 3650 and len(dashboard["requests"]) == 1
