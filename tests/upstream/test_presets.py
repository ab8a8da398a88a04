"""upstream.presets: what each preset stands for, how an entry is resolved, and how a provider
without one is recognised as before."""

from __future__ import annotations

import logging

import pytest

from tokengauge.messages import InvalidInput
from tokengauge.settings import ProviderSettings
from tokengauge.upstream.dialects.dialect import provider_headers
from tokengauge.upstream.presets import PRESETS, auth_of, preset_of, resolve, resolve_all

KEY = "sk-preset-test-0123456789"


def test_the_presets_of_the_contract():
    table = {
        preset.id: (
            preset.label,
            preset.dialect,
            preset.base_url,
            preset.auth,
            preset.needs_key,
            preset.key_check,
            preset.sizing,
        )
        for preset in PRESETS.values()
    }
    assert table == {
        "openai": (
            "OpenAI",
            "openai",
            "https://api.openai.com/v1",
            "bearer",
            True,
            "models",
            "plain",
        ),
        "openai-responses": (
            "OpenAI, Responses API",
            "responses",
            "https://api.openai.com/v1",
            "bearer",
            True,
            "models",
            "plain",
        ),
        "anthropic": (
            "Anthropic",
            "anthropic",
            "https://api.anthropic.com",
            "x-api-key",
            True,
            "models",
            "plain",
        ),
        "openrouter": (
            "OpenRouter",
            "openai",
            "https://openrouter.ai/api/v1",
            "bearer",
            True,
            "key",
            "plain",
        ),
        "azure-openai": ("Azure OpenAI", "openai", None, "api-key", True, "models", "plain"),
        "deepseek": (
            "DeepSeek",
            "openai",
            "https://api.deepseek.com/v1",
            "bearer",
            True,
            "models",
            "plain",
        ),
        "gemini": (
            "Google Gemini (OpenAI-compatible API)",
            "openai",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            "bearer",
            True,
            "models",
            "plain",
        ),
        "moonshot": (
            "Moonshot Kimi",
            "openai",
            "https://api.moonshot.ai/v1",
            "bearer",
            True,
            "models",
            "plain",
        ),
        "zai": (
            "Z.ai GLM",
            "openai",
            "https://api.z.ai/api/paas/v4",
            "bearer",
            True,
            "models",
            "plain",
        ),
        "minimax": (
            "MiniMax",
            "openai",
            "https://api.minimax.io/v1",
            "bearer",
            True,
            "models",
            "plain",
        ),
        "groq": (
            "Groq",
            "openai",
            "https://api.groq.com/openai/v1",
            "bearer",
            True,
            "models",
            "plain",
        ),
        "ollama": (
            "Ollama",
            "openai",
            "http://localhost:11434/v1",
            "bearer",
            False,
            "models",
            "ollama",
        ),
        "lmstudio": (
            "LM Studio",
            "openai",
            "http://localhost:1234/v1",
            "bearer",
            False,
            "models",
            "lmstudio",
        ),
        "vllm": ("vLLM", "openai", "http://localhost:8000/v1", "bearer", False, "models", "vllm"),
        "llamacpp": (
            "llama.cpp",
            "openai",
            "http://localhost:8080/v1",
            "bearer",
            False,
            "models",
            "llamacpp",
        ),
        "litellm": (
            "LiteLLM proxy",
            "openai",
            "http://localhost:4000/v1",
            "bearer",
            True,
            "models",
            "litellm",
        ),
        "openai-compatible": (
            "Other OpenAI-compatible API",
            "openai",
            None,
            "bearer",
            False,
            "models",
            "plain",
        ),
    }


