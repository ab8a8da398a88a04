"""Model discovery: every provider shape we read, and how it merges into the catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.models.catalog import DiscoveredModel, ModelCatalog, from_documents, to_documents
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings
from tokengauge.upstream.discovery import litellm_sizes, ollama_context_length, parse_models_list
from tokengauge.upstream.http import join_url, server_root


def test_openrouter_fragment_takes_the_serving_providers_window(wire: Path):
    entry = json.loads((wire / "models-openrouter-v1-models-fragment.json").read_text())
    [model] = parse_models_list({"data": [entry]})
    assert model == DiscoveredModel("qwen/qwen3-coder:free", None, 262_000, 262_000)


def test_ollama_show_fixture(wire: Path):
    show = json.loads((wire / "models-ollama-api-show-gpt-oss.json").read_text())
    assert ollama_context_length(show) == 131_072


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        pytest.param({"id": "gpt-4o", "object": "model"}, DiscoveredModel("gpt-4o"), id="openai"),
        pytest.param(
            {
                "id": "zai/glm-5.2",
                "name": "GLM 5.2",
                "context_window": 1_000_000,
                "max_tokens": 128_000,
            },
            DiscoveredModel("zai/glm-5.2", "GLM 5.2", 1_000_000, 128_000),
            id="vercel",
        ),
        pytest.param(
            {"id": "m", "max_model_len": 32_768}, DiscoveredModel("m", None, 32_768), id="vllm"
        ),
        pytest.param(
            {"id": "m", "context_length": True, "max_tokens": -5}, DiscoveredModel("m"), id="junk"
        ),
    ],
)
def test_model_entry_shapes(entry: dict, expected: DiscoveredModel):
    assert parse_models_list({"data": [entry]}) == [expected]


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(None, id="none"),
        pytest.param({"data": 3}, id="data-not-list"),
        pytest.param([{"no": "id"}, 5], id="bad-entries"),
    ],
)
def test_bad_lists_give_nothing(payload: object):
    assert parse_models_list(payload) == []


def test_litellm_model_info():
    payload = {
        "data": [
            {
                "model_name": "claude",
                "model_info": {"max_input_tokens": 200_000, "max_output_tokens": 64_000},
            },
            {"model_name": "legacy", "model_info": {"max_tokens": 4096}},
            {"model_name": 5},
        ]
    }
    assert litellm_sizes(payload) == {
        "claude": DiscoveredModel("claude", None, 200_000, 64_000),
        "legacy": DiscoveredModel("legacy", None, None, 4096),
    }


@pytest.mark.parametrize(
    ("base", "path", "expected"),
    [
        pytest.param("http://h:1/v1", "models", "http://h:1/v1/models", id="plain"),
        pytest.param("http://h:1/v1/", "models", "http://h:1/v1/models", id="slash"),
        pytest.param(
            "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
            "chat/completions",
            "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
            id="azure-query",
        ),
    ],
)
def test_join_url(base: str, path: str, expected: str):
    assert join_url(base, path) == expected


def test_server_root():
    assert server_root("http://localhost:11434/v1") == "http://localhost:11434"
    assert server_root("http://proxy:4000/") == "http://proxy:4000"


PROVIDERS = (
    ProviderSettings(id="router", base_url="http://127.0.0.1:9/v1"),
    ProviderSettings(id="quiet", base_url="http://127.0.0.1:9/v1", discover=False),
)


def test_catalog_precedence_configured_then_discovered_then_builtin():
    settings = ServerSettings(
        providers=PROVIDERS,
        models=(
            ModelSettings(id="gpt-4o", provider="router", context_window=50_000),
            ModelSettings(id="claude-sonnet-4-5", provider="router"),
        ),
    )
    discovered = {
        "router": [
            DiscoveredModel("gpt-4o", None, 128_000, 16_384),
            DiscoveredModel("claude-sonnet-4-5", "Sonnet", 150_000, None),
            DiscoveredModel("new-model", "New", 20_000, 2_000),
        ],
        "quiet": [DiscoveredModel("hidden", None, 10_000, 1_000)],
    }
    catalog = ModelCatalog.from_settings(settings, discovered)
    assert catalog.get("gpt-4o").context_window == 50_000  # configured wins
    assert catalog.get("gpt-4o").max_output_tokens == 16_384  # discovered fills the gap
    sonnet = catalog.get("claude-sonnet-4-5")
    assert (sonnet.name, sonnet.context_window) == ("Sonnet", 150_000)
    assert sonnet.max_output_tokens == 64_000  # built-in table
    assert catalog.get("new-model").context_window == 20_000
    assert [m.id for m in catalog] == ["gpt-4o", "claude-sonnet-4-5", "new-model"]


def test_discovery_is_kept_in_the_ledger(tmp_path: Path):
    settings = ServerSettings(providers=PROVIDERS)
    first = Gauge(settings, Ledger(tmp_path / "ledger"))
    models = [DiscoveredModel("m1", "M1", 8192, 1024)]
    assert first.apply_discovery("router", models) is True
    assert first.apply_discovery("router", models) is False
    first.ledger.close()
    second = Gauge(settings, Ledger(tmp_path / "ledger"))
    assert second.model("m1").context_window == 8192
    assert from_documents(to_documents(models)) == models
    assert from_documents([{"id": "x", "bogus": 1}, "junk"]) == []
