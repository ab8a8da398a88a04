"""Tests for the built-in table of well-known models and its id matching."""

from __future__ import annotations

import pytest

from tokengauge.models.known import (
    KNOWN_MODELS,
    NAMES,
    KnownModel,
    lookup_known_model,
)


def _pattern_of(model_id: str) -> str | None:
    found = lookup_known_model(model_id)
    return None if found is None else found.pattern


@pytest.mark.parametrize(
    ("model_id", "pattern"),
    [
        # exact ids
        pytest.param("gpt-4o", "gpt-4o", id="exact"),
        pytest.param("claude-sonnet-4-5", "claude-sonnet-4-5", id="exact-anthropic"),
        pytest.param("gemini-2.5-pro", "gemini-2.5-pro", id="exact-gemini"),
        # case-insensitive
        pytest.param("GPT-4o", "gpt-4o", id="upper-case"),
        pytest.param("Claude-Sonnet-4-5", "claude-sonnet-4-5", id="mixed-case"),
        # gateway prefixes
        pytest.param("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", id="openrouter"),
        pytest.param("openai/gpt-5", "gpt-5", id="vercel"),
        pytest.param("openrouter/openai/gpt-4o-mini", "gpt-4o-mini", id="nested-prefix"),
        pytest.param("models/gemini-2.5-flash", "gemini-2.5-flash", id="gemini-api-name"),
        pytest.param("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3", id="hugging-face"),
        pytest.param("meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", "llama-3.1", id="meta-llama"),
        pytest.param(
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", id="bedrock-region"
        ),
        pytest.param(
            "anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet", id="bedrock"
        ),
        pytest.param("meta.llama3-1-70b-instruct-v1:0", "llama-3.1", id="bedrock-llama"),
        pytest.param("claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet", id="vertex-at"),
        # Ollama / OpenRouter tags
        pytest.param("qwen3:8b", "qwen3", id="ollama-qwen3"),
        pytest.param("qwen3:latest", "qwen3", id="ollama-latest"),
        pytest.param("llama3.1:70b", "llama-3.1", id="ollama-llama3.1"),
        pytest.param("llama3.2:3b", "llama-3.2", id="ollama-llama3.2"),
        pytest.param("llama3.2-vision:11b", "llama-3.2-vision", id="ollama-llama3.2-vision"),
        pytest.param("llama3.3:70b", "llama-3.3", id="ollama-llama3.3"),
        pytest.param("llama4:scout", "llama-4-scout", id="ollama-llama4-scout"),
        pytest.param("llama4:128x17b", "llama4-128x17b", id="ollama-llama4-size"),
        pytest.param("gpt-oss:20b", "gpt-oss-20b", id="ollama-gpt-oss-20b"),
        pytest.param("gpt-oss:120b", "gpt-oss-120b", id="ollama-gpt-oss-120b"),
        pytest.param("gpt-oss:latest", "gpt-oss", id="ollama-gpt-oss-latest"),
        pytest.param("qwen3-coder:30b", "qwen3-coder", id="ollama-qwen3-coder"),
        pytest.param("qwen2.5-coder:7b-instruct-q4_K_M", "qwen2.5-coder", id="ollama-quant-tag"),
        pytest.param("codestral:22b", "codestral-22b", id="ollama-codestral"),
        pytest.param("devstral:24b", "devstral", id="ollama-devstral"),
        pytest.param("qwen/qwen3-coder:free", "qwen3-coder", id="openrouter-free"),
        pytest.param("anthropic/claude-3.7-sonnet:thinking", "claude-3-7-sonnet", id="or-variant"),
        pytest.param("ft:gpt-4o-mini-2024-07-18:my-org::abc123", "gpt-4o-mini", id="fine-tune"),
        # "." and "-" between version digits, glued family names
        pytest.param("claude-sonnet-4.5", "claude-sonnet-4-5", id="dot-version"),
        pytest.param("claude-3.5-sonnet", "claude-3-5-sonnet", id="dot-version-old-order"),
        pytest.param("claude-3-5-haiku-latest", "claude-3-5-haiku", id="latest-alias"),
        pytest.param("gemini-2-5-pro", "gemini-2.5-pro", id="hyphen-version"),
        pytest.param("gpt-4-1-mini", "gpt-4.1-mini", id="hyphen-gpt"),
        pytest.param("llama-3.1-8b-instant", "llama-3.1", id="groq-llama"),
        pytest.param("qwen-2.5-coder-32b-instruct", "qwen2.5-coder", id="hyphenated-qwen"),
        pytest.param("Qwen/Qwen2.5-Coder-32B-Instruct", "qwen2.5-coder", id="hf-qwen"),
        pytest.param("llama-4-scout-17b-16e-instruct", "llama-4-scout", id="llama4-long-id"),
        # dated snapshots and suffixes
        pytest.param("gpt-4o-2024-08-06", "gpt-4o", id="snapshot-gpt-4o"),
        pytest.param("gpt-4o-2024-05-13", "gpt-4o-2024-05-13", id="snapshot-own-entry"),
        pytest.param("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", id="snapshot-sonnet"),
        pytest.param("claude-sonnet-4-20250514", "claude-sonnet-4", id="snapshot-sonnet-4"),
        pytest.param("claude-opus-4-1-20250805", "claude-opus-4-1", id="snapshot-opus-4.1"),
        pytest.param("claude-opus-4-0", "claude-opus-4", id="zero-minor-alias"),
        pytest.param("claude-3-opus-20240229", "claude-3-opus", id="snapshot-claude-3"),
        pytest.param("gpt-4-0613", "gpt-4", id="snapshot-gpt-4"),
        pytest.param("gpt-4-turbo-2024-04-09", "gpt-4-turbo", id="snapshot-gpt-4-turbo"),
        pytest.param("gpt-3.5-turbo-0125", "gpt-3.5-turbo", id="snapshot-gpt-3.5"),
        pytest.param("o3-mini-2025-01-31", "o3-mini", id="snapshot-o3-mini"),
        pytest.param("gpt-5-2025-08-07", "gpt-5", id="snapshot-gpt-5"),
        pytest.param("gpt-5-chat-latest", "gpt-5-chat", id="gpt-5-chat-latest"),
        pytest.param("gpt-5.1-codex-max", "gpt-5.1", id="gpt-5.1-codex"),
        pytest.param("gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash", id="gemini-preview"),
        pytest.param("gemini-2.0-flash-001", "gemini-2.0-flash", id="gemini-version-suffix"),
        pytest.param("gemini-3-pro-preview", "gemini-3-pro", id="gemini-3"),
        pytest.param("deepseek/deepseek-reasoner", "deepseek-reasoner", id="deepseek"),
        pytest.param("mistral-large-latest", "mistral-large", id="mistral-latest"),
        pytest.param("codestral-2501", "codestral", id="codestral-dated"),
        pytest.param("devstral-small-2507", "devstral-small", id="devstral-small-dated"),
        pytest.param("mistralai/devstral-2512", "devstral-2512", id="devstral-2"),
        pytest.param("devstral-small-2:24b", "devstral-small-2", id="devstral-small-2-ollama"),
    ],
)
def test_lookup_matches(model_id: str, pattern: str) -> None:
    assert _pattern_of(model_id) == pattern


