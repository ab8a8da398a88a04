"""First contact: models and counts over a real stdio connection."""

from __future__ import annotations

from pytest_lsp import LanguageClient

from tests.harness.lsp import call


async def test_models_and_count(client: LanguageClient):
    models = await call(client, "tokenGauge/models", {})
    assert [m["id"] for m in models] == ["gpt-4o", "claude-sonnet-4-5", "local-small"]
    result = await call(
        client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["hello world"]}
    )
    assert result["raw"] == [2]
