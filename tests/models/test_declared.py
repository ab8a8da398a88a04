"""What VS Code is told of a window: in the client's units, never above the true one, damped."""

from __future__ import annotations

import math
import random

import attrs
import pytest

from tokengauge.models.declared import (
    BAND_ABOVE,
    BAND_BELOW,
    QUANTUM,
    Basis,
    Declared,
    damped,
    ideal,
)

BASIS = Basis(window=40_000, max_input=35_904, ratio=None, least_output=1_024)
TRUE = Declared(35_904, 40_000, 35_904, 40_000)


def with_ratio(ratio: float | None) -> Basis:
    return attrs.evolve(BASIS, ratio=ratio)


@pytest.mark.parametrize("ratio", [1.2, 1.45, 1.6, 1.8, 2.5])
def test_above_one_the_agent_host_compacts_and_blocks_at_its_share_of_the_true_window(
    ratio: float,
):
    best = ideal(with_ratio(ratio))
    assert best.window == math.floor(BASIS.window / ratio)
    # The Agent Host counts true ÷ ratio: it reaches 0.8 and 0.95 of what it is told at 0.8 and
    # 0.95 of the true window.
    assert 0.8 * best.window * ratio == pytest.approx(0.8 * BASIS.window, abs=2)
    assert 0.95 * best.window * ratio <= 0.95 * BASIS.window
    # The input budget and the output in the same units.
    assert best.max_input == pytest.approx(BASIS.max_input / ratio, abs=1)
    assert best.scale == pytest.approx(1 / ratio, rel=1e-3)


@pytest.mark.parametrize("ratio", [0.6, 0.75, 0.9])
def test_below_one_the_true_window_with_more_of_it_for_input(ratio: float):
    best = ideal(with_ratio(ratio))
    assert best.window == BASIS.window  # never above what the API really takes
    assert best.max_input == min(math.floor(BASIS.max_input / ratio), 40_000 - 1_024)
    assert best.max_output >= BASIS.least_output and best.scale > 1


@pytest.mark.parametrize("ratio", [None, 1.0, 0.98, 1.025])
def test_before_any_ratio_and_near_one_the_true_sizes(ratio: float | None):
    assert ideal(with_ratio(ratio)) == damped(None, with_ratio(ratio)) == TRUE
    assert TRUE.scale == 1 and TRUE.max_output == 4_096


def test_sizes_other_than_the_true_ones_are_whole_quanta_never_above_the_ideal():
    for ratio in (1.37, 0.71):
        first = damped(None, with_ratio(ratio))
        best = ideal(with_ratio(ratio))
        assert first.max_input % QUANTUM == 0 and first.max_input <= best.max_input
        assert first.window <= best.window and first.window <= BASIS.window
        assert first.window % QUANTUM == 0 or first.window == BASIS.window


def test_it_stays_while_the_ideal_stays_in_the_band_and_moves_once_out():
    current = damped(None, with_ratio(1.3))
    for ratio in (1.3, 1.32, 1.28, 1.33, 1.27):  # calibration's noise
        assert damped(current, with_ratio(ratio)) == current
    moved = damped(current, with_ratio(1.5))  # the content changed
    assert moved.window < current.window
    assert damped(moved, with_ratio(1.5)) == moved
    assert damped(moved, with_ratio(1.2)).window > moved.window
    assert damped(moved, with_ratio(1.0)) == TRUE


@pytest.mark.parametrize("centre", [0.7, 1.3, 1.7])
def test_noise_never_flaps_between_two_values(centre: float):
    rng = random.Random(7)
    current = damped(None, BASIS)
    values = [current]
    for _ in range(500):
        current = damped(current, with_ratio(centre * rng.uniform(0.985, 1.015)))
        if current != values[-1]:
            values.append(current)
    assert len(values) == 2  # the true sizes, then the move to the centre


def test_the_window_is_kept_only_within_its_band():
    current = damped(None, with_ratio(1.3))
    # Kept from where the current window is the band's share above the ideal to where it is the
    # band's share below it; moved beyond.
    highest = BASIS.window * (1 + BAND_ABOVE) / current.window
    lowest = BASIS.window * (1 - BAND_BELOW) / current.window
    for ratio in (highest * 0.995, lowest * 1.005):
        assert damped(current, with_ratio(ratio)) == current
    for ratio in (highest * 1.02, lowest * 0.98):
        assert damped(current, with_ratio(ratio)) != current


def test_new_true_sizes_start_afresh():
    current = damped(None, with_ratio(1.2))
    smaller = attrs.evolve(BASIS, window=20_000, max_input=15_904, ratio=1.2)
    moved = damped(current, smaller)
    assert (moved.true_window, moved.true_max_input) == (20_000, 15_904)
    assert moved.window <= 20_000 / 1.2


def test_a_tiny_window_still_leaves_one_token_either_side():
    for ratio in (30.0, 0.01):
        declared = damped(None, Basis(window=60, max_input=45, ratio=ratio, least_output=15))
        assert declared.max_input >= 1 and declared.max_output >= 1
        assert declared.window <= 60


@pytest.mark.parametrize(
    "document",
    [
        None,
        {},
        {"max_input": "x"},
        {"max_input": 50, "window": 40, "true_max_input": 30, "true_window": 40},
        {"max_input": 30, "window": 50, "true_max_input": 30, "true_window": 40},
        [1, 2],
    ],
)
def test_a_damaged_stored_declaration_is_none(document: object):
    assert Declared.from_document(document) is None


def test_a_stored_declaration_round_trips():
    declared = damped(None, with_ratio(1.6))
    assert Declared.from_document(declared.to_document()) == declared
