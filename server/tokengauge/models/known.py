"""A built-in table of well-known LLM models: context windows, output caps and capabilities.

When a provider's model list does not say how large a model's context is, tokengauge falls back
to this table so it can still tell Copilot Chat a sensible `maxInputTokens`. `lookup_known_model`
accepts ids the way users and gateways spell them:

* case-insensitive;
* a gateway prefix up to the last "/" is dropped ("openrouter/anthropic/claude-sonnet-4.5",
  "openai/gpt-5", "models/gemini-2.5-pro"), and so is a Bedrock prefix
  ("us.anthropic.claude-...", "meta.llama3-1-70b-instruct-v1:0");
* an Ollama / OpenRouter tag after ":" ("qwen3:8b", "gpt-oss:20b", "qwen/qwen3-coder:free") is
  tried joined to the name first ("gpt-oss-20b") and then dropped ("qwen3");
* "." and "-" are interchangeable ("claude-3.5-sonnet" == "claude-3-5-sonnet"), and "llama",
  "qwen" and "gpt" may be glued to their version ("llama3.1" == "llama-3.1");
* a pattern matches an id that starts with it and continues with a separator, so dated snapshots
  and size suffixes match their base ("gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929",
  "qwen3-8b") -- but a different minor version does not ("gpt-4.5" is not "gpt-4",
  "claude-opus-4-8" is not "claude-opus-4"; a "-0" minor is the same version: "claude-opus-4-0");
* the longest matching pattern wins ("gpt-4o-mini" beats "gpt-4o", "o3-mini" beats "o3").

`context_window` is the total the model accepts (input + output); where a vendor only publishes an
input limit (Gemini) that limit is used, which under-states the total slightly -- the safe side.
Every entry keeps `max_output_tokens < context_window`, so `context_window - max_output_tokens` is
always a usable input budget; where a vendor documents an output cap equal to the whole window the
entry records a smaller, sourced cap and says so.
"""

from __future__ import annotations

import functools
import re
from typing import Final

import attrs


@attrs.frozen
class KnownModel:
    """Published name, limits and capabilities of one model family, keyed by an id prefix."""

    pattern: str  # lower-case id prefix this entry matches, e.g. "gpt-4o-mini"
    name: str  # the name people know it by, e.g. "GPT-4o mini" (`NAMES`)
    family: str  # family name reported to VS Code, e.g. "claude-sonnet-4.5"
    vendor: str  # "openai" | "anthropic" | "google" | "deepseek" | "qwen" | "meta" | "mistral"
    context_window: int  # total tokens (input + output) the model accepts
    max_output_tokens: int  # the model's output cap
    image_input: bool  # accepts images
    tool_calling: bool
    reasoning: str | None = None
    """Whose rule its reasoning follows over Chat Completions (`upstream.dialects.openai.
    reasoning_rules`: deepseek, deepseek-r1, kimi, glm, minimax, gemini, qwen); None: none known."""


