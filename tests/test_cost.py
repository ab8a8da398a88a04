"""The cost of a request from its usage, and the totals of the usage history."""

from __future__ import annotations

import datetime

import pytest

from tokengauge.cost import CostTotal, cost_totals, format_usd, request_cost, start_of_day
from tokengauge.messages import Usage
from tokengauge.settings import Pricing

# $ per million tokens: input 3, cached input 0.30, cache write 3.75, output 15 (Claude Sonnet).
FULL = Pricing(
    input_per_m_tok=3.0,
    output_per_m_tok=15.0,
    cached_input_per_m_tok=0.3,
    cache_write_per_m_tok=3.75,
)
PLAIN = Pricing(input_per_m_tok=2.0, output_per_m_tok=8.0)


def test_fresh_input_and_output() -> None:
    usage = Usage(total_input_tokens=1_000_000, output_tokens=100_000, input_tokens=1_000_000)
    assert request_cost(usage, FULL) == pytest.approx(3.0 + 1.5)


def test_cache_read_and_write_are_priced_apart_from_fresh_input() -> None:
    # Anthropic's shape: 1,000 fresh + 200,000 read + 10,000 written = 211,000 read in total.
    usage = Usage(
        total_input_tokens=211_000,
        input_tokens=1_000,
        cache_read_tokens=200_000,
        cache_write_tokens=10_000,
    )
    expected = (1_000 * 3.0 + 200_000 * 0.3 + 10_000 * 3.75) / 1e6
    assert request_cost(usage, FULL) == pytest.approx(expected)


def test_a_cache_write_without_a_write_price_has_no_cost() -> None:
    usage = Usage(total_input_tokens=2_000, cache_write_tokens=1_000)
    assert request_cost(usage, PLAIN) is None


def test_a_cache_read_without_a_cached_price_costs_input() -> None:
    usage = Usage(total_input_tokens=10_000, cache_read_tokens=8_000)
    assert request_cost(usage, PLAIN) == pytest.approx(10_000 * 2.0 / 1e6)


def test_reasoning_is_part_of_the_output_and_not_counted_twice() -> None:
    # OpenAI: completion_tokens 1,000 includes 600 reasoning tokens.
    usage = Usage(total_input_tokens=0, output_tokens=1_000, reasoning_tokens=600)
    assert request_cost(usage, PLAIN) == pytest.approx(1_000 * 8.0 / 1e6)
    priced = Pricing(input_per_m_tok=2.0, output_per_m_tok=8.0, reasoning_per_m_tok=20.0)
    assert request_cost(usage, priced) == pytest.approx((400 * 8.0 + 600 * 20.0) / 1e6)


def test_reasoning_beyond_the_output_is_capped_at_the_output() -> None:
    usage = Usage(total_input_tokens=0, output_tokens=100, reasoning_tokens=500)
    priced = Pricing(input_per_m_tok=0.0, output_per_m_tok=1.0, reasoning_per_m_tok=10.0)
    assert request_cost(usage, priced) == pytest.approx(100 * 10.0 / 1e6)


def test_unknown_prices_give_no_cost() -> None:
    assert request_cost(Usage(total_input_tokens=100, output_tokens=10), None) is None


def test_free_models_cost_nothing() -> None:
    free = Pricing(input_per_m_tok=0.0, output_per_m_tok=0.0, cache_write_per_m_tok=0.0)
    usage = Usage(total_input_tokens=500, output_tokens=50, cache_write_tokens=100)
    assert request_cost(usage, free) == 0.0


def test_totals_per_model_and_today() -> None:
    today = 1_000_000.0
    records: list[dict[str, object]] = [
        {"kind": "usage", "modelId": "a", "time": today - 10, "costUsd": 0.5},
        {"kind": "usage", "modelId": "a", "time": today + 10, "costUsd": 0.25},
        {"kind": "usage", "modelId": "b", "time": today + 20, "costUsd": 1.0},
        {"kind": "usage", "modelId": "b", "time": today + 30},  # no known cost
        {"kind": "overflow", "modelId": "c", "time": today + 40},
        {"kind": "usage", "modelId": "d", "time": today + 50, "costUsd": True},
    ]
    assert cost_totals(records, today) == {
        "a": CostTotal(0.75, 0.25, 2),
        "b": CostTotal(1.0, 1.0, 1),
    }


def test_start_of_day_is_local_midnight() -> None:
    noon = datetime.datetime(2026, 3, 4, 12, 30).timestamp()
    assert start_of_day(noon) == datetime.datetime(2026, 3, 4).timestamp()


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        pytest.param(0.0, "$0.00", id="nothing"),
        pytest.param(1234.5, "$1,234.50", id="dollars"),
        pytest.param(0.01, "$0.01", id="a-cent"),
        pytest.param(0.0042, "$0.0042", id="below-a-cent"),
        pytest.param(0.00004, "< $0.0001", id="tiny"),
    ],
)
def test_format_usd(amount: float, text: str) -> None:
    assert format_usd(amount) == text
