"""Model discovery: every provider shape we read, and how it merges into the catalog."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import pytest

from tests.harness.fake_upstream.config import ListedModel, UpstreamConfig
from tests.harness.fake_upstream.server import running_upstream
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.models.catalog import DiscoveredModel, ModelCatalog, from_documents, to_documents
from tokengauge.settings import ModelSettings, Pricing, ProviderSettings, ServerSettings
from tokengauge.upstream.discovery import (
    discover_models,
    litellm_sizes,
    ollama_context_length,
    parse_models_list,
)
from tokengauge.upstream.http import Timeouts, join_url, make_client, server_root


def test_openrouter_fragment_takes_the_serving_providers_window(wire: Path):
    entry = json.loads((wire / "models-openrouter-v1-models-fragment.json").read_text())
    [model] = parse_models_list({"data": [entry]})
    assert model == DiscoveredModel("qwen/qwen3-coder:free", None, 262_000, 262_000)


def test_llama_cpp_lists_its_models_own_window():
    """A real llama.cpp server's `/v1/models`: `meta.n_ctx_train` is the model's own window."""
    data = Path(__file__).parents[1] / "data" / "llamacpp" / "v1-models.json"
    [model] = parse_models_list(json.loads(data.read_text()))
    assert model.context_window == 8192


async def test_lm_studio_gives_each_models_own_window():
    config = UpstreamConfig(
        listing="lmstudio", models=[ListedModel(id="qwen3-8b", context_window=131_072)]
    )
    async with running_upstream(config) as up:
        provider = ProviderSettings("lm", preset="lmstudio", base_url=up.base_url + "/v1")
        async with make_client(Timeouts()) as client:
            [model] = await discover_models(client, provider, {})
    assert model.context_window == 131_072


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
        # 10^18 was offered to VS Code; a window of 2 or 3 tokens left 0 for output.
        pytest.param(
            {"id": "m", "context_length": 10**18, "max_tokens": 10**18},
            DiscoveredModel("m"),
            id="absurdly-large",
        ),
        pytest.param({"id": "m", "context_length": 3}, DiscoveredModel("m"), id="window-of-3"),
        pytest.param(
            {"id": "m", "context_length": 10**18, "top_provider": {"context_length": 65_536}},
            DiscoveredModel("m", None, 65_536),
            id="absurd-one-of-two",
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
    assert second.offer.model("m1").context_window == 8192
    assert from_documents(to_documents(models)) == models
    assert from_documents([{"id": "x", "bogus": 1}, "junk"]) == []


def test_openrouter_pricing_per_token_strings_become_per_million():
    entry = {
        "id": "anthropic/claude-sonnet-4.5",
        "pricing": {
            "prompt": "0.000003",
            "completion": "0.000015",
            "input_cache_read": "0.0000003",
            "input_cache_write": "0.00000375",
            "internal_reasoning": "0",
            "request": "0",
        },
    }
    [model] = parse_models_list({"data": [entry]})
    assert model.pricing == Pricing(
        input_per_m_tok=3.0,
        output_per_m_tok=15.0,
        cached_input_per_m_tok=0.3,
        cache_write_per_m_tok=3.75,
    )
    # A zero reasoning price is OpenRouter's way of billing reasoning as output.
    assert model.pricing is not None and model.pricing.reasoning_per_m_tok is None


@pytest.mark.parametrize(
    "pricing",
    [
        pytest.param({"prompt": "-1", "completion": "-1"}, id="variable-router"),
        pytest.param({"prompt": "0.000001"}, id="no-output-price"),
        pytest.param({"prompt": "cheap", "completion": "0.000002"}, id="not-a-number"),
        # Per million tokens, infinity: every cost at it, then the whole usage report, was not JSON.
        pytest.param({"prompt": "1e308", "completion": "0.000002"}, id="1e308"),
        pytest.param({"prompt": "0.000001", "completion": 1.0}, id="a-million-dollars"),
        pytest.param({"prompt": "nan", "completion": "0.000002"}, id="nan"),
        pytest.param("free", id="not-an-object"),
    ],
)
def test_openrouter_pricing_that_is_not_a_price_is_none(pricing: object):
    [model] = parse_models_list({"data": [{"id": "m", "pricing": pricing}]})
    assert model.pricing is None


def test_openrouter_reasoning_price_is_kept():
    prices = {"prompt": "0.000001", "completion": "0.000002", "internal_reasoning": "0.000004"}
    [model] = parse_models_list({"data": [{"id": "m", "pricing": prices}]})
    assert model.pricing == Pricing(
        input_per_m_tok=1.0, output_per_m_tok=2.0, reasoning_per_m_tok=4.0
    )


def test_litellm_model_info_prices():
    info = {
        "input_cost_per_token": 3e-06,
        "output_cost_per_token": 1.5e-05,
        "cache_read_input_token_cost": 3e-07,
        "cache_creation_input_token_cost": 3.75e-06,
    }
    [model] = litellm_sizes({"data": [{"model_name": "claude", "model_info": info}]}).values()
    assert model.pricing is not None
    assert attrs.astuple(model.pricing) == pytest.approx((3.0, 15.0, 0.3, 3.75, None))


def test_discovered_prices_are_kept_in_the_ledger_documents():
    pricing = Pricing(input_per_m_tok=1.0, output_per_m_tok=2.0, cached_input_per_m_tok=0.5)
    models = [DiscoveredModel("priced", None, 8192, 1024, pricing), DiscoveredModel("free-of")]
    documents = to_documents(models)
    assert "pricing" not in documents[1]
    assert from_documents(documents) == models
    # Documents from before prices were kept, and prices that are not prices.
    assert from_documents([{"id": "old", "name": None, "context_window": 8192}]) == [
        DiscoveredModel("old", None, 8192)
    ]
    bad = {"id": "m", "pricing": {"input_per_m_tok": -1.0, "output_per_m_tok": 2.0}}
    assert from_documents([bad, {"id": "n", "pricing": {"bogus": 1}}]) == [
        DiscoveredModel("m"),
        DiscoveredModel("n"),
    ]
    # Kept by a server before listings were bounded: forgotten, as a listing now leaves them out.
    infinite = {"input_per_m_tok": math.inf, "output_per_m_tok": 2.0}
    absurd = {"id": "m", "context_window": 10**18, "max_output_tokens": 2, "pricing": infinite}
    assert from_documents([absurd, {"id": 5}]) == [DiscoveredModel("m", None, None, 2)]


def test_prices_come_from_settings_then_discovery_then_the_builtin_table():
    configured = Pricing(input_per_m_tok=9.0, output_per_m_tok=9.0)
    listed = Pricing(input_per_m_tok=1.0, output_per_m_tok=2.0)
    settings = ServerSettings(
        providers=PROVIDERS,
        models=(ModelSettings("gpt-4o", "router", pricing=configured),),
    )
    discovered = {
        "router": [
            DiscoveredModel("gpt-4o", pricing=listed),
            DiscoveredModel("gpt-4.1", pricing=listed),
            DiscoveredModel("gpt-4o-mini"),
            DiscoveredModel("acme-7b"),
        ]
    }
    catalog = ModelCatalog.from_settings(settings, discovered)
    assert catalog.get("gpt-4o").pricing == configured
    assert catalog.get("gpt-4.1").pricing == listed
    builtin = catalog.get("gpt-4o-mini").pricing
    assert builtin is not None and builtin.input_per_m_tok == 0.15
    assert catalog.get("acme-7b").pricing is None