NAMES: Final[dict[str, str]] = {
    "gpt-5": "GPT-5",
    "gpt-5-mini": "GPT-5 mini",
    "gpt-5-nano": "GPT-5 nano",
    "gpt-5-pro": "GPT-5 pro",
    "gpt-5-chat": "GPT-5 Chat",
    "gpt-5.1": "GPT-5.1",
    "gpt-5.1-chat": "GPT-5.1 Chat",
    "gpt-5.2": "GPT-5.2",
    "gpt-5.2-chat": "GPT-5.2 Chat",
    "gpt-4.1": "GPT-4.1",
    "gpt-4.1-mini": "GPT-4.1 mini",
    "gpt-4.1-nano": "GPT-4.1 nano",
    "gpt-4o": "GPT-4o",
    "gpt-4o-2024-05-13": "GPT-4o (2024-05-13)",
    "gpt-4o-mini": "GPT-4o mini",
    "o1": "o1",
    "o1-mini": "o1-mini",
    "o1-preview": "o1-preview",
    "o3": "o3",
    "o3-mini": "o3-mini",
    "o4-mini": "o4-mini",
    "gpt-4-turbo": "GPT-4 Turbo",
    "gpt-4": "GPT-4",
    "gpt-3.5-turbo": "GPT-3.5 Turbo",
    "gpt-oss": "gpt-oss",
    "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
    "claude-opus-5-5": "Claude Opus 5.5",
    "claude-opus-5": "Claude Opus 5",
    "claude-sonnet-5": "Claude Sonnet 5",
    "claude-opus-4-7": "Claude Opus 4.7",
    "claude-opus-4-6": "Claude Opus 4.6",
    "claude-sonnet-4-6": "Claude Sonnet 4.6",
    "claude-opus-4-5": "Claude Opus 4.5",
    "claude-sonnet-4-5": "Claude Sonnet 4.5",
    "claude-haiku-4-5": "Claude Haiku 4.5",
    "claude-opus-4-1": "Claude Opus 4.1",
    "claude-opus-4": "Claude Opus 4",
    "claude-sonnet-4": "Claude Sonnet 4",
    "claude-3-7-sonnet": "Claude Sonnet 3.7",
    "claude-3-5-sonnet": "Claude Sonnet 3.5",
    "claude-3-5-haiku": "Claude Haiku 3.5",
    "claude-3-opus": "Claude Opus 3",
    "claude-3-haiku": "Claude Haiku 3",
    "gemini-3.1-pro": "Gemini 3.1 Pro",
    "gemini-3-pro": "Gemini 3 Pro",
    "gemini-3-flash": "Gemini 3 Flash",
    "gemini-2.5-pro": "Gemini 2.5 Pro",
    "gemini-2.5-flash": "Gemini 2.5 Flash",
    "gemini-2.5-flash-lite": "Gemini 2.5 Flash-Lite",
    "gemini-2.0-flash": "Gemini 2.0 Flash",
    "gemini-2.0-flash-lite": "Gemini 2.0 Flash-Lite",
    "deepseek-v4-pro": "DeepSeek V4 Pro",
    "deepseek-v4-flash": "DeepSeek V4 Flash",
    "deepseek-flash": "DeepSeek Flash",
    "deepseek-chat": "DeepSeek V3",
    "deepseek-reasoner": "DeepSeek R1",
    "kimi-k2-thinking": "Kimi K2 Thinking",
    "kimi-k2.5": "Kimi K2.5",
    "kimi-k2.6": "Kimi K2.6",
    "glm-4.5": "GLM-4.5",
    "glm-4.6": "GLM-4.6",
    "glm-4.7": "GLM-4.7",
    "glm-5": "GLM-5",
    "glm-5.1": "GLM-5.1",
    "glm-5.2": "GLM-5.2",
    "glm-5.3": "GLM-5.3",
    "minimax-m2": "MiniMax-M2",
    "minimax-m2.1": "MiniMax-M2.1",
    "minimax-m2.5": "MiniMax-M2.5",
    "minimax-m2.7": "MiniMax-M2.7",
    "qwen3": "Qwen3",
    "qwen3-coder": "Qwen3 Coder",
    "qwen2.5": "Qwen2.5",
    "qwen2.5-coder": "Qwen2.5 Coder",
    "llama-3.1": "Llama 3.1",
    "llama-3.2": "Llama 3.2",
    "llama-3.2-vision": "Llama 3.2 Vision",
    "llama-3.2-11b-vision": "Llama 3.2 11B Vision",
    "llama-3.2-90b-vision": "Llama 3.2 90B Vision",
    "llama-3.3": "Llama 3.3",
    "llama-4-scout": "Llama 4 Scout",
    "llama4-16x17b": "Llama 4 Scout",
    "llama-4-maverick": "Llama 4 Maverick",
    "llama4-128x17b": "Llama 4 Maverick",
    "mistral-large": "Mistral Large",
    "codestral": "Codestral",
    "codestral-2405": "Codestral (2405)",
    "codestral-22b": "Codestral 22B",
    "devstral": "Devstral",
    "devstral-small": "Devstral Small",
    "devstral-medium": "Devstral Medium",
    "devstral-2": "Devstral 2",
    "devstral-2512": "Devstral 2 (2512)",
    "devstral-small-2": "Devstral Small 2",
    "devstral-small-2512": "Devstral Small 2 (2512)",
}
"""Each entry's name as its vendor writes it (OpenAI: "GPT-4o mini", "o3"; Anthropic's current
order: "Claude Sonnet 3.7"); the table's rows take theirs from here."""


