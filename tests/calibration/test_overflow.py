"""What an overflow error teaches (`calibration.overflow.overflow_lesson`), case by case."""

from __future__ import annotations

import pytest

from tokengauge.calibration.classify import ErrorKind, ParsedError
from tokengauge.calibration.overflow import OverflowLesson, overflow_lesson


def overflow(**numbers: int) -> ParsedError:
    return ParsedError(ErrorKind.OVERFLOW, "too long", **numbers)


@pytest.mark.parametrize(
    ("error", "counted", "window", "learned", "lesson"),
    [
        pytest.param(
            overflow(input_tokens=130_000, limit_tokens=128_000),
            120_000,
            200_000,
            None,
            OverflowLesson(130_000, 128_000),
            id="both-numbers-a-smaller-window",
        ),
        pytest.param(
            overflow(input_tokens=130_000, limit_tokens=128_000),
            120_000,
            200_000,
            100_000,
            OverflowLesson(130_000, None),
            id="a-limit-already-learned-lower-is-kept",
        ),
        pytest.param(
            overflow(excess_tokens=500),
            9_000,
            8_192,
            None,
            OverflowLesson(9_450, None),
            id="excess-only-at-least-5-percent-more",
        ),
        pytest.param(
            overflow(excess_tokens=2_000),
            9_000,
            8_192,
            None,
            OverflowLesson(10_192, None),
            id="excess-only-the-window-plus-the-excess",
        ),
        pytest.param(
            overflow(),
            20_000,
            1_000_000,
            None,
            OverflowLesson(21_000, 18_000),
            id="no-number-far-below-the-window-teaches-the-window",
        ),
        pytest.param(
            overflow(),
            4_000,
            1_000_000,
            None,
            OverflowLesson(4_200, None),
            id="no-number-but-never-a-window-below-4096",
        ),
    ],
)
def test_overflow_lesson(
    error: ParsedError, counted: int, window: int, learned: int | None, lesson: OverflowLesson
) -> None:
    assert overflow_lesson(error, counted, window, learned) == lesson
