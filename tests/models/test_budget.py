"""Tests for tokengauge.models.budget: output reservation, the input budget and `max_tokens`
clamping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokengauge.models.budget import (
    clamp_max_tokens,
    effective_window,
    max_input_tokens,
    reserved_output,
)
from tokengauge.models.catalog import ModelSpec, resolve_model
from tokengauge.settings import ModelSettings, ProviderSettings

PROVIDER = ProviderSettings(id="p", base_url="http://localhost:1/v1")


def spec(window: int, max_output: int, reserved: int | None = None) -> ModelSpec:
    return ModelSpec(
        id="m",
        name="m",
        family="gpt-4o",
        provider=PROVIDER,
        context_window=window,
        max_output_tokens=max_output,
        reserved_output_tokens=reserved,
    )


def known(model_id: str, **configured: int) -> ModelSpec:
    return resolve_model(ModelSettings(id=model_id, provider="p", **configured), PROVIDER)


# --- reserved output ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        # min(max output, 16384, window // 4)
        pytest.param(known("gpt-4o"), 16_384, id="gpt-4o-cap-16k"),  # 128000 / 16384
        pytest.param(known("claude-sonnet-4-5"), 16_384, id="claude-16k-not-64k"),
        pytest.param(known("gpt-4"), 8_192 // 4, id="gpt-4-quarter-window"),  # 8192 / 4096
        pytest.param(known("gpt-3.5-turbo"), 4_096, id="gpt-3.5-max-output"),  # 16385 / 4096
        pytest.param(spec(100_000, 1_000), 1_000, id="small-output-cap"),
        pytest.param(spec(40_000, 30_000), 10_000, id="quarter-window"),
        pytest.param(spec(1_000_000, 128_000), 16_384, id="huge-window"),
        # configured wins
        pytest.param(spec(128_000, 16_384, reserved=2_000), 2_000, id="configured"),
        pytest.param(spec(128_000, 16_384, reserved=50_000), 50_000, id="configured-above-cap"),
        pytest.param(known("gpt-4o", reserved_output_tokens=4_000), 4_000, id="configured-known"),
        pytest.param(spec(8_000, 4_000, reserved=9_000), 7_999, id="configured-beyond-window"),
    ],
)
def test_reserved_output(model: ModelSpec, expected: int) -> None:
    assert reserved_output(model) == expected


def test_reserved_output_follows_a_learned_limit() -> None:
    model = spec(128_000, 16_384)
    # A learned 40k limit makes the window 40k: a quarter is 10k.
    assert reserved_output(model, 40_000) == 10_000
    # A learned limit above the window changes nothing.
    assert reserved_output(model, 1_000_000) == 16_384


# --- the input budget ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "learned", "expected"),
    [
        pytest.param(known("gpt-4o"), None, 128_000 - 16_384, id="gpt-4o"),
        pytest.param(known("gpt-4"), None, 8_192 - 2_048, id="gpt-4"),
        pytest.param(known("claude-sonnet-4-5"), None, 200_000 - 16_384, id="claude"),
        pytest.param(
            known("gpt-4o"), 100_000, 100_000 - min(16_384, 100_000 // 4), id="learned-lower"
        ),
        pytest.param(known("gpt-4o"), 60_000, 60_000 - 15_000, id="learned-much-lower"),
        pytest.param(known("gpt-4o"), 500_000, 128_000 - 16_384, id="learned-above-ignored"),
        pytest.param(known("gpt-4o"), 128_000, 128_000 - 16_384, id="learned-equal"),
        pytest.param(spec(128_000, 16_384, reserved=1_000), None, 127_000, id="configured"),
        pytest.param(
            spec(128_000, 16_384, reserved=1_000), 50_000, 49_000, id="configured-learned"
        ),
        pytest.param(spec(2, 1), None, 2 - min(1, 2 // 4), id="tiny-window"),
    ],
)
def test_max_input_tokens(model: ModelSpec, learned: int | None, expected: int) -> None:
    assert max_input_tokens(model, learned) == expected


def test_max_input_tokens_is_never_below_one() -> None:
    assert max_input_tokens(spec(8_000, 4_000, reserved=9_000), None) >= 1
    assert max_input_tokens(spec(1, 1), None) >= 1


def test_effective_window() -> None:
    model = spec(128_000, 16_384)
    assert effective_window(model, None) == 128_000
    assert effective_window(model, 90_000) == 90_000
    assert effective_window(model, 200_000) == 128_000


@settings(max_examples=300, deadline=None)
@given(
    window=st.integers(2, 10_000_000),
    output_share=st.floats(0.0001, 0.9999),
    reserved=st.none() | st.integers(1, 20_000_000),
    learned=st.none() | st.integers(2, 20_000_000),
)
def test_input_budget_plus_reservation_fits_the_window(
    window: int, output_share: float, reserved: int | None, learned: int | None
) -> None:
    model = spec(window, max(1, int(window * output_share)), reserved)
    effective = min(window, learned) if learned is not None else window
    budget = max_input_tokens(model, learned)
    assert 1 <= budget <= effective
    assert budget + reserved_output(model, learned) <= effective


# --- max_tokens ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "input_tokens", "learned", "requested", "expected"),
    [
        # room = window − input − safety, where safety is 1% of the window and at least 128.
        pytest.param(spec(128_000, 16_384), 10_000, None, None, 16_384, id="model-cap"),
        pytest.param(
            spec(128_000, 16_384), 120_000, None, None, 128_000 - 120_000 - 1_280, id="room"
        ),
        pytest.param(spec(128_000, 16_384), 10_000, None, 500, 500, id="requested"),
        pytest.param(spec(128_000, 16_384), 10_000, None, 50_000, 16_384, id="requested-above-cap"),
        pytest.param(
            spec(128_000, 16_384), 120_000, None, 10_000, 128_000 - 120_000 - 1_280, id="req-room"
        ),
        pytest.param(
            spec(128_000, 16_384), 60_000, 64_000, None, 64_000 - 60_000 - 640, id="learned-limit"
        ),
        pytest.param(
            spec(128_000, 16_384), 10_000, 999_999, None, 16_384, id="learned-above-ignored"
        ),
        pytest.param(spec(8_192, 4_096), 7_000, None, None, 8_192 - 7_000 - 128, id="min-safety"),
        pytest.param(spec(128_000, 16_384), 127_000, None, None, 1, id="full-window"),
        pytest.param(spec(128_000, 16_384), 500_000, None, None, 1, id="over-window"),
        pytest.param(spec(128_000, 16_384), 10_000, None, 0, 1, id="requested-zero"),
    ],
)
def test_clamp_max_tokens(
    model: ModelSpec, input_tokens: int, learned: int | None, requested: int | None, expected: int
) -> None:
    assert clamp_max_tokens(model, input_tokens, learned, requested) == expected


@settings(max_examples=300, deadline=None)
@given(
    window=st.integers(200, 2_000_000),
    max_output=st.integers(1, 200_000),
    input_tokens=st.integers(0, 2_000_000),
    requested=st.none() | st.integers(1, 500_000),
)
def test_clamped_request_fits_the_window(
    window: int, max_output: int, input_tokens: int, requested: int | None
) -> None:
    model = spec(window, max_output)
    max_tokens = clamp_max_tokens(model, input_tokens, None, requested)
    assert 1 <= max_tokens <= max_output
    if requested is not None:
        assert max_tokens <= max(1, requested)
    if max_tokens > 1:
        assert input_tokens + max_tokens <= window