def _M(
    pattern: str,
    family: str,
    vendor: str,
    context_window: int,
    max_output_tokens: int,
    image_input: bool,
    tool_calling: bool,
    reasoning: str | None = None,
) -> KnownModel:
    """One row of the table, named from `NAMES`."""
    return KnownModel(
        pattern,
        NAMES[pattern],
        family,
        vendor,
        context_window,
        max_output_tokens,
        image_input,
        tool_calling,
        reasoning,
    )


# Columns: pattern, family, vendor, context_window, max_output_tokens, image_input, tool_calling.
KNOWN_MODELS: Final[tuple[KnownModel, ...]] = (
    # --- OpenAI -------------------------------------------------------------------------------
    # developers.openai.com/api/docs/models/<id> ("N context window", "N max output tokens");
    # gpt-5-pro / gpt-5.x-chat from models.dev (anomalyco/models.dev providers/openai), o1-mini
    # likewise. gpt-4: the vendor page says 8,192 window AND 8,192 output (the output may use the
    # whole window); LiteLLM's 4,096 cap is recorded so an input budget remains. gpt-oss: the
    # vendor page says 131,072 / 131,072; the 32,768 cap is models.dev's (and LiteLLM/Cerebras').
    _M("gpt-5", "gpt-5", "openai", 400_000, 128_000, True, True),
    _M("gpt-5-mini", "gpt-5-mini", "openai", 400_000, 128_000, True, True),
    _M("gpt-5-nano", "gpt-5-nano", "openai", 400_000, 128_000, True, True),
    _M("gpt-5-pro", "gpt-5-pro", "openai", 400_000, 272_000, True, True),
    _M("gpt-5-chat", "gpt-5-chat", "openai", 128_000, 16_384, True, True),
    _M("gpt-5.1", "gpt-5.1", "openai", 400_000, 128_000, True, True),
    _M("gpt-5.1-chat", "gpt-5.1-chat", "openai", 128_000, 16_384, True, True),
    _M("gpt-5.2", "gpt-5.2", "openai", 400_000, 128_000, True, True),
    _M("gpt-5.2-chat", "gpt-5.2-chat", "openai", 128_000, 16_384, True, True),
    _M("gpt-4.1", "gpt-4.1", "openai", 1_047_576, 32_768, True, True),
    _M("gpt-4.1-mini", "gpt-4.1-mini", "openai", 1_047_576, 32_768, True, True),
    _M("gpt-4.1-nano", "gpt-4.1-nano", "openai", 1_047_576, 32_768, True, True),
    _M("gpt-4o", "gpt-4o", "openai", 128_000, 16_384, True, True),
    _M("gpt-4o-2024-05-13", "gpt-4o", "openai", 128_000, 4_096, True, True),
    _M("gpt-4o-mini", "gpt-4o-mini", "openai", 128_000, 16_384, True, True),
    _M("o1", "o1", "openai", 200_000, 100_000, True, True),
    _M("o1-mini", "o1-mini", "openai", 128_000, 65_536, False, False),
    _M("o1-preview", "o1-preview", "openai", 128_000, 32_768, False, False),
    _M("o3", "o3", "openai", 200_000, 100_000, True, True),
    _M("o3-mini", "o3-mini", "openai", 200_000, 100_000, False, True),
    _M("o4-mini", "o4-mini", "openai", 200_000, 100_000, True, True),
    _M("gpt-4-turbo", "gpt-4-turbo", "openai", 128_000, 4_096, True, True),
    _M("gpt-4", "gpt-4", "openai", 8_192, 4_096, False, True),
    _M("gpt-3.5-turbo", "gpt-3.5-turbo", "openai", 16_385, 4_096, False, True),
    _M("gpt-oss", "gpt-oss", "openai", 131_072, 32_768, False, True),
    _M("gpt-oss-20b", "gpt-oss-20b", "openai", 131_072, 32_768, False, True),
    _M("gpt-oss-120b", "gpt-oss-120b", "openai", 131_072, 32_768, False, True),
    # --- Anthropic ----------------------------------------------------------------------------
    # platform.claude.com/docs/en/models/<model>/overview and the models overview table;
    # Claude 4.0/4.1/3.x output caps cross-checked in LiteLLM. Standard (non-beta) windows: 200K,
    # except the models whose 1M window is generally available without a beta header
    # (Opus 4.6 / Sonnet 4.6 since 2026-03-13, Opus 4.7, and the 5.x models).
    _M("claude-opus-5-5", "claude-opus-5.5", "anthropic", 1_000_000, 128_000, True, True),
    _M("claude-opus-5", "claude-opus-5", "anthropic", 1_000_000, 128_000, True, True),
    _M("claude-sonnet-5", "claude-sonnet-5", "anthropic", 1_000_000, 128_000, True, True),
    _M("claude-opus-4-7", "claude-opus-4.7", "anthropic", 1_000_000, 128_000, True, True),
    _M("claude-opus-4-6", "claude-opus-4.6", "anthropic", 1_000_000, 128_000, True, True),
    _M("claude-sonnet-4-6", "claude-sonnet-4.6", "anthropic", 1_000_000, 128_000, True, True),
    _M("claude-opus-4-5", "claude-opus-4.5", "anthropic", 200_000, 64_000, True, True),
    _M("claude-sonnet-4-5", "claude-sonnet-4.5", "anthropic", 200_000, 64_000, True, True),
    _M("claude-haiku-4-5", "claude-haiku-4.5", "anthropic", 200_000, 64_000, True, True),
    _M("claude-opus-4-1", "claude-opus-4.1", "anthropic", 200_000, 32_000, True, True),
    _M("claude-opus-4", "claude-opus-4", "anthropic", 200_000, 32_000, True, True),
    _M("claude-sonnet-4", "claude-sonnet-4", "anthropic", 200_000, 64_000, True, True),
    _M("claude-3-7-sonnet", "claude-3.7-sonnet", "anthropic", 200_000, 64_000, True, True),
    _M("claude-3-5-sonnet", "claude-3.5-sonnet", "anthropic", 200_000, 8_192, True, True),
    _M("claude-3-5-haiku", "claude-3.5-haiku", "anthropic", 200_000, 8_192, True, True),
    _M("claude-3-opus", "claude-3-opus", "anthropic", 200_000, 4_096, True, True),
    _M("claude-3-haiku", "claude-3-haiku", "anthropic", 200_000, 4_096, True, True),
    # --- Google -------------------------------------------------------------------------------
    # ai.google.dev/gemini-api/docs/models/<id> ("Input token limit", "Output token limit") and
    # the Vertex AI model pages; the input limit is used as the window.
    _M("gemini-3.1-pro", "gemini-3.1-pro", "google", 1_048_576, 65_536, True, True, "gemini"),
    _M("gemini-3-pro", "gemini-3-pro", "google", 1_048_576, 65_536, True, True, "gemini"),
    _M("gemini-3-flash", "gemini-3-flash", "google", 1_048_576, 65_536, True, True, "gemini"),
    _M("gemini-2.5-pro", "gemini-2.5-pro", "google", 1_048_576, 65_536, True, True, "gemini"),
    _M("gemini-2.5-flash", "gemini-2.5-flash", "google", 1_048_576, 65_536, True, True, "gemini"),
    _M(
        "gemini-2.5-flash-lite",
        "gemini-2.5-flash-lite",
        "google",
        1_048_576,
        65_536,
        True,
        True,
        "gemini",
    ),
    _M("gemini-2.0-flash", "gemini-2.0-flash", "google", 1_048_576, 8_192, True, True),
    _M("gemini-2.0-flash-lite", "gemini-2.0-flash-lite", "google", 1_048_576, 8_192, True, True),
    # --- DeepSeek -----------------------------------------------------------------------------
    # api-docs.deepseek.com/quick_start/pricing: V4 ("上下文长度 1M", "输出长度 最大 384K"; thinking
    # on by default), recorded as 1,000,000 / 384,000 (the safe side of "1M" and "384K").
    # deepseek-chat / -reasoner: the V3 / R1 figures (128K context; chat max output 8K, reasoner
    # 64K) as recorded by LiteLLM (131,072 / 8,192 and 131,072 / 65,536); both names now stand
    # for V4 Flash, whose window is larger: the old, smaller one is the safe side. The reasoner
    # keeps R1's rule (reasoning sent back is a 400, its guide says); where it is V4, the server's
    # 400 teaches otherwise.
    _M(
        "deepseek-v4-pro",
        "deepseek-v4-pro",
        "deepseek",
        1_000_000,
        384_000,
        False,
        True,
        "deepseek",
    ),
    _M(
        "deepseek-v4-flash",
        "deepseek-v4-flash",
        "deepseek",
        1_000_000,
        384_000,
        False,
        True,
        "deepseek",
    ),
    _M("deepseek-flash", "deepseek-flash", "deepseek", 1_000_000, 384_000, False, True, "deepseek"),
    _M("deepseek-chat", "deepseek-chat", "deepseek", 131_072, 8_192, False, True, "deepseek"),
    _M(
        "deepseek-reasoner",
        "deepseek-reasoner",
        "deepseek",
        131_072,
        65_536,
        False,
        True,
        "deepseek-r1",
    ),
    # --- Moonshot Kimi ------------------------------------------------------------------------
    # platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model (thinking models; "Set max_tokens
    # >= 16,000"); 262,144 windows as model catalogs record them (openclaw); no output cap is
    # published: 32,768 is recorded, the safe side.
    _M("kimi-k2-thinking", "kimi-k2-thinking", "moonshot", 262_144, 32_768, False, True, "kimi"),
    _M("kimi-k2.5", "kimi-k2.5", "moonshot", 262_144, 32_768, True, True, "kimi"),
    _M("kimi-k2.6", "kimi-k2.6", "moonshot", 262_144, 32_768, True, True, "kimi"),
    # --- Zhipu / Z.ai GLM ---------------------------------------------------------------------
    # docs.z.ai/guides/capabilities/thinking-mode (interleaved thinking since GLM-4.5); windows as
    # OpenRouter and the model pages list them (4.5: 131,072; 4.6-5.1: 202,752 or "200K"; 5.2 and
    # 5.3: 1M, 5.3's output [1, 131072] by its own 400); where no output cap is published, 32,768.
    _M("glm-4.5", "glm-4.5", "zhipu", 131_072, 32_768, False, True, "glm"),
    _M("glm-4.6", "glm-4.6", "zhipu", 202_752, 32_768, False, True, "glm"),
    _M("glm-4.7", "glm-4.7", "zhipu", 202_752, 32_768, False, True, "glm"),
    _M("glm-5", "glm-5", "zhipu", 202_752, 32_768, False, True, "glm"),
    _M("glm-5.1", "glm-5.1", "zhipu", 200_000, 128_000, False, True, "glm"),
    _M("glm-5.2", "glm-5.2", "zhipu", 1_000_000, 131_072, False, True, "glm"),
    _M("glm-5.3", "glm-5.3", "zhipu", 1_048_576, 131_072, False, True, "glm"),
    # --- MiniMax ------------------------------------------------------------------------------
    # platform.minimax.io/docs/api-reference/text-openai-api ("Context Window 204,800" for each);
    # output 128K as TokenHub lists it.
    _M("minimax-m2", "minimax-m2", "minimax", 204_800, 128_000, False, True, "minimax"),
    _M("minimax-m2.1", "minimax-m2.1", "minimax", 204_800, 128_000, False, True, "minimax"),
    _M("minimax-m2.5", "minimax-m2.5", "minimax", 204_800, 128_000, False, True, "minimax"),
    _M("minimax-m2.7", "minimax-m2.7", "minimax", 204_800, 128_000, False, True, "minimax"),
    # --- Qwen (open weights, native context) --------------------------------------------------
    # Qwen3 model cards: config max_position_embeddings 40,960 "reserving 32,768 tokens for
    # outputs"; Qwen3-Coder: 262,144 native, "output length of 65,536 tokens"; Qwen2.5(-Coder):
    # config 32,768 (131,072 only with YaRN), "generation 8192 tokens".
    _M("qwen3", "qwen3", "qwen", 40_960, 32_768, False, True, "qwen"),
    _M("qwen3-coder", "qwen3-coder", "qwen", 262_144, 65_536, False, True, "qwen"),
    _M("qwen2.5", "qwen2.5", "qwen", 32_768, 8_192, False, True),
    _M("qwen2.5-coder", "qwen2.5-coder", "qwen", 32_768, 8_192, False, True),
    # --- Meta Llama (open weights, native context) --------------------------------------------
    # Native 128K (131,072) for 3.1-3.3; Llama 4 windows and the 4,028 output cap from Meta's
    # Llama API docs (llama.developer.meta.com/docs/models) as recorded by LiteLLM; the 3.1/3.2
    # 4,096 cap is Amazon Bedrock's (LiteLLM). Llama has no vendor output cap of its own.
    _M("llama-3.1", "llama-3.1", "meta", 131_072, 4_096, False, True),
    _M("llama-3.2", "llama-3.2", "meta", 131_072, 4_096, False, True),
    _M("llama-3.2-vision", "llama-3.2-vision", "meta", 131_072, 4_096, True, False),
    _M("llama-3.2-11b-vision", "llama-3.2-vision", "meta", 131_072, 4_096, True, False),
    _M("llama-3.2-90b-vision", "llama-3.2-vision", "meta", 131_072, 4_096, True, False),
    _M("llama-3.3", "llama-3.3", "meta", 131_072, 4_028, False, True),
    _M("llama-4-scout", "llama-4-scout", "meta", 10_000_000, 4_028, True, True),
    _M("llama4-16x17b", "llama-4-scout", "meta", 10_000_000, 4_028, True, True),
    _M("llama-4-maverick", "llama-4-maverick", "meta", 1_000_000, 4_028, True, True),
    _M("llama4-128x17b", "llama-4-maverick", "meta", 1_000_000, 4_028, True, True),
    # --- Mistral ------------------------------------------------------------------------------
    # Windows from Mistral's announcements / docs as recorded by LiteLLM (mistral/codestral-2508,
    # devstral-*); Mistral publishes no separate output cap, so 8,192 (Amazon Bedrock's cap for
    # these models, via LiteLLM) is recorded. Local Ollama builds use the native window.
    _M("mistral-large", "mistral-large", "mistral", 128_000, 8_192, False, True),
    _M("codestral", "codestral", "mistral", 256_000, 8_192, False, True),
    _M("codestral-2405", "codestral", "mistral", 32_000, 8_191, False, True),
    _M("codestral-22b", "codestral", "mistral", 32_768, 8_192, False, True),
    _M("devstral", "devstral", "mistral", 131_072, 8_192, False, True),
    _M("devstral-small", "devstral-small", "mistral", 128_000, 8_192, False, True),
    _M("devstral-medium", "devstral-medium", "mistral", 128_000, 8_192, False, True),
    _M("devstral-2", "devstral-2", "mistral", 256_000, 8_192, False, True),
    _M("devstral-2512", "devstral-2", "mistral", 256_000, 8_192, False, True),
    _M("devstral-small-2", "devstral-small-2", "mistral", 256_000, 8_192, False, True),
    _M("devstral-small-2512", "devstral-small-2", "mistral", 256_000, 8_192, False, True),
)


