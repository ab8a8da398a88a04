"""The multipliers of raw string counts, chosen so that Copilot Chat's decisions come out right.

A string's count is `ceil(other × text + cjk × cjk)` (CJK tokens and the rest have their own
ratios). The strings of a tool schema get their own multiplier. Copilot counts tools through us as
`floor(1.1 × (16 + Σ(8 + every key and string value)))`, which leaves out JSON punctuation,
numbers and booleans; and it counts the messages of its agent prompt with its own o200k_base, not
through us (`copilot_view`). The tools' count is therefore the one number of its render budget we
decide: `copilot_tools_target` sets it so that the budget holds what the API can really take, and
`tool_scale` picks the multiplier that makes Copilot's formula land on it. The extension computes
string counts with the same arithmetic.
"""

from __future__ import annotations

import collections
import math
from typing import Final

import attrs

from tokengauge.counting.request import TextCount, ToolWalk

COPILOT_TOOLS_BASE: Final = 16
COPILOT_TOOL_OVERHEAD: Final = 8
COPILOT_TOOLS_MARGIN: Final = 1.1
DEFAULT_WALK_SHORTFALL: Final = 1.2
"""Tools' JSON ÷ Copilot's formula over exact counts, when the tools are not known yet."""
_EPSILON: Final = 1e-9
_SEARCH_STEPS: Final = 48


@attrs.frozen
class Scales:
    """Multipliers of raw counts: text (non-CJK), CJK text, and tool-schema strings."""

    text: float
    cjk: float
    tools: float

    def tokens(self, count: TextCount) -> int:
        """A string's count: `ceil(other × text + cjk × cjk)`."""
        if count.total <= 0:
            return 0
        return math.ceil(count.other * self.text + count.cjk * self.cjk - _EPSILON)


def copilot_tools(walk: ToolWalk, scale: float) -> int:
    """Copilot's count of the tools when each string's count is `ceil(raw × scale)`."""
    return _copilot_tools(walk.tools, _histogram(walk), scale)


def _histogram(walk: ToolWalk) -> list[tuple[int, int]]:
    """(raw count, how many strings have it) of the walk's strings that count."""
    return [(raw, n) for raw, n in collections.Counter(walk.raws).items() if raw > 0]


def _copilot_tools(tools: int, histogram: list[tuple[int, int]], scale: float) -> int:
    if not tools:
        return 0
    strings = sum(n * _ceil(raw * scale) for raw, n in histogram)
    return copilot_tools_formula(tools, strings)


def copilot_tools_formula(tools: int, strings: int) -> int:
    """Copilot's `countToolTokens` for `tools` tools whose keys and string values its provider
    counted at `strings` tokens in all: `floor(1.1 × (16 + 8 per tool + strings))`."""
    body = COPILOT_TOOLS_BASE + COPILOT_TOOL_OVERHEAD * tools + strings
    return math.floor(body * COPILOT_TOOLS_MARGIN)


def copilot_tools_target(max_input: int, tools: float, ratio: float, true_max_input: int) -> int:
    """What Copilot's count of the tools must come to so that its render budget holds what the
    API can really take.

    Copilot fits its own o200k count of the messages, `M`, within `0.9 × (max_input − T)`, where
    `max_input` is the `maxInputTokens` it was told and `T` its count of the tools (through us).
    The API charges about `ratio × M` for those messages and `tools` for the tools (and the
    request overhead). With exact counts against the true budget it would admit messages up to
    `0.9 × (true_max_input − tools)`; `T = max_input − (true_max_input − tools) / ratio` makes it
    admit exactly as much: at its budget's edge it decides as it would if it counted every token
    as the API does. Where that is below what the formula can give (`ratio` below 1), the target
    is 0 and the count stops at the formula's floor.
    """
    return max(0, math.ceil(max_input - (true_max_input - tools) / ratio - _EPSILON))


def tool_scale(target: int, walk: ToolWalk) -> float:
    """The smallest multiplier with which Copilot's formula reaches `target` for these tools."""
    if not walk.tools or not any(walk.raws):
        return 1.0
    low, high = 0.0, 16.0 * max(1.0, target / max(1, sum(walk.raws)))
    histogram = _histogram(walk)  # once: the search evaluates the formula ~50 times
    if _copilot_tools(walk.tools, histogram, high) < target:
        return high
    for _ in range(_SEARCH_STEPS):
        middle = (low + high) / 2
        if _copilot_tools(walk.tools, histogram, middle) >= target:
            high = middle
        else:
            low = middle
    return high


def _ceil(value: float) -> int:
    return math.ceil(value - _EPSILON) if value > 0 else 0