@pytest.mark.parametrize(
    ("model_id", "pattern"),
    [
        pytest.param("gpt-4o-mini", "gpt-4o-mini", id="gpt-4o-mini-over-gpt-4o"),
        pytest.param("gpt-4.1-nano", "gpt-4.1-nano", id="gpt-4.1-nano-over-gpt-4.1"),
        pytest.param("gpt-4.1", "gpt-4.1", id="gpt-4.1-over-gpt-4"),
        pytest.param("gpt-4-turbo", "gpt-4-turbo", id="gpt-4-turbo-over-gpt-4"),
        pytest.param("o3-mini", "o3-mini", id="o3-mini-over-o3"),
        pytest.param("o1-mini", "o1-mini", id="o1-mini-over-o1"),
        pytest.param("gpt-5-mini", "gpt-5-mini", id="gpt-5-mini-over-gpt-5"),
        pytest.param("gpt-5.1", "gpt-5.1", id="gpt-5.1-over-gpt-5"),
        pytest.param("claude-opus-4-5", "claude-opus-4-5", id="opus-4.5-over-opus-4"),
        pytest.param("gemini-2.5-flash-lite", "gemini-2.5-flash-lite", id="flash-lite-over-flash"),
        pytest.param("qwen3-coder-480b-a35b-instruct", "qwen3-coder", id="qwen3-coder-over-qwen3"),
        pytest.param("qwen2.5-coder", "qwen2.5-coder", id="qwen2.5-coder-over-qwen2.5"),
        pytest.param("devstral-2512", "devstral-2512", id="devstral-2512-over-devstral"),
        pytest.param("codestral-2405", "codestral-2405", id="codestral-2405-over-codestral"),
    ],
)
def test_longest_pattern_wins(model_id: str, pattern: str) -> None:
    assert _pattern_of(model_id) == pattern


@pytest.mark.parametrize(
    "model_id",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("my-custom-model", id="unknown"),
        pytest.param("text-embedding-3-small", id="embedding-model"),
        pytest.param("gpt-4.5-preview", id="other-minor-gpt-4"),
        pytest.param("gpt-5.4", id="other-minor-gpt-5"),
        pytest.param("claude-opus-4-8", id="other-minor-claude"),
        pytest.param("claude-sonnet-5-5", id="other-minor-sonnet-5"),
        pytest.param("qwen3.5:27b", id="other-minor-qwen3"),
        pytest.param("gpt-4o1", id="no-separator-after-pattern"),
        pytest.param("o3x", id="no-separator-after-short-pattern"),
        pytest.param("foo/bar:baz", id="unknown-with-prefix-and-tag"),
    ],
)
def test_unknown_returns_none(model_id: str) -> None:
    assert lookup_known_model(model_id) is None


