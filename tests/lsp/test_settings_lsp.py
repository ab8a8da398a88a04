"""Settings that used to fail `initialize` or give impossible budgets, end to end."""

from __future__ import annotations

from pathlib import Path

from lsprotocol.types import MessageType

from tests.harness.fake_upstream.config import ListedModel, UpstreamConfig
from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import call, running_server


async def test_nan_and_negative_settings_start_a_server_with_sane_budgets(tmp_path: Path):
    options = {
        "storageDir": str(tmp_path / "storage"),
        "maxAttempts": float("nan"),  # the client's JSON encoder writes it as NaN
        "idleTimeout": float("inf"),
        "providers": [{"id": "local", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1"}],
        "models": [
            {"id": "neg-window", "provider": "local", "contextWindow": -8192},
            {
                "id": "neg-reserve",
                "provider": "local",
                "contextWindow": 8192,
                "maxOutputTokens": 1024,
                "reservedOutputTokens": -50_000,
            },
        ],
    }
    async with running_server(options) as client:
        models = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}
        warnings = [m.message for m in client.log_messages if m.type == MessageType.Warning]
    for model in models.values():
        assert 0 < model["maxInputTokens"] < model["contextWindow"]
        assert 0 < model["maxOutputTokens"] < model["contextWindow"]
    assert models["neg-reserve"]["maxInputTokens"] == 8192 - 1024
    assert any("maxAttempts" in w and "NaN" in w for w in warnings), warnings
    assert any("reservedOutputTokens must be from 0 to" in w for w in warnings), warnings


async def test_a_discovered_id_equal_to_a_configured_one_is_listed_once(tmp_path: Path):
    listed = [ListedModel(id="shared-model"), ListedModel(id="shared-model"), ListedModel(id="x")]
    async with running_upstream(UpstreamConfig(models=listed)) as up:
        options = {
            "storageDir": str(tmp_path / "storage"),
            "providers": [
                {"id": "a", "dialect": "openai", "baseUrl": up.url("/v1")},
                {"id": "b", "dialect": "openai", "baseUrl": up.url("/v1")},
            ],
            "models": [{"id": "shared-model", "provider": "a", "contextWindow": 16_000}],
        }
        async with running_server(options) as client:
            report = await call(client, "tokenGauge/discoverModels", {})
            ids = [m["id"] for m in await call(client, "tokenGauge/models", {})]
    assert sorted(ids) == ["shared-model", "x"]
    assert [p["models"] for p in report["providers"]] == [2, 2]
