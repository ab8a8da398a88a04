"""What each Chat Completions server wants of a reasoning model's thinking (ARCHITECTURE §8).

Reasoning is streamed beside the answer (`reasoning_content`, `reasoning`, `reasoning_details`,
`<think>` tags, Gemini's thought signatures on tool calls) and some servers must have it back in
later requests, each in its own field, while others refuse it. A rule says which assistant
messages carry their reasoning back (`scope`), the field it goes in when the stream did not say,
whether a tool-call message must carry the field even once its reasoning is lost, and how an
effort is spelled. Each rule is what its API's documentation says (cited per kind below; the
pages are in `tests/data/wire/SOURCES.md`):

- `deepseek` (V4, thinking on by default): every assistant message that made tool calls keeps its
  `reasoning_content` in every later request, else 400 ("must be passed back"); the others' is
  ignored. `thinking: {type}` switches it, `reasoning_effort` is low / high / max.
- `deepseek-r1` (the old `deepseek-reasoner`): any `reasoning_content` in the input is a 400.
- `kimi` (Moonshot): `reasoning_content` of tool-call messages, else 400 ("thinking is enabled but
  reasoning_content is missing in assistant tool call message"); `thinking: {type}` on K2.5 on.
- `glm` (Zhipu / Z.ai): `reasoning_content` returned with tool results (interleaved thinking);
  `thinking: {type}`, except GLM-5.3, whose thinking cannot be turned off; `reasoning_effort` from
  GLM-5.2 (5.3: low / high / max only).
- `minimax` (M2): the whole assistant message of a function-call turn, its `reasoning_details`
  with it (asked for apart from the content with `reasoning_split`); no switch, no effort.
- `gemini` (the OpenAI-compatible API): each tool call's `extra_content.google.thought_signature`,
  for every call of the current turn (Gemini 3 refuses function-call history without it);
  `reasoning_effort`.
- `openrouter`: `reasoning_details` as they came, unmodified and in order, for tool calling
  (Gemini's signatures and Claude's travel in them); `reasoning: {effort}`.
- `qwen`, `local` (vLLM, SGLang, Ollama, llama.cpp, LM Studio): the chat template keeps only the
  reasoning after the last user message; vLLM and Ollama read `reasoning` alone.
- `openai` (OpenAI's and Azure's Chat Completions): no reasoning field in or out (the Responses
  API is where OpenAI's reasoning goes back); a message property it does not know is a 400.
- anything else: the reasoning of the current tool loop, in the field it came in; a 400 that
  names reasoning turns that around once, and what was learned is kept (`chat.reasoning`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from tokengauge.models.catalog import ModelSpec
from tokengauge.settings import ProviderSettings
from tokengauge.upstream.presets import preset_of

ReplayScope = Literal["none", "loop", "tools", "all"]
"""Which assistant messages carry their reasoning back: none; those of the current tool loop
(after the last user message); those too that made tool calls; every one."""
SCOPES: Final[tuple[ReplayScope, ...]] = ("none", "loop", "tools", "all")
GEMINI_DUMMY_SIGNATURE: Final = "skip_thought_signature_validator"
"""Gemini's documented signature for a call whose own signature is not known (thought-signatures,
FAQ: it skips the validation)."""

JsonObject = dict[str, Any]
_LOW_HIGH_MAX: Final = {
    "minimal": "low",
    "low": "low",
    "medium": "high",
    "high": "high",
    "xhigh": "max",
    "max": "max",
}
_GLM_FORCED: Final = re.compile(r"^glm-5\.3")
_GLM_EFFORT: Final = re.compile(r"^glm-5\.(?:[2-9]|\d\d)")
_KIMI_SWITCH: Final = re.compile(r"^kimi-k2\.\d")
_DEEPSEEK_THINKING: Final = re.compile(r"^deepseek-(v4|flash)")


@attrs.frozen
class ReasoningRule:
    """What one server wants of a model's reasoning."""

    kind: str | None
    """Which API's rule (None: a server nothing is known of)."""
    scope: ReplayScope = "loop"
    field: str = "reasoning_content"
    """Where reasoning goes back when its stream did not say where it came."""
    required: bool = False
    """A tool-call message must carry `field`, empty where its reasoning is no longer known."""
    dummy_signature: bool = False
    """A call of the current turn whose signature is not known gets Gemini's documented one."""
    fixed: Mapping[str, Any] = attrs.field(factory=dict)
    """Fields every request carries (MiniMax's `reasoning_split`)."""

    def with_scope(self, scope: ReplayScope) -> ReasoningRule:
        """The same rule sending back what `scope` says."""
        return attrs.evolve(self, scope=scope)


