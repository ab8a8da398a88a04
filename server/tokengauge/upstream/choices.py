"""The options a person may pick for a model in VS Code's model picker (its `configurationSchema`).

- a reasoning effort, for OpenAI reasoning models (GPT-5, the o-series, gpt-oss) over either
  OpenAI dialect, and for the thinking models of the Chat Completions servers that take one
  (DeepSeek V4, GLM, Kimi K2.5 on, Gemini, OpenRouter's reasoning models), as each spells it
  (`upstream.dialects.openai.reasoning_rules`; `none` turns thinking off where it can be);
- a thinking budget, for Anthropic models with extended thinking (Claude 3.7 and 4 on);
- a context size, for models whose window is larger than the common 200k tier: a smaller window
  keeps cost and latency down, and then is the window everything else uses (`ContextSizes`); for
  an Ollama model, any window from 4K up, which Ollama is asked to load it with (`num_ctx`; the
  model's own, the default, asks for nothing: Ollama keeps what it loads);
- a compaction window, for the same models: a smaller window Copilot is told of, so that it
  summarizes a chat before its requests get dear, while requests may still use the whole window
  (`Windows.compaction`);
- how much tool documentation requests carry (`tool_docs`), for models that call tools.

Each default is what the model's settings (`tokenGauge.models[].options`) already ask for.
"""

from __future__ import annotations

import re
from typing import Final

from tokengauge.messages import InvalidInput
from tokengauge.models.catalog import ModelSpec
from tokengauge.protocol import Choice, ModelChoices
from tokengauge.settings import TOOL_DOCS
from tokengauge.upstream.dialects.openai.reasoning_rules import effort_choices, rule_for
from tokengauge.upstream.options import ChatOptions, parse_model_options
from tokengauge.upstream.served import served_kind

SMALL_CONTEXT: Final = 200_000
COMPACTION_WINDOWS: Final = (128_000, SMALL_CONTEXT)
OLLAMA_SMALLEST: Final = 4_096
THINKING_BUDGETS: Final = (0, 4_096, 16_384, 32_768)
OPENAI_EFFORTS: Final = ("minimal", "low", "medium", "high")
OPENAI_KINDS: Final = (None, "openai", "openrouter")
"""The servers where an OpenAI reasoning model takes OpenAI's efforts (`rule_for`'s kinds)."""
_REASONING_FAMILIES: Final = re.compile(r"^(gpt-5(?!.*-chat)|o[134]\b|gpt-oss)")
_THINKING_FAMILIES: Final = re.compile(r"^claude-(3[.-]7|(sonnet|opus|haiku)-4)")


def model_choices(model: ModelSpec) -> ModelChoices | None:
    """The picker's options for a model; None when it has none."""
    dialect, family = model.provider.dialect, model.family.lower()
    settings = _settings(model)
    effort = budget = size = compact = None
    offered = _efforts(model, family)
    if offered is not None:
        efforts, usual = offered
        chosen = settings.reasoning_effort
        effort = Choice(list(efforts), chosen if chosen in efforts else usual)
    if dialect == "anthropic" and _THINKING_FAMILIES.match(family):
        budgets = [b for b in THINKING_BUDGETS if b < model.max_output_tokens]
        chosen_budget = settings.thinking_budget
        budget = Choice(budgets, chosen_budget if chosen_budget in budgets else 0)
    if served_kind(model.provider) == "ollama":
        size = Choice(_ollama_sizes(model.context_window), model.context_window)
    elif model.context_window > SMALL_CONTEXT:
        size = Choice([SMALL_CONTEXT, model.context_window], model.context_window)
        compact = Choice([*COMPACTION_WINDOWS, model.context_window], model.context_window)
    docs = Choice(list(TOOL_DOCS), model.tool_docs) if model.tool_calling else None
    if effort is None and budget is None and size is None and docs is None:
        return None
    return ModelChoices(effort, budget, size, compact, docs)


def _efforts(model: ModelSpec, family: str) -> tuple[tuple[str, ...], str] | None:
    """The efforts the model's API takes, and the one it uses unless told; None for a model
    that takes none."""
    dialect = model.provider.dialect
    rule = rule_for(model) if dialect == "openai" else None
    openai_family = _REASONING_FAMILIES.match(family) is not None
    if openai_family and dialect != "anthropic" and (rule is None or rule.kind in OPENAI_KINDS):
        return (OPENAI_EFFORTS if family.startswith("gpt-5") else OPENAI_EFFORTS[1:]), "medium"
    if rule is None:
        return None
    if rule.kind == "openrouter" and (
        model.reasoning is not None or _THINKING_FAMILIES.match(family)
    ):
        return OPENAI_EFFORTS, "medium"
    return effort_choices(rule, family)


def _ollama_sizes(native: int) -> list[int]:
    """Powers of two from 4K below the model's own window, then that window."""
    sizes, size = [], OLLAMA_SMALLEST
    while size < native:
        sizes.append(size)
        size *= 2
    return [*sizes, native]


def _settings(model: ModelSpec) -> ChatOptions:
    """The model's settings options as a chat reads them (none when they are invalid: the chat
    says why)."""
    try:
        return parse_model_options(None, model.options)
    except InvalidInput:
        return ChatOptions()
