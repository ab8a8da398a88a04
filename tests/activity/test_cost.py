"""The cost of a request from its usage, and the totals of the usage history."""

from __future__ import annotations

import datetime

import pytest

from tokengauge.activity.cost import (
    CostTotal,
    cache_saving,
    cost_totals,
    request_cost,
    request_cost_of,
    split_text,
    start_of_day,
)
from tokengauge.messages import Usage
from tokengauge.models.prices import MAX_REQUEST_COST_USD, USD_TICKS, reported_usd
from tokengauge.settings import Pricing
from tokengauge.upstream.dialects.events import header_cost, reported_cost

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


def test_what_the_cache_saved_is_its_reads_at_input_less_cached_input() -> None:
    usage = Usage(total_input_tokens=211_000, cache_read_tokens=200_000, cache_write_tokens=10_000)
    assert cache_saving(usage, FULL) == pytest.approx(200_000 * (3.0 - 0.3) / 1e6)
    assert cache_saving(usage, PLAIN) is None  # no cached price: no saving claimed
    assert cache_saving(usage, None) is None
    assert cache_saving(Usage(total_input_tokens=5_000), FULL) is None  # nothing read
    dearer = Pricing(input_per_m_tok=1.0, output_per_m_tok=2.0, cached_input_per_m_tok=1.5)
    assert cache_saving(usage, dearer) == 0.0  # a cached price above input saves nothing


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
    ("value", "per_usd", "expected"),
    [
        pytest.param(0.00333825, 1, 0.00333825, id="openrouter-cost"),
        pytest.param(1_466_250, USD_TICKS, 0.000146625, id="xai-ticks"),
        pytest.param("2.85e-05", 1, 2.85e-05, id="litellm-header"),
        pytest.param(" 0.5 ", 1, 0.5, id="header-with-spaces"),
        pytest.param(0, 1, 0.0, id="free"),
        pytest.param("None", 1, None, id="litellm-knows-none"),
        pytest.param("", 1, None, id="empty-header"),
        pytest.param(None, 1, None, id="null"),
        pytest.param(True, 1, None, id="boolean"),
        pytest.param("0x10", 1, None, id="not-a-decimal"),
        pytest.param("1_000", 1, None, id="underscores"),
        pytest.param("\uff15", 1, None, id="full-width-digit"),
        pytest.param("1e-3", 1, 0.001, id="exponent"),
        pytest.param(".25", 1, 0.25, id="no-leading-zero"),
        pytest.param(-0.01, 1, None, id="negative"),
        pytest.param(float("nan"), 1, None, id="nan"),
        pytest.param("NaN", 1, None, id="nan-header"),
        pytest.param("inf", 1, None, id="infinite-header"),
        pytest.param(1e308, 1, None, id="beyond-any-request"),
        pytest.param(10**400, USD_TICKS, None, id="400-digit-ticks"),
        pytest.param(MAX_REQUEST_COST_USD, 1, MAX_REQUEST_COST_USD, id="the-bound"),
        pytest.param({"usd": 1}, 1, None, id="object"),
    ],
)
def test_a_reported_cost_is_a_bounded_finite_amount(
    value: object, per_usd: int, expected: float | None
) -> None:
    assert reported_usd(value, per_usd) == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(
    ("reported", "source"),
    [
        pytest.param(0.002, "reported", id="plausible"),
        pytest.param(6.4, "reported", id="the-dearest-price-for-each-token"),
        pytest.param(9_999_999.0, "estimate", id="more-than-any-price"),
    ],
)
def test_a_reported_cost_beyond_any_price_gives_way_to_the_estimate(
    reported: float, source: str
) -> None:
    usage = Usage(total_input_tokens=60, output_tokens=4, input_tokens=60, cost_usd=reported)
    cost, taken = request_cost_of(usage, PLAIN)
    assert taken == source
    assert cost == (reported if source == "reported" else request_cost(usage, PLAIN))


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        pytest.param({"cost": 0.00007159, "is_byok": False}, 0.00007159, id="openrouter"),
        pytest.param(
            {
                "cost": 0.0001,
                "is_byok": True,
                "cost_details": {"upstream_inference_cost": 0.002},
            },
            0.0021,
            id="openrouter-byok-fee-and-own-key",
        ),
        pytest.param(
            {"cost": 0.0001, "is_byok": True, "cost_details": {"upstream_inference_cost": None}},
            None,
            id="openrouter-byok-without-upstream",
        ),
        pytest.param(
            {"cost": 0.003, "cost_details": {"upstream_inference_cost": None}},
            0.003,
            id="openrouter-not-byok",
        ),
        pytest.param({"cost_in_usd_ticks": 177_640_000}, 0.017764, id="xai-responses"),
        pytest.param({"cost_in_usd_ticks": -5, "cost": 0.5}, 0.5, id="bad-ticks"),
        pytest.param({"prompt_tokens": 10}, None, id="no-cost"),
        pytest.param({"cost": "0.5"}, 0.5, id="cost-as-text"),
    ],
)
def test_the_cost_a_usage_object_states(usage: dict[str, object], expected: float | None) -> None:
    assert reported_cost(usage) == (None if expected is None else pytest.approx(expected))


def test_a_litellm_proxy_states_the_cost_in_a_header() -> None:
    assert header_cost({"x-litellm-response-cost": "2.85e-05"}) == pytest.approx(2.85e-05)
    assert header_cost({"x-litellm-response-cost": "None"}) is None
    assert header_cost({}) is None


def test_the_reported_cost_wins_and_the_price_table_is_the_fallback() -> None:
    usage = Usage(total_input_tokens=1_000_000, output_tokens=100_000)
    assert request_cost_of(usage, FULL) == (pytest.approx(4.5), "estimate")
    assert request_cost_of(Usage(1_000_000, 100_000, cost_usd=0.5), FULL) == (0.5, "reported")
    assert request_cost_of(Usage(1_000_000, 100_000, cost_usd=0.5), None) == (0.5, "reported")
    hostile = Usage(1_000_000, 100_000, cost_usd=float("inf"))
    assert request_cost_of(hostile, FULL) == (pytest.approx(4.5), "estimate")
    assert request_cost_of(usage, None) == (None, "estimate")


@pytest.mark.parametrize(
    ("total", "reported", "text"),
    [
        pytest.param(0.42, None, "$0.42 (estimated)", id="estimated"),
        pytest.param(0.42, 0.42, "$0.42 (reported by the API)", id="reported"),
        pytest.param(0.3, 0.1 + 0.2, "$0.30 (reported by the API)", id="rounding"),
        pytest.param(
            0.42, 0.40, "$0.42 ($0.40 reported by the API, $0.02 estimated)", id="both-parts"
        ),
    ],
)
def test_a_sum_of_costs_says_what_part_is_estimated(
    total: float, reported: float | None, text: str
) -> None:
    assert split_text(total, reported) == text


def test_totals_tell_the_reported_part_apart() -> None:
    records = [
        {"modelId": "m", "costUsd": 0.5, "costSource": "reported", "time": 200.0},
        {"modelId": "m", "costUsd": 0.25, "time": 50.0},  # an older record: an estimate
        {"modelId": "m", "costUsd": 0.125, "costSource": "estimate", "time": 200.0},
    ]
    assert cost_totals(records, today=100.0) == {
        "m": CostTotal(0.875, 0.625, 3, reported_usd=0.5, today_reported_usd=0.5)
    }
