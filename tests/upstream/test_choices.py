"""The options VS Code's model picker may offer for a model, with their defaults."""

from __future__ import annotations

import pytest

from tokengauge.models.catalog import resolve_model
from tokengauge.protocol import Choice
from tokengauge.settings import ModelSettings, ProviderSettings
from tokengauge.upstream.choices import model_choices

OPENAI = ProviderSettings(id="openai", dialect="openai")
RESPONSES = ProviderSettings(id="gpt", dialect="responses")
ANTHROPIC = ProviderSettings(id="claude", dialect="anthropic")


def choices_of(model_id: str, provider: ProviderSettings, **settings: object):
    spec = resolve_model(ModelSettings(id=model_id, provider=provider.id, **settings), provider)  # type: ignore[arg-type]
    return model_choices(spec)


@pytest.mark.parametrize("provider", [OPENAI, RESPONSES])
def test_an_openai_reasoning_model_offers_its_efforts(provider: ProviderSettings):
    gpt5 = choices_of("gpt-5", provider)
    assert gpt5 is not None and gpt5.reasoning_effort == Choice(
        ["minimal", "low", "medium", "high"], "medium"
    )
    o3 = choices_of("o3", provider)
    assert o3 is not None and o3.reasoning_effort == Choice(["low", "medium", "high"], "medium")


def test_a_models_settings_are_the_default_and_plain_models_offer_only_tool_docs():
    high = choices_of("gpt-5", RESPONSES, options={"reasoningEffort": "high"})
    assert high is not None and high.reasoning_effort is not None
    assert high.reasoning_effort.default == "high"
    plain = choices_of("gpt-4o", OPENAI)
    assert plain is not None
    assert (plain.reasoning_effort, plain.thinking_budget, plain.context_size) == (None,) * 3
    assert choices_of("gpt-5-chat", OPENAI).reasoning_effort is None  # type: ignore[union-attr]


def test_tool_docs_default_to_the_models_setting():
    docs = Choice(["full", "progressive", "minimal"], "full")
    assert choices_of("gpt-4o", OPENAI).tool_docs == docs  # type: ignore[union-attr]
    progressive = choices_of("qwen3-coder", OPENAI, tool_docs="progressive", context_window=32768)
    assert progressive.tool_docs == Choice(docs.values, "progressive")  # type: ignore[union-attr]


def test_claude_offers_thinking_budgets_below_its_output_cap():
    sonnet = choices_of("claude-sonnet-4-5", ANTHROPIC, options={"thinkingBudget": 16384})
    assert sonnet is not None and sonnet.thinking_budget is not None
    assert sonnet.thinking_budget.values[0] == 0  # off
    assert sonnet.thinking_budget.default == 16384
    small = choices_of("claude-sonnet-4-5", ANTHROPIC, max_output_tokens=8192)
    assert small is not None and small.thinking_budget == Choice([0, 4096], 0)
    no_thinking = choices_of("claude-3-5-sonnet", ANTHROPIC)
    assert no_thinking is not None and no_thinking.thinking_budget is None


def test_a_window_over_200k_offers_the_smaller_tier():
    wide = choices_of("gpt-4.1", OPENAI)
    assert wide is not None and wide.context_size is not None
    assert wide.context_size.values[0] == 200_000
    assert wide.context_size.default == wide.context_size.values[1] > 200_000
    assert wide.reasoning_effort is None


@pytest.mark.parametrize(
    ("model_id", "preset", "efforts"),
    [
        pytest.param(
            "deepseek-v4-pro", "deepseek", Choice(["none", "low", "high", "max"], "high"), id="ds"
        ),
        pytest.param("deepseek-reasoner", "deepseek", None, id="old-reasoner-takes-none"),
        pytest.param("glm-5.3", "zai", Choice(["low", "high", "max"], "high"), id="glm-forced"),
        pytest.param("kimi-k2.5", "moonshot", Choice(["none", "high"], "high"), id="kimi-switch"),
        pytest.param(
            "anthropic/claude-sonnet-4.5",
            "openrouter",
            Choice(["minimal", "low", "medium", "high"], "medium"),
            id="openrouter-claude",
        ),
        pytest.param(
            "openai/gpt-5",
            "openrouter",
            Choice(["minimal", "low", "medium", "high"], "medium"),
            id="openrouter-gpt",
        ),
        pytest.param("meta-llama/llama-3.3-70b", "openrouter", None, id="openrouter-no-reasoning"),
        pytest.param(
            "gpt-5", "openai", Choice(["minimal", "low", "medium", "high"], "medium"), id="openai"
        ),
    ],
)
def test_a_chat_completions_server_offers_the_efforts_it_takes(
    model_id: str, preset: str, efforts: Choice[str] | None
):
    provider = ProviderSettings(id="p", preset=preset, dialect="openai", base_url="http://h/v1")
    offered = choices_of(model_id, provider)
    assert (offered.reasoning_effort if offered else None) == efforts
