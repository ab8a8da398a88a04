"""What an overflow error teaches: the request's true size, and a smaller window if it names one.

The true input is the error's count, or the limit (else the window we believed in) plus the excess
it names (at least one), and at least 5% more than we counted; when that is far above our count
(the API's window is not the one we believed in), just 5% more than we counted. An error that
names no number at all (OpenAI's "Your input exceeds the context window of this model") of a
request far below the window teaches the window instead: 90% of what we counted, not below 4,096,
since no count error that large is believable and a smaller window is.
"""

from __future__ import annotations

import math
from typing import Final

import attrs

from tokengauge.calibration.classify import ParsedError
from tokengauge.calibration.fit import REJECT

OVERFLOW_MARGIN: Final = 1.05
NO_COUNT_SHRINK: Final = 0.9
"""An overflow that names no number, of a request far smaller than the window we believed in:
the API's window is below what was sent; it is taken as this share of it."""
NO_COUNT_FLOOR: Final = 4_096
"""…but never below this: a request smaller than any model's window that "overflows" says more
about the server than about its window, and a window learned that small would refuse everything."""


@attrs.frozen
class OverflowLesson:
    """The request's true input size, and the limit to learn if it is a new, smaller one."""

    true_input: int
    limit: int | None


def overflow_lesson(
    error: ParsedError, counted: int, window: int, learned_limit: int | None
) -> OverflowLesson:
    """What an overflow error teaches of a request we `counted`, sent for `window` (what we
    believed), with the limit learned before if any (see the module docstring)."""
    known = learned_limit or window
    limit = error.limit_tokens
    new_limit = limit if limit is not None and limit < min(window, known) else None
    true_input = error.input_tokens
    if true_input is None:  # "exceeded by N tokens", or no number at all
        above = (limit or window) + (error.excess_tokens or 1)
        at_least = math.ceil(counted * OVERFLOW_MARGIN)
        # Far above what we counted, the window was not the API's: learn only "more".
        plausible = above <= REJECT * counted
        true_input = max(above, at_least) if plausible else at_least
        if not plausible and limit is None and error.excess_tokens is None:
            smaller = math.floor(counted * NO_COUNT_SHRINK)
            if NO_COUNT_FLOOR <= smaller < known:
                new_limit = smaller
    return OverflowLesson(true_input, new_limit)