UNKNOWN_SERVER: Final = ReasoningRule(None)
"""The rule of a server nothing is known of: the current loop's reasoning, as it came."""
_RULES: Final[dict[str, ReasoningRule]] = {
    "deepseek": ReasoningRule("deepseek", "tools", required=True),
    "deepseek-r1": ReasoningRule("deepseek-r1", "none"),
    "kimi": ReasoningRule("kimi", "tools", required=True),
    "glm": ReasoningRule("glm", "tools"),
    "minimax": ReasoningRule("minimax", "tools", fixed={"reasoning_split": True}),
    "gemini": ReasoningRule("gemini", "loop", dummy_signature=True),
    "openrouter": ReasoningRule("openrouter", "tools", field="reasoning"),
    "qwen": ReasoningRule("qwen", "loop"),
    "local": ReasoningRule("local", "loop", field="reasoning"),
    "openai": ReasoningRule("openai", "none"),
}
_PRESET_KINDS: Final = {
    "deepseek": "deepseek",
    "moonshot": "kimi",
    "zai": "glm",
    "minimax": "minimax",
    "gemini": "gemini",
}
"""What a direct API's models are, when the table does not know the model."""
_GATEWAY_KINDS: Final = {
    "openai": "openai",
    "azure-openai": "openai",
    "openrouter": "openrouter",
    "ollama": "local",
    "vllm": "local",
    "llamacpp": "local",
    "lmstudio": "local",
}
"""Servers that speak their own reasoning, whatever model they serve."""


def rule_for(model: ModelSpec) -> ReasoningRule:
    """The rule of the server that serves `model`: a gateway's or local server's own, else its
    model's (the built-in table's kind, else its preset's), else the default."""
    kind = _kind(model.provider, model.reasoning)
    return _RULES[kind] if kind is not None else UNKNOWN_SERVER


def _kind(provider: ProviderSettings, model_kind: str | None) -> str | None:
    preset = preset_of(provider)
    if preset is not None and preset.id in _GATEWAY_KINDS:
        return _GATEWAY_KINDS[preset.id]
    if model_kind is not None and model_kind in _RULES:
        return model_kind
    return _PRESET_KINDS.get(preset.id) if preset is not None else None


def effort_fields(rule: ReasoningRule, family: str, effort: str | None) -> JsonObject:
    """The body fields for a reasoning effort as the server spells them (none where the model
    takes no effort), with the rule's fixed fields."""
    fields: JsonObject = dict(rule.fixed)
    if effort is None:
        return fields
    family = family.lower().rsplit("/", 1)[-1]
    kind = rule.kind
    if kind == "deepseek":
        if effort == "none":
            return {**fields, "thinking": {"type": "disabled"}}
        level = _LOW_HIGH_MAX[effort]
        return {**fields, "thinking": {"type": "enabled"}, "reasoning_effort": level}
    if kind == "openrouter":
        return {**fields, "reasoning": {"effort": "xhigh" if effort == "max" else effort}}
    if kind == "glm":
        return {**fields, **_glm(family, effort)}
    if kind == "kimi":
        if effort == "none" and _KIMI_SWITCH.match(family):
            return {**fields, "thinking": {"type": "disabled"}}
        return fields
    if kind in ("deepseek-r1", "minimax", "qwen"):
        return fields
    if kind == "gemini" and effort in ("xhigh", "max"):
        effort = "high"
    return {**fields, "reasoning_effort": effort}


def _glm(family: str, effort: str) -> JsonObject:
    """GLM's switch and effort: `disabled` never for GLM-5.3 (forced thinking), `reasoning_effort`
    only from GLM-5.2 on (5.3: low, high or max)."""
    forced = _GLM_FORCED.match(family) is not None
    if effort == "none":
        return {} if forced else {"thinking": {"type": "disabled"}}
    fields: JsonObject = {"thinking": {"type": "enabled"}}
    if forced:
        fields["reasoning_effort"] = _LOW_HIGH_MAX[effort]
    elif _GLM_EFFORT.match(family):
        fields["reasoning_effort"] = effort
    return fields


def effort_choices(rule: ReasoningRule, family: str) -> tuple[tuple[str, ...], str] | None:
    """The efforts a model of the rule's API takes, and the one it uses unless told (`none`:
    thinking off, where it can be turned off); None for a model that takes none."""
    family = family.lower().rsplit("/", 1)[-1]
    if rule.kind == "deepseek" and _DEEPSEEK_THINKING.match(family):
        return ("none", "low", "high", "max"), "high"
    if rule.kind == "glm":
        if _GLM_FORCED.match(family):
            return ("low", "high", "max"), "high"
        if _GLM_EFFORT.match(family):
            return ("none", "low", "high", "max"), "max"
        return ("none", "high"), "high"
    if rule.kind == "kimi" and _KIMI_SWITCH.match(family):
        return ("none", "high"), "high"
    if rule.kind == "gemini":
        if family.startswith("gemini-3"):
            return ("low", "high"), "high"
        return ("minimal", "low", "medium", "high"), "medium"
    return None
