"""How much of a model's window is input and how much is kept for output (ARCHITECTURE §8).

`maxInputTokens = min(contextWindow, learnedLimit) − reservedOutput`, with no extra ×0.85:
Copilot applies its own. Each request's `max_tokens = min(model max, window − input − safety)`.
"""

from __future__ import annotations

import math
from typing import Final

from tokengauge.models.catalog import ModelSpec

DEFAULT_RESERVED_OUTPUT_CAP: Final = 16_384
"""Copilot assumes 8k of output; reserving a model's full 64k–128k cap would waste the window."""
RESERVED_WINDOW_SHARE: Final = 4
"""Never reserve more than a quarter of a small window."""
MIN_SAFETY: Final = 128
OUTPUT_FLOOR_CAP: Final = 4096
"""The output a request must always have room for: min(reserved output, 4,096)."""
LEAST_OUTPUT_FLOOR: Final = 1024
"""What the recovery ladder may lower the output floor to for one request, at the least."""
TOOL_CALL_MARGIN: Final = 1.25
"""Room kept for a tool call, over the largest the conversation has made."""


def effective_window(model: ModelSpec, learned_limit: int | None) -> int:
    """The window, lowered to a limit the API has told us about."""
    if learned_limit is None:
        return model.context_window
    return min(model.context_window, learned_limit)


def reserved_output(model: ModelSpec, learned_limit: int | None = None) -> int:
    """Output tokens kept free: configured, else min(model cap, 16k, a quarter of the window)."""
    if model.reserved_output_tokens is not None:
        return min(model.reserved_output_tokens, effective_window(model, learned_limit) - 1)
    window = effective_window(model, learned_limit)
    return min(
        model.max_output_tokens, DEFAULT_RESERVED_OUTPUT_CAP, window // RESERVED_WINDOW_SHARE
    )


def max_input_tokens(model: ModelSpec, learned_limit: int | None) -> int:
    """The input budget VS Code sees."""
    window = effective_window(model, learned_limit)
    return max(1, window - reserved_output(model, learned_limit))


def safety_tokens(window: int) -> int:
    """Slack left between input and output in a request: 1% of the window, at least 128."""
    return max(MIN_SAFETY, window // 100)


def clamp_max_tokens(
    model: ModelSpec,
    input_tokens: int,
    learned_limit: int | None = None,
    requested: int | None = None,
) -> int:
    """`max_tokens` for a request of `input_tokens`: what fits in the window, at least 1."""
    window = effective_window(model, learned_limit)
    room = window - input_tokens - safety_tokens(window)
    cap = model.max_output_tokens if requested is None else min(requested, model.max_output_tokens)
    return max(1, min(cap, room))


def output_floor(model: ModelSpec, learned_limit: int | None = None) -> int:
    """The least useful room for output: min(reserved output, 4,096), at least 1."""
    return max(1, min(reserved_output(model, learned_limit), OUTPUT_FLOOR_CAP))


def least_output_floor(floor: int, largest_call: int) -> int:
    """The smallest output floor the recovery ladder may take for a request: 1,024, or room for
    a tool call as large as the largest the conversation holds (`largest_call` tokens) if more,
    and never above the usual `floor`."""
    needed = max(LEAST_OUTPUT_FLOOR, math.ceil(largest_call * TOOL_CALL_MARGIN))
    return max(1, min(floor, needed))


def input_target(model: ModelSpec, learned_limit: int | None) -> int:
    """The most input a request may carry and still leave the output floor and the safety."""
    window = effective_window(model, learned_limit)
    return max(1, window - output_floor(model, learned_limit) - safety_tokens(window))
