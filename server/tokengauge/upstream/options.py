"""Chat request options read from VS Code's `toolMode` and `modelOptions`.

`modelOptions` is a free dict from whoever calls the model. Known knobs are read under their common
spellings (`top_p`/`topP`, `max_tokens`/`maxTokens`/...); keys starting with `_` are the caller's
private bookkeeping (Copilot sends `_capturingTokenCorrelationId` and `_otelTraceContext`) and are
dropped; every other key is passed into the request body as a provider-specific knob.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

import attrs

from tokengauge.messages import InvalidInput
from tokengauge.settings import TOOL_DOCS, ToolDocs

ToolMode = Literal["auto", "required", "none"]
"""How the model may call tools: "none" only where the send path asks for a summary over the
conversation's last request (`chat.cached_summary`), never from the client."""
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]

# VS Code's LanguageModelChatToolMode enum: Auto = 1, Required = 2.
_TOOL_MODES: Final[dict[Any, ToolMode]] = {
    "auto": "auto",
    "required": "required",
    1: "auto",
    2: "required",
}
_ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "temperature": ("temperature",),
    "top_p": ("top_p", "topP"),
    "max_tokens": (
        "max_tokens",
        "maxTokens",
        "max_output_tokens",
        "maxOutputTokens",
        "max_completion_tokens",
        "maxCompletionTokens",
    ),
    "reasoning_effort": ("reasoning_effort", "reasoningEffort"),
    "thinking_budget": ("thinking_budget", "thinkingBudget", "budget_tokens", "budgetTokens"),
    "stop": ("stop", "stop_sequences", "stopSequences"),
    "context_size": ("context_size", "contextSize"),
    "compact_at": ("compact_at", "compactAt"),
    "tool_docs": ("tool_docs", "toolDocs"),
}
_KNOWN_KEYS: Final = frozenset(key for keys in _ALIASES.values() for key in keys)
# The body's structure is ours: a passthrough key must not replace it.
RESERVED_KEYS: Final = frozenset(
    {"model", "messages", "stream", "stream_options", "tools", "system"}
)
REASONING_EFFORTS: Final[tuple[ReasoningEffort, ...]] = get_args(ReasoningEffort)
"""Every effort some API takes (OpenAI's four, `none` where thinking can be turned off, and
DeepSeek's and GLM's `max`): each is sent as its API spells it, or not at all."""


@attrs.frozen
class ChatOptions:
    """What the caller asked for, independent of the API dialect."""

    tool_mode: ToolMode = "auto"
    """`required`: the model must call a tool."""
    temperature: float | None = None
    """Sampling temperature; omitted from the body when None."""
    top_p: float | None = None
    """Nucleus sampling; omitted when None."""
    max_tokens: int | None = None
    """The output cap the caller asked for; the chat loop clamps it to what fits the window."""
    reasoning_effort: ReasoningEffort | None = None
    """The reasoning effort asked for (`upstream.dialects.openai.reasoning_rules` spells it for each
    Chat Completions server)."""
    thinking_budget: int | None = None
    """Anthropic extended-thinking budget in tokens; 0 or None means no thinking."""
    stop: list[str] | None = None
    """Stop sequences."""
    context_size: int | None = None
    """The window picked for the model (VS Code's model picker); never sent to the API."""
    compact_at: int | None = None
    """The compaction window picked for the model (VS Code's model picker); never sent to the
    API."""
    tool_docs: ToolDocs | None = None
    """How much tool documentation to send (VS Code's model picker); never sent to the API."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Unknown keys, merged into the request body last (provider-specific knobs)."""


def with_defaults(requested: ChatOptions, defaults: ChatOptions) -> ChatOptions:
    """`requested`, each option it leaves unset taken from `defaults` (a model's settings)."""
    unset = {
        field.name: getattr(defaults, field.name)
        for field in attrs.fields(ChatOptions)
        if field.name not in ("tool_mode", "extra") and getattr(requested, field.name) is None
    }
    return attrs.evolve(requested, **unset, extra={**defaults.extra, **requested.extra})