# --- Normalisation ------------------------------------------------------------------------------

# Bedrock ids: optional cross-region prefix, then the model provider, dot-separated.
BEDROCK_PREFIX: Final = re.compile(
    r"^(?:(?:us|eu|apac|ap|jp|au|ca|global|us-gov)\.)?"
    r"(?:anthropic|meta|mistral|deepseek|openai|qwen|google)\."
)
_SEPARATORS: Final = re.compile(r"[-._@:\s]+")
# Families spelled both glued and hyphenated: "llama3.1" / "llama-3.1", "qwen2.5" / "qwen-2.5".
_GLUED_FAMILY: Final = re.compile(r"^(gpt|llama|qwen)-(?=\d)")
_META_PREFIX: Final = re.compile(r"^meta-(?=llama)")
# After a pattern ending in a version digit: "-5", "-10-..." is another minor version; dates
# ("-20250514", "-0613") and sizes ("-8b") are not, and "-0" is the same version.
_OTHER_MINOR_VERSION: Final = re.compile(r"^-0*[1-9]\d?(?:-|$)")


def normalise(text: str) -> str:
    """One separator ("-"), no family/version hyphen, for ids and patterns alike."""
    text = _SEPARATORS.sub("-", text.lower()).strip("-")
    text = _META_PREFIX.sub("", text)
    return _GLUED_FAMILY.sub(r"\1", text)


