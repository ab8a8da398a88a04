"""The names people know models by, made from their ids (`models.names.display_name`)."""

from __future__ import annotations

import pytest

from tokengauge.models.names import display_name


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        # the table's names, as their vendors write them
        pytest.param("gpt-4o", "GPT-4o", id="gpt-4o"),
        pytest.param("gpt-4.1-mini", "GPT-4.1 mini", id="gpt-4.1-mini"),
        pytest.param("o3", "o3", id="o3"),
        pytest.param("claude-sonnet-4-5", "Claude Sonnet 4.5", id="claude-sonnet-4.5"),
        pytest.param("claude-3-5-sonnet", "Claude Sonnet 3.5", id="claude-3.5-sonnet"),
        pytest.param("gemini-2.5-pro", "Gemini 2.5 Pro", id="gemini-2.5-pro"),
        pytest.param("deepseek-chat", "DeepSeek V3", id="deepseek-chat"),
        pytest.param("gpt-oss:20b", "gpt-oss-20b", id="gpt-oss-20b"),
        # with the words the id adds
        pytest.param("llama3.1:70b", "Llama 3.1 70B", id="ollama-size"),
        pytest.param("meta-llama/Llama-3.3-70B-Instruct", "Llama 3.3 70B Instruct", id="hf"),
        pytest.param("qwen2.5-coder:7b", "Qwen2.5 Coder 7B", id="qwen-coder"),
        pytest.param("qwen2.5:1.5b", "Qwen2.5 1.5B", id="decimal-size"),
        pytest.param("qwen3-30b-a3b", "Qwen3 30B A3B", id="active-size"),
        pytest.param(
            "qwen2.5-coder:7b-instruct-q4_K_M", "Qwen2.5 Coder 7B Instruct Q4_K_M", id="quant"
        ),
        pytest.param("gpt-4o-2024-08-06", "GPT-4o 2024-08-06", id="dated"),
        pytest.param("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5 20250929", id="dated-8"),
        pytest.param("qwen/qwen3-coder:free", "Qwen3 Coder (free)", id="openrouter-free"),
        pytest.param(
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "Claude Sonnet 4.5 20250929",
            id="bedrock",
        ),
        # words that add nothing
        pytest.param("qwen3:latest", "Qwen3", id="latest"),
        pytest.param("claude-3-5-haiku-latest", "Claude Haiku 3.5", id="latest-alias"),
        pytest.param("claude-opus-4-0", "Claude Opus 4", id="zero-minor"),
        pytest.param("anthropic/claude-sonnet-4.5", "Claude Sonnet 4.5", id="gateway"),
        # ids the table does not know: their words
        pytest.param("deepseek-r1:14b", "DeepSeek R1 14B", id="unknown-deepseek"),
        pytest.param(
            "mistralai/Mixtral-8x7B-Instruct-v0.1", "Mixtral 8x7B Instruct V0.1", id="moe"
        ),
        pytest.param("kimi-k2-instruct", "Kimi K2 Instruct", id="kimi"),
        pytest.param("glm-4-9b", "GLM 4 9B", id="glm"),
        pytest.param("gemma-2-9b-it", "Gemma 2 9B IT", id="gemma"),
        pytest.param("x-ai/grok-4", "Grok 4", id="grok"),
        # not clear: the id itself
        pytest.param("ft:gpt-4o-mini-2024-07-18:my-org::abc123", None, id="fine-tune"),
        pytest.param("my-model-7f3a9c2e", None, id="hash"),
        pytest.param("acme_brain+7", None, id="odd-characters"),
    ],
)
def test_display_name(model_id: str, name: str | None) -> None:
    assert display_name(model_id) == (name or model_id)