def _pick(options: Mapping[str, Any], name: str) -> Any:
    given = [(key, options[key]) for key in _ALIASES[name] if options.get(key) is not None]
    if any(value != given[0][1] for _, value in given[1:]):
        keys = ", ".join(key for key, _ in given)
        raise InvalidInput(f"invalid modelOptions: {keys} disagree; give only one of them")
    return given[0] if given else (name, None)


def _number(key: str, value: Any, low: float, high: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"invalid modelOptions.{key}: expected a number, got {value!r:.40}")
    if not low <= value <= high:
        raise InvalidInput(f"invalid modelOptions.{key}: {value} is outside {low}..{high}")
    return float(value)


def _integer(key: str, value: Any, low: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"invalid modelOptions.{key}: expected an integer, got {value!r:.40}")
    if value < low:
        raise InvalidInput(f"invalid modelOptions.{key}: must be at least {low}, got {value}")
    return value


def _stop(key: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise InvalidInput(f"invalid modelOptions.{key}: expected a string or a list of strings")


def _one_of(key: str, value: Any, choices: tuple[str, ...]) -> Any:
    """`value` if it is one of `choices` (None if absent); else `InvalidInput` naming them."""
    if value is None or value in choices:
        return value
    raise InvalidInput(
        f"invalid modelOptions.{key}: expected one of {', '.join(choices)}, got {value!r:.40}"
    )


def parse_tool_mode(tool_mode: Any) -> ToolMode:
    """`"auto"`/`"required"` or VS Code's numeric enum (1, 2); None means auto."""
    if tool_mode is None:
        return "auto"
    valid = isinstance(tool_mode, (str, int)) and not isinstance(tool_mode, bool)
    if not valid or tool_mode not in _TOOL_MODES:
        raise InvalidInput(
            f'invalid toolMode: expected "auto", "required", 1 or 2, got {tool_mode!r:.40}'
        )
    return _TOOL_MODES[tool_mode]


def parse_model_options(tool_mode: Any, model_options: Any) -> ChatOptions:
    """Read `toolMode` and `modelOptions` as the extension sends them; bad values raise
    `InvalidInput` naming the key."""
    if model_options is None:
        model_options = {}
    if not isinstance(model_options, dict):
        raise InvalidInput(
            f"invalid modelOptions: expected an object, got {type(model_options).__name__}"
        )
    for key in model_options:
        if key in RESERVED_KEYS:
            raise InvalidInput(f"invalid modelOptions.{key}: the server sets it; remove it")
    extra = {
        key: value
        for key, value in model_options.items()
        if isinstance(key, str) and not key.startswith("_") and key not in _KNOWN_KEYS
    }
    temperature_key, temperature = _pick(model_options, "temperature")
    top_p_key, top_p = _pick(model_options, "top_p")
    max_tokens_key, max_tokens = _pick(model_options, "max_tokens")
    effort_key, effort = _pick(model_options, "reasoning_effort")
    budget_key, budget = _pick(model_options, "thinking_budget")
    stop_key, stop = _pick(model_options, "stop")
    size_key, size = _pick(model_options, "context_size")
    compact_key, compact_at = _pick(model_options, "compact_at")
    docs_key, docs = _pick(model_options, "tool_docs")
    return ChatOptions(
        tool_mode=parse_tool_mode(tool_mode),
        temperature=_number(temperature_key, temperature, 0.0, 2.0),
        top_p=_number(top_p_key, top_p, 0.0, 1.0),
        max_tokens=_integer(max_tokens_key, max_tokens, 1),
        reasoning_effort=_one_of(effort_key, effort, REASONING_EFFORTS),
        thinking_budget=_integer(budget_key, budget, 0),
        stop=_stop(stop_key, stop),
        context_size=_integer(size_key, size, 1_000),
        compact_at=_integer(compact_key, compact_at, 1_000),
        tool_docs=_one_of(docs_key, docs, TOOL_DOCS),
        extra=extra,
    )
