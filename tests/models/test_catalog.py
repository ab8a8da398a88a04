"""Tests for tokengauge.models.catalog: configured models merged over the built-in table; the
catalog."""

from __future__ import annotations

import logging

import pytest

from tokengauge.counting.images import ImageRule
from tokengauge.models.catalog import (
    ASSUMPTIONS_WARNED,
    DiscoveredModel,
    ModelCatalog,
    ModelSpec,
    UnknownModelError,
    resolve_model,
)
from tokengauge.models.known import lookup_known_model
from tokengauge.settings import ModelSettings, Pricing, ProviderSettings, ServerSettings

LOGGER = "tokengauge.models.catalog"
OPENAI = ProviderSettings(id="openai", dialect="openai", base_url="https://api.openai.com/v1")
ANTHROPIC = ProviderSettings(
    id="anthropic", dialect="anthropic", base_url="https://api.anthropic.com"
)
OPENROUTER = ProviderSettings(id="openrouter", base_url="https://openrouter.ai/api/v1")


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING
    ]


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        pytest.param("gpt-4o", "GPT-4o", id="gpt-4o"),
        pytest.param("gpt-4o-mini-2024-07-18", "GPT-4o mini 2024-07-18", id="dated-snapshot"),
        pytest.param("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5 20250929", id="claude"),
        pytest.param("anthropic/claude-sonnet-4.5", "Claude Sonnet 4.5", id="gateway-prefix"),
        pytest.param("gemini-2.5-pro", "Gemini 2.5 Pro", id="gemini"),
        pytest.param("gpt-oss:20b", "gpt-oss-20b", id="ollama-tag"),
        pytest.param("o1-mini", "o1-mini", id="no-images"),
    ],
)
def test_known_model_fills_every_field(
    model_id: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    entry = lookup_known_model(model_id)
    assert entry is not None
    model = resolve_model(ModelSettings(id=model_id, provider="openai"), OPENAI)
    assert model.id == model_id
    assert model.name == name
    assert model.family == entry.family
    assert model.context_window == entry.context_window
    assert model.max_output_tokens == entry.max_output_tokens
    assert model.image_input is entry.image_input
    assert model.tool_calling is entry.tool_calling
    assert model.known is True
    assert model.provider is OPENAI
    assert model.reserved_output_tokens is None
    assert warnings_of(caplog) == []


def test_configured_fields_win() -> None:
    pricing = Pricing(input_per_m_tok=2.5, output_per_m_tok=10.0)
    config = ModelSettings(
        id="gpt-4o",
        provider="openai",
        name="My GPT",
        family="gpt-4o-custom",
        context_window=64_000,
        max_output_tokens=8_000,
        reserved_output_tokens=3_000,
        pricing=pricing,
    )
    model = resolve_model(config, OPENAI)
    assert (model.name, model.family) == ("My GPT", "gpt-4o-custom")
    assert (model.context_window, model.max_output_tokens) == (64_000, 8_000)
    assert model.reserved_output_tokens == 3_000
    assert model.pricing == pricing
    assert model.known is True


@pytest.mark.parametrize(
    ("configured", "listed", "name"),
    [
        pytest.param("Work Qwen", "Qwen 2.5 Coder (7B)", "Work Qwen", id="configured-wins"),
        pytest.param(None, "Qwen 2.5 Coder (7B)", "Qwen 2.5 Coder (7B)", id="listed-wins"),
        pytest.param(None, None, "Qwen2.5 Coder 7B", id="from-the-id"),
    ],
)
def test_name_configured_then_listed_then_from_the_id(
    configured: str | None, listed: str | None, name: str
) -> None:
    config = ModelSettings(id="qwen2.5-coder:7b", provider="openai", name=configured)
    model = resolve_model(config, OPENAI, DiscoveredModel("qwen2.5-coder:7b", name=listed))
    assert model.name == name


@pytest.mark.parametrize(
    ("configured", "window", "output"),
    [
        pytest.param({"context_window": 64_000}, 64_000, 16_384, id="window-only"),
        pytest.param({"max_output_tokens": 4_000}, 128_000, 4_000, id="output-only"),
        pytest.param({"context_window": 8_000}, 8_000, 7_999, id="window-below-known-output"),
        pytest.param({"max_output_tokens": 500_000}, 128_000, 127_999, id="output-above-window"),
    ],
)
def test_each_field_merges_on_its_own(configured: dict[str, int], window: int, output: int) -> None:
    known = lookup_known_model("gpt-4o")
    assert known is not None
    assert (known.context_window, known.max_output_tokens) == (128_000, 16_384)
    model = resolve_model(ModelSettings(id="gpt-4o", provider="openai", **configured), OPENAI)
    assert (model.context_window, model.max_output_tokens) == (window, output)
    assert model.family == known.family


def test_unknown_model_gets_conservative_defaults(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    model = resolve_model(ModelSettings(id="acme-brain-7", provider="openai"), OPENAI)
    assert model.context_window == 32_768
    assert model.max_output_tokens == 4_096
    assert model.known is False
    assert model.family == "acme-brain-7"
    assert model.encoding == "cl100k_base"
    assert model.name == "Acme Brain 7"
    assert model.image_input is False  # only where the table says so
    assert model.tool_calling is True
    [warning] = warnings_of(caplog)
    assert "acme-brain-7" in warning
    assert "32,768" in warning


def test_unknown_model_with_limits_is_not_warned(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    config = ModelSettings(
        id="acme-brain-7", provider="openai", context_window=100_000, max_output_tokens=9_000
    )
    model = resolve_model(config, OPENAI)
    assert (model.context_window, model.max_output_tokens) == (100_000, 9_000)
    assert model.known is False
    assert warnings_of(caplog) == []


def test_unknown_model_with_window_only_keeps_output_below_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    model = resolve_model(
        ModelSettings(id="acme-brain-7", provider="openai", context_window=2_000), OPENAI
    )
    assert model.context_window == 2_000
    assert model.max_output_tokens < 2_000
    assert len(warnings_of(caplog)) == 1


@pytest.mark.parametrize(
    ("model_id", "max_output"),
    [
        pytest.param("gpt-4o", 1_000_000, id="known-huge-output"),
        pytest.param("acme", 32_768, id="unknown-output-equals-fallback-window"),
        pytest.param("acme", 10**9, id="unknown-absurd-output"),
    ],
)
def test_max_output_always_below_window(model_id: str, max_output: int) -> None:
    model = resolve_model(
        ModelSettings(id=model_id, provider="openai", max_output_tokens=max_output), OPENAI
    )
    assert model.max_output_tokens < model.context_window


@pytest.mark.parametrize(
    ("provider", "model_id", "family", "rule"),
    [
        pytest.param(OPENAI, "gpt-4o", None, ImageRule.OPENAI, id="openai"),
        pytest.param(ANTHROPIC, "claude-sonnet-4-5", None, ImageRule.ANTHROPIC, id="anthropic"),
        pytest.param(
            ANTHROPIC, "my-proxy-model", None, ImageRule.ANTHROPIC, id="anthropic-dialect"
        ),
        pytest.param(
            OPENROUTER, "anthropic/claude-sonnet-4.5", None, ImageRule.ANTHROPIC, id="claude-family"
        ),
        pytest.param(OPENAI, "my-model", "claude-3.5-sonnet", ImageRule.ANTHROPIC, id="claude-cfg"),
        pytest.param(OPENROUTER, "google/gemini-2.5-pro", None, ImageRule.GEMINI, id="gemini"),
        pytest.param(OPENAI, "my-model", "gemini-2.0-flash", ImageRule.GEMINI, id="gemini-cfg"),
        pytest.param(OPENAI, "llama3.1:8b", None, ImageRule.OPENAI, id="llama"),
        pytest.param(OPENAI, "acme", None, ImageRule.OPENAI, id="unknown"),
    ],
)
def test_image_rule(
    provider: ProviderSettings, model_id: str, family: str | None, rule: ImageRule
) -> None:
    config = ModelSettings(id=model_id, provider=provider.id, family=family)
    assert resolve_model(config, provider).image_rule is rule


@pytest.mark.parametrize(
    ("model_id", "encoding"),
    [
        pytest.param("gpt-4o", "o200k_base", id="gpt-4o"),
        pytest.param("openai/gpt-5", "o200k_base", id="gpt-5"),
        pytest.param("o3-mini", "o200k_base", id="o3-mini"),
        pytest.param("gpt-4", "cl100k_base", id="gpt-4"),
        pytest.param("claude-sonnet-4-5", "cl100k_base", id="claude"),
    ],
)
def test_encoding_follows_family(model_id: str, encoding: str) -> None:
    model = resolve_model(ModelSettings(id=model_id, provider="openai"), OPENAI)
    assert model.encoding == encoding


# --- the catalog --------------------------------------------------------------------------------


def test_catalog_from_settings_skips_unknown_providers(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    settings = ServerSettings(
        providers=(OPENAI, ANTHROPIC),
        models=(
            ModelSettings(id="gpt-4o", provider="openai"),
            ModelSettings(
                id="ghost", provider="nowhere", context_window=1000, max_output_tokens=10
            ),
            ModelSettings(id="claude-sonnet-4-5", provider="anthropic"),
        ),
    )
    catalog = ModelCatalog.from_settings(settings)
    assert [m.id for m in catalog] == ["gpt-4o", "claude-sonnet-4-5"]
    assert len(catalog) == 2
    assert catalog.get("gpt-4o").provider is OPENAI
    assert catalog.get("claude-sonnet-4-5").provider is ANTHROPIC
    [warning] = warnings_of(caplog)
    assert "ghost" in warning
    assert "nowhere" in warning


def test_catalog_get_unknown_lists_configured_ids() -> None:
    catalog = ModelCatalog.from_settings(
        ServerSettings(
            providers=(OPENAI,),
            models=(
                ModelSettings(id="gpt-4o", provider="openai"),
                ModelSettings(id="gpt-4.1", provider="openai"),
            ),
        )
    )
    with pytest.raises(UnknownModelError) as caught:
        catalog.get("gpt-9")
    message = str(caught.value)
    assert "gpt-9" in message
    assert "gpt-4o" in message
    assert "gpt-4.1" in message
    assert caught.value.model_id == "gpt-9"
    assert isinstance(caught.value, LookupError)


def test_empty_catalog() -> None:
    catalog = ModelCatalog([])
    assert len(catalog) == 0
    assert list(catalog) == []
    with pytest.raises(UnknownModelError, match="none"):
        catalog.get("gpt-4o")


def test_catalog_keeps_spec_objects() -> None:
    model = ModelSpec(
        id="x", name="X", family="gpt-4o", provider=OPENAI, context_window=10, max_output_tokens=5
    )
    catalog = ModelCatalog([model])
    assert catalog.get("x") is model


def test_many_unknown_models_are_warned_about_in_a_few_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A listing of 100,000 models nobody described sent 100,000 warnings to VS Code's log."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    settings = ServerSettings(
        providers=(OPENAI,),
        models=tuple(ModelSettings(f"acme-brain-{i}", "openai") for i in range(50)),
    )
    catalog = ModelCatalog.from_settings(settings)
    assert [m.context_window for m in catalog] == [32_768] * 50
    warnings = warnings_of(caplog)
    assert len(warnings) == ASSUMPTIONS_WARNED + 1
    assert "acme-brain-0 is not in the built-in table" in warnings[0]
    assert warnings[-1].startswith(f"{50 - ASSUMPTIONS_WARNED} more models are not in the built-in")
