"""What VS Code is told of a window, in Copilot's units: the ideal, its bounds, and the damping."""

from __future__ import annotations

import math
import random

import attrs
import pytest

from tokengauge.calibration.declared import (
    INPUT_BAND,
    QUANTUM,
    WINDOW_BAND,
    Basis,
    Declared,
    damped,
    ideal,
)

BASIS = Basis(
    window=40_000,
    max_input=35_904,
    tools=12_585.0,
    tools_floor=360,
    ratio=1.0,
    whole_ratio=None,
    least_output=1_024,
)


def copilots_edge(declared: Declared, basis: Basis) -> float:
    """The true size of the largest request Copilot renders, its tools' count at the floor."""
    return 0.9 * basis.ratio * (declared.max_input - basis.tools_floor) + basis.tools


def copilots_compaction(declared: Declared, basis: Basis, threshold: float = 0.8) -> float:
    """The true size at which Copilot's (count + tools' count) ÷ maxInputTokens reaches 0.8."""
    return basis.ratio * (threshold * declared.max_input - basis.tools_floor) + basis.tools


@pytest.mark.parametrize("ratio", [0.75, 1.0, 1.3, 1.6, 1.8])
def test_copilots_edge_is_the_true_budgets_and_it_compacts_just_below(ratio: float):
    basis = attrs.evolve(BASIS, tools=12_585 * ratio, ratio=ratio)
    best = ideal(basis)
    exact_edge = 0.9 * basis.max_input + 0.1 * basis.tools  # exact counts, told the true budget
    assert copilots_edge(best, basis) == pytest.approx(exact_edge, abs=2 * ratio)
    # An exact counter told the true budget compacts at 0.8 of it; told this, Copilot compacts
    # just below its edge.
    assert copilots_compaction(best, basis) > 0.8 * basis.max_input
    assert copilots_compaction(best, basis) >= 0.85 * exact_edge


def test_below_a_ratio_of_one_the_window_stays_the_true_one():
    basis = attrs.evolve(BASIS, tools=12_585 * 0.6, ratio=0.6, whole_ratio=0.6)
    best = ideal(basis)
    assert best.window == basis.window  # never above what the API really takes
    assert best.max_input == basis.window - basis.least_output  # as far as it may go
    assert best.max_output == basis.least_output


@pytest.mark.parametrize("whole", [1.2, 1.6, 2.5])
def test_above_one_the_window_is_in_the_agent_hosts_units(whole: float):
    best = ideal(attrs.evolve(BASIS, ratio=whole, tools=12_585 * whole, whole_ratio=whole))
    assert best.window == math.floor(BASIS.window / whole)
    assert 0 < best.max_input <= best.window - BASIS.least_output
    assert (best.true_window, best.true_max_input) == (BASIS.window, BASIS.max_input)


def test_without_tools_it_is_the_budget_in_copilots_count():
    best = ideal(attrs.evolve(BASIS, tools=0.0, tools_floor=0, ratio=1.25))
    assert best.max_input == math.ceil(BASIS.max_input / 1.25)
    assert best.scale == pytest.approx(1 / 1.25, rel=1e-3)


def test_a_new_declaration_has_room_to_drift_and_whole_quanta():
    first = damped(None, BASIS)
    best = ideal(BASIS)
    assert best.max_input < first.max_input <= best.max_input * (1 + INPUT_BAND)
    assert first.max_input % QUANTUM == 0 and first.window == BASIS.window


def test_it_stays_while_the_ideal_stays_in_the_band_and_moves_once_out():
    current = damped(None, BASIS)
    for ratio in (1.0, 1.01, 0.99, 1.02, 1.0):  # calibration's noise
        assert damped(current, attrs.evolve(BASIS, ratio=ratio)) == current
    moved = damped(current, attrs.evolve(BASIS, ratio=1.2))  # the content changed
    assert moved.max_input < current.max_input
    assert damped(moved, attrs.evolve(BASIS, ratio=1.2)) == moved


def test_noise_never_flaps_between_two_values():
    rng = random.Random(7)
    current = damped(None, BASIS)
    values = [current]
    for _ in range(500):
        noisy = attrs.evolve(BASIS, ratio=1.3 * rng.uniform(0.98, 1.02), whole_ratio=1.3)
        current = damped(current, noisy)
        if current != values[-1]:
            values.append(current)
    assert len(values) <= 3  # the first, the move to 1.3, at most one settling step


def test_the_window_never_rises_above_its_ideal():
    current = damped(None, attrs.evolve(BASIS, whole_ratio=1.25))
    lower = damped(current, attrs.evolve(BASIS, whole_ratio=1.3))
    assert lower.window <= ideal(attrs.evolve(BASIS, whole_ratio=1.3)).window
    within = damped(lower, attrs.evolve(BASIS, whole_ratio=1.3 * (1 - WINDOW_BAND / 2)))
    assert within.window == lower.window


def test_new_true_sizes_start_afresh():
    current = damped(None, BASIS)
    smaller = attrs.evolve(BASIS, window=20_000, max_input=15_904)
    moved = damped(current, smaller)
    assert (moved.true_window, moved.true_max_input) == (20_000, 15_904)
    assert moved.window <= 20_000


@pytest.mark.parametrize(
    "document",
    [
        None,
        {},
        {"max_input": "x"},
        {"max_input": 50, "window": 40, "true_max_input": 30, "true_window": 40},
        [1, 2],
    ],
)
def test_a_damaged_stored_declaration_is_none(document: object):
    assert Declared.from_document(document) is None


def test_before_copilots_count_was_seen_the_true_sizes_are_declared():
    basis = attrs.evolve(BASIS, ratio=None, whole_ratio=1.4)
    assert damped(None, basis) == ideal(basis) == Declared(35_904, 40_000, 35_904, 40_000)
    assert ideal(basis).scale == 1


def test_a_stored_declaration_round_trips():
    declared = damped(None, BASIS)
    assert Declared.from_document(declared.to_document()) == declared
