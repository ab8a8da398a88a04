"""The multipliers of raw string counts, chosen so that Copilot Chat's sums come out right.

A string's count is `ceil(other × text + cjk × cjk)` (CJK tokens and the rest have their own
ratios). The strings of a tool schema get their own multiplier: Copilot counts tools as
`floor(1.1 × (16 + Σ(8 + every key and string value)))`, which leaves out JSON punctuation,
numbers and booleans, so exact string counts add up to less than the tools really cost (~8–17%
for Copilot's agent tools). `tool_scale` picks the multiplier that makes Copilot's formula land on
the tools' estimated true cost. The extension computes string counts with the same arithmetic.
"""

from __future__ import annotations

import collections
import math
from typing import Final

import attrs

from tokengauge.counting import TextCount, ToolWalk

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
    if not walk.tools:
        return 0
    histogram = collections.Counter(walk.raws)
    strings = sum(n * _ceil(raw * scale) for raw, n in histogram.items() if raw > 0)
    body = COPILOT_TOOLS_BASE + COPILOT_TOOL_OVERHEAD * walk.tools + strings
    return math.floor(body * COPILOT_TOOLS_MARGIN)


def tool_scale(ratio: float, walk: ToolWalk | None) -> float:
    """The smallest multiplier with which Copilot's formula reaches `ratio` × the tools' JSON."""
    if walk is None or not walk.tools or not any(walk.raws):
        return ratio * DEFAULT_WALK_SHORTFALL
    target = math.ceil(ratio * walk.json - _EPSILON)
    low, high = 0.0, max(1.0, ratio) * 16
    if copilot_tools(walk, high) < target:
        return high
    for _ in range(_SEARCH_STEPS):
        middle = (low + high) / 2
        if copilot_tools(walk, middle) >= target:
            high = middle
        else:
            low = middle
    return high


def _ceil(value: float) -> int:
    return math.ceil(value - _EPSILON) if value > 0 else 0