@pytest.mark.parametrize("model", KNOWN_MODELS, ids=lambda m: m.pattern)
def test_table_entry_is_sane(model: KnownModel) -> None:
    assert model.pattern == model.pattern.lower().strip()
    assert model.family == model.family.lower().strip()
    vendors = {"openai", "anthropic", "google", "deepseek", "moonshot", "zhipu", "minimax"}
    assert model.vendor in vendors | {"qwen", "meta", "mistral"}
    assert model.max_output_tokens > 0
    assert model.context_window > 0
    assert model.max_output_tokens < model.context_window


@pytest.mark.parametrize("model", KNOWN_MODELS, ids=lambda m: m.pattern)
def test_every_pattern_finds_its_own_entry(model: KnownModel) -> None:
    # Also proves patterns are unique after normalisation ("claude-3.5" == "claude-3-5").
    assert lookup_known_model(model.pattern) is model


def test_patterns_are_unique() -> None:
    patterns = [m.pattern for m in KNOWN_MODELS]
    assert len(patterns) == len(set(patterns))


@pytest.mark.parametrize(
    ("model_id", "context_window", "max_output_tokens"),
    [
        # developers.openai.com/api/docs/models/*
        pytest.param("gpt-5-nano", 400_000, 128_000, id="gpt-5-nano"),
        pytest.param("gpt-4.1-nano", 1_047_576, 32_768, id="gpt-4.1-nano"),
        pytest.param("gpt-4o", 128_000, 16_384, id="gpt-4o"),
        pytest.param("gpt-4", 8_192, 4_096, id="gpt-4"),
        pytest.param("gpt-oss:120b", 131_072, 32_768, id="gpt-oss-120b"),
        # platform.claude.com model pages
        pytest.param("claude-sonnet-4-5", 200_000, 64_000, id="claude-sonnet-4.5"),
        pytest.param("claude-opus-4-5", 200_000, 64_000, id="claude-opus-4.5"),
        pytest.param("claude-opus-4-6", 1_000_000, 128_000, id="claude-opus-4.6"),
        pytest.param("claude-haiku-4-5", 200_000, 64_000, id="claude-haiku-4.5"),
        pytest.param("claude-3-opus-20240229", 200_000, 4_096, id="claude-3-opus"),
        # ai.google.dev model pages
        pytest.param("gemini-2.5-flash-lite", 1_048_576, 65_536, id="gemini-2.5-flash-lite"),
        pytest.param("gemini-2.0-flash-lite", 1_048_576, 8_192, id="gemini-2.0-flash-lite"),
        pytest.param("gemini-3-pro-preview", 1_048_576, 65_536, id="gemini-3-pro"),
        # api-docs.deepseek.com (via LiteLLM)
        pytest.param("deepseek-chat", 131_072, 8_192, id="deepseek-chat"),
        pytest.param("deepseek-reasoner", 131_072, 65_536, id="deepseek-reasoner"),
        # Qwen model cards
        pytest.param("qwen3:8b", 40_960, 32_768, id="qwen3"),
        pytest.param("qwen3-coder:30b", 262_144, 65_536, id="qwen3-coder"),
        # Meta Llama API (via LiteLLM)
        pytest.param("llama-4-scout", 10_000_000, 4_028, id="llama-4-scout"),
    ],
)
def test_verified_figures(model_id: str, context_window: int, max_output_tokens: int) -> None:
    model = lookup_known_model(model_id)
    assert model is not None
    assert (model.context_window, model.max_output_tokens) == (context_window, max_output_tokens)


@pytest.mark.parametrize(
    ("model_id", "family", "vendor", "image_input", "tool_calling"),
    [
        pytest.param("gpt-4o-2024-08-06", "gpt-4o", "openai", True, True, id="gpt-4o"),
        pytest.param("o3-mini", "o3-mini", "openai", False, True, id="o3-mini"),
        pytest.param("o1-mini", "o1-mini", "openai", False, False, id="o1-mini"),
        pytest.param(
            "claude-sonnet-4.5", "claude-sonnet-4.5", "anthropic", True, True, id="sonnet-4.5"
        ),
        pytest.param("gpt-oss:20b", "gpt-oss-20b", "openai", False, True, id="gpt-oss"),
        pytest.param("qwen3:8b", "qwen3", "qwen", False, True, id="qwen3"),
        pytest.param("llama3.2-vision", "llama-3.2-vision", "meta", True, False, id="llama-vision"),
    ],
)
def test_family_vendor_and_capabilities(
    model_id: str, family: str, vendor: str, image_input: bool, tool_calling: bool
) -> None:
    model = lookup_known_model(model_id)
    assert model is not None
    assert (model.family, model.vendor, model.image_input, model.tool_calling) == (
        family,
        vendor,
        image_input,
        tool_calling,
    )


def test_known_model_is_frozen() -> None:
    model = KNOWN_MODELS[0]
    with pytest.raises(AttributeError):
        model.context_window = 1  # type: ignore[misc]


def test_every_entry_has_a_name_and_every_name_an_entry() -> None:
    assert set(NAMES) == {m.pattern for m in KNOWN_MODELS}
    assert all(m.name == NAMES[m.pattern] and m.name.strip() == m.name for m in KNOWN_MODELS)