@pytest.mark.parametrize(
    ("entry", "dialect", "base_url"),
    [
        pytest.param(ProviderSettings(id="p"), "openai", "", id="no-preset"),
        pytest.param(
            ProviderSettings(id="p", preset="anthropic"),
            "anthropic",
            "https://api.anthropic.com",
            id="preset",
        ),
        pytest.param(
            ProviderSettings(id="p", preset="anthropic", dialect="openai"),
            "openai",
            "https://api.anthropic.com",
            id="own-dialect-wins",
        ),
        pytest.param(
            ProviderSettings(id="p", preset="openrouter", base_url="http://127.0.0.1:9/api/v1"),
            "openai",
            "http://127.0.0.1:9/api/v1",
            id="own-base-url-wins",
        ),
        pytest.param(
            ProviderSettings(
                id="p", preset="azure-openai", base_url="https://r.openai.azure.com/openai/v1"
            ),
            "openai",
            "https://r.openai.azure.com/openai/v1",
            id="azure-with-its-url",
        ),
    ],
)
def test_resolve(entry: ProviderSettings, dialect: str, base_url: str):
    resolved = resolve(entry)
    assert (resolved.dialect, resolved.base_url) == (dialect, base_url)
    assert resolved.preset == entry.preset


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param(
            ProviderSettings(id="p", preset="openia"),
            "provider p: unknown preset 'openia' (known: openai, openai-responses, "
            "anthropic, openrouter, azure-openai, deepseek, gemini, moonshot, zai, minimax, groq, "
            "ollama, lmstudio, vllm, llamacpp, litellm, openai-compatible)",
            id="unknown",
        ),
        pytest.param(
            ProviderSettings(id="p", preset="azure-openai"),
            "provider p: preset 'azure-openai' (Azure OpenAI) needs a baseUrl",
            id="azure-without-url",
        ),
        pytest.param(
            ProviderSettings(id="p", preset="openai-compatible"),
            "provider p: preset 'openai-compatible' (Other OpenAI-compatible API) needs a baseUrl",
            id="other-without-url",
        ),
    ],
)
def test_entries_that_cannot_be_resolved(entry: ProviderSettings, message: str, caplog):
    with pytest.raises(InvalidInput) as caught:
        resolve(entry)
    assert str(caught.value) == message
    with caplog.at_level(logging.WARNING, logger="tokengauge.upstream.presets"):
        kept = resolve_all([entry, ProviderSettings(id="q")])
    assert [provider.id for provider in kept] == ["q"]
    assert caplog.messages == [f"{message}: entry ignored"]


@pytest.mark.parametrize(
    ("entry", "preset"),
    [
        pytest.param(ProviderSettings(id="x", preset="vllm"), "vllm", id="named"),
        pytest.param(
            ProviderSettings(id="x", base_url="https://r.openai.azure.com/openai/deployments/d"),
            "azure-openai",
            id="azure-host",
        ),
        pytest.param(
            ProviderSettings(id="x", base_url="https://openrouter.ai/api/v1"),
            "openrouter",
            id="openrouter-host",
        ),
        pytest.param(
            ProviderSettings(id="ollama-gpu", base_url="http://gpu:80/v1"), "ollama", id="ollama-id"
        ),
        pytest.param(
            ProviderSettings(id="x", base_url="http://gpu:11434/v1"), "ollama", id="ollama-port"
        ),
        pytest.param(ProviderSettings(id="x", base_url="http://gpu:8000/v1"), None, id="unknown"),
        pytest.param(ProviderSettings(id="x", base_url="http://gpu:99999/v1"), None, id="bad-port"),
    ],
)
def test_preset_of_a_provider(entry: ProviderSettings, preset: str | None):
    found = preset_of(entry)
    assert (found.id if found else None) == preset


@pytest.mark.parametrize(
    ("entry", "auth", "sent"),
    [
        pytest.param(
            ProviderSettings(id="a", dialect="openai"),
            "bearer",
            {"Authorization": f"Bearer {KEY}"},
            id="bearer",
        ),
        pytest.param(
            ProviderSettings(id="a", dialect="anthropic"),
            "x-api-key",
            {"x-api-key": KEY},
            id="anthropic",
        ),
        pytest.param(
            ProviderSettings(
                id="a",
                dialect="openai",
                preset="azure-openai",
                base_url="https://x.example/openai/v1",
            ),
            "api-key",
            {"api-key": KEY},
            id="azure-by-preset",
        ),
        pytest.param(
            ProviderSettings(
                id="a", dialect="openai", base_url="https://r.openai.azure.com/openai"
            ),
            "api-key",
            {"api-key": KEY},
            id="azure-by-host",
        ),
    ],
)
def test_the_key_goes_where_the_api_wants_it(
    entry: ProviderSettings, auth: str, sent: dict[str, str]
):
    assert auth_of(entry) == auth
    headers = provider_headers(entry, KEY)
    key_headers = {name: value for name, value in headers.items() if KEY in value}
    assert key_headers == sent
    assert (
        provider_headers(entry, None).keys().isdisjoint({"Authorization", "x-api-key", "api-key"})
    )


def test_a_provider_header_cannot_replace_the_key():
    entry = ProviderSettings(id="a", dialect="openai", headers={"authorization": "Bearer other"})
    assert provider_headers(entry, KEY) == {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {KEY}",
    }