def id_spellings(model_id: str) -> list[str]:
    """`model_id` without gateway or Bedrock prefix, with its tag and without, lower-case."""
    text = model_id.strip().lower()
    text = text.removeprefix("ft:")  # OpenAI fine-tunes: "ft:gpt-4o-mini-2024-07-18:org::id"
    text = text.rsplit("/", 1)[-1]
    text = BEDROCK_PREFIX.sub("", text)
    name, _, tag = text.partition(":")
    return [f"{name}-{tag}", name] if tag else [name]


def _candidates(model_id: str) -> list[tuple[str, str]]:
    """Spellings of `model_id` to look up, most specific first, each with its normalised form."""
    return [(s, normalised) for s in id_spellings(model_id) if (normalised := normalise(s))]


def _matches(key: str, candidate: str) -> bool:
    if not candidate.startswith(key):
        return False
    rest = candidate[len(key) :]
    if not rest:
        return True
    if rest[0] != "-":
        return False
    return not (key[-1].isdigit() and _OTHER_MINOR_VERSION.match(rest))


# By normalised pattern (the first entry of a pattern wins).
_INDEX: Final[dict[str, KnownModel]] = {}
for _model in KNOWN_MODELS:
    _INDEX.setdefault(normalise(_model.pattern), _model)


@functools.lru_cache(maxsize=1024)  # a model is looked up for its entry, prices and name
def lookup_spelled(model_id: str) -> tuple[KnownModel, str, str] | None:
    """The best match, the spelling that matched, and what the normalised spelling has after
    the entry's pattern ("" or "-" and more).

    A pattern matches where it is the candidate up to a "-" or whole (`_matches`): only those
    prefixes are looked up, longest (most specific) first — a few dictionary lookups per id, not
    a pass over the table (100,000 listed models took seconds)."""
    for spelling, candidate in _candidates(model_id):
        ends = [i for i, char in enumerate(candidate) if char == "-"]
        for end in [len(candidate), *reversed(ends)]:
            key = candidate[:end]
            model = _INDEX.get(key)
            if model is not None and _matches(key, candidate):
                return model, spelling, candidate[end:]
    return None


def lookup_known_model(model_id: str) -> KnownModel | None:
    """Best match for a model id as users and gateways spell it."""
    found = lookup_spelled(model_id)
    return None if found is None else found[0]


# --- Names --------------------------------------------------------------------------------------

# Words of an id: "." and "_" stay inside a word ("1.5b", "q4_k_m").
