"""Scales: string counts by kind, and the tools' count that makes Copilot's budget right."""

from __future__ import annotations

import math

import pytest

from tokengauge.counting.request import TextCount, ToolWalk
from tokengauge.counting.scales import (
    Scales,
    copilot_tools,
    copilot_tools_target,
    tool_scale,
)

WALK = ToolWalk(tools=39, json=12_585, raws=tuple([1] * 800 + [2] * 200 + [30] * 219))


def test_string_tokens_by_kind():
    scales = Scales(text=1.3, cjk=0.6, tools=2.0)
    assert scales.tokens(TextCount(100, 0)) == 130
    assert scales.tokens(TextCount(100, 40)) == math.ceil(60 * 1.3 + 40 * 0.6)
    assert scales.tokens(TextCount(0, 0)) == 0


@pytest.mark.parametrize("target", [1_000, 5_000, 12_585, 25_000])
def test_tool_scale_is_the_least_multiplier_reaching_the_target(target: int):
    scale = tool_scale(target, WALK)
    assert copilot_tools(WALK, scale) >= target
    assert copilot_tools(WALK, scale * 0.999) < target


def test_below_the_formulas_floor_the_tools_claim_the_floor():
    floor = copilot_tools(WALK, 0.0)
    assert floor == math.floor(1.1 * (16 + 8 * 39))
    assert copilot_tools(WALK, tool_scale(10, WALK)) == floor


@pytest.mark.parametrize("ratio", [0.9, 1.0, 1.3, 1.6])
@pytest.mark.parametrize("told", [35_904, 24_000, 15_000], ids=["true", "smaller", "smallest"])
def test_copilots_edge_lands_where_exact_counts_would_put_it(ratio: float, told: int):
    """Whatever Copilot is told of the budget, the tools' count makes its edge land where the
    true budget is (as far as the count can go: not below 0)."""
    max_input, tools = 35_904, 12_585 * ratio
    target = copilot_tools_target(told, tools, ratio, max_input)
    if told - (max_input - tools) / ratio < 0:
        assert target == 0
        return
    edge = 0.9 * (told - target)  # the most of its own count Copilot then admits
    assert ratio * edge + tools == pytest.approx(0.9 * max_input + 0.1 * tools, abs=2)


def test_an_exact_ratio_told_the_true_budget_asks_for_the_tools_true_cost():
    assert copilot_tools_target(35_904, 12_585, 1.0, 35_904) == 12_585
