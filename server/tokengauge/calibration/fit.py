"""What calibration learns per model: the API's input count as a sum of parts (ARCHITECTURE §7).

For one request the API's count is modelled as

    text × (non-CJK tokens) + cjk × (CJK tokens) + tools × (tokens of the tools' JSON)
    + message × (number of messages) + fixed

where the token counts are tokengauge's own tiktoken counts (`counting.RequestFeatures`). The five
coefficients are learned from every usage report by a small Kalman filter (recursive least
squares with forgetting): it starts from conservative ratios with wide uncertainty, converges
within a few requests, lets older requests weigh less (each report inflates the uncertainty by
1/`FORGETTING`), and cannot be swung by one odd request: an innovation counts for at most
`CLIP` standard deviations, and a count more than `REJECT` times off the prediction teaches
nothing. Coefficients stay within `BOUNDS`. `cautious` adds a margin to them that is wide while
little is known and narrow once the API has spoken.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import attrs

COMPONENTS: Final = ("text", "cjk", "tools", "message", "fixed")


@attrs.frozen
class Prior:
    """What is believed of a model before its API has reported anything: means, spreads, and how
    closely the tools' ratio follows the text's (the tools' JSON is text to the same tokenizer:
    until the API has counted any tools, what it showed of text is the best guess for them)."""

    mean: tuple[float, float, float, float, float]
    std: tuple[float, float, float, float, float]
    text_tools: float = 0.0
    """The correlation of the text and tools ratios."""


APPROXIMATE: Final = Prior(
    mean=(1.15, 1.0, 1.15, 5.0, 6.0), std=(0.2, 0.35, 0.2, 2.5, 12.0), text_tools=0.8
)
"""Our tokenizer stands in for the API's (Claude, Gemini, open models): ratios a little above
tiktoken, wide (text and tools together as wide as 0.25 each would be apart, on a typical agent
request). CJK not above: newer tokenizers take CJK text in about half the tokens
cl100k_base does (o200k_base: 1,046 against 1,950 on the same text), but no estimate may start
below tiktoken's own count."""
EXACT: Final = Prior(
    mean=(1.0, 1.0, 1.0, 4.0, 3.0), std=(0.06, 0.06, 0.1, 2.0, 6.0), text_tools=0.5
)
"""Our tokenizer is the API's (OpenAI's GPT models): text counts are right; the tools' encoding
and the overheads are the API's own business."""
BOUNDS: Final = ((0.3, 4.0), (0.2, 4.0), (0.3, 4.0), (0.0, 64.0), (0.0, 4096.0))
FORGETTING: Final = 0.95
NOISE_SHARE: Final = 0.01
"""Measurement noise: 1% of the count, ..."""
NOISE_FLOOR: Final = 4.0
"""... and at least 4 tokens."""
REFERENCE: Final = (20_000.0, 2_000.0, 12_000.0, 10.0, 1.0)
"""A typical agent request (its features) until a model has seen one of its own."""
REFERENCE_FADING: Final = 0.9
CLIP: Final = 2.5
REJECT: Final = 8.0
STD_CAP: Final = 10.0
"""Forgetting never lets a coefficient's uncertainty grow past 10× its prior's."""

Vector = tuple[float, float, float, float, float]


@attrs.frozen
class Prediction:
    """A predicted count and its standard deviation."""

    mean: float
    std: float


@attrs.define
class ComponentFit:
    """The coefficients of one model, their covariance, and how many reports made them."""

    mean: list[float]
    cov: list[list[float]]
    prior: Prior
    observations: int = 0
    reference: list[float] = attrs.field(factory=lambda: list(REFERENCE))
    """What recent requests were made of (each feature's recent largest, fading by
    `REFERENCE_FADING` per report): margins are shared out for requests like them, so a component
    the last request lacked (tools, after a request without) keeps its share."""

    @classmethod
    def start(cls, prior: Prior) -> ComponentFit:
        """A fit that knows only `prior`."""
        size = len(prior.std)
        cov = [[prior.std[i] ** 2 if i == j else 0.0 for j in range(size)] for i in range(size)]
        text, tools = COMPONENTS.index("text"), COMPONENTS.index("tools")
        cov[text][tools] = cov[tools][text] = prior.text_tools * prior.std[text] * prior.std[tools]
        return cls(list(prior.mean), cov, prior)

    def predict(self, x: Sequence[float]) -> Prediction:
        """The count of something whose features are `x` (see the module docstring)."""
        mean = sum(m * v for m, v in zip(self.mean, x, strict=True))
        variance = _quadratic(self.cov, x)
        return Prediction(mean, math.sqrt(max(0.0, variance)))

    def cautious(self, sigmas: float) -> list[float]:
        """Coefficients with a margin: together `sigmas` standard deviations of the reference
        request's predicted count, shared out by each coefficient's part in that uncertainty (so
        uncertainties that cancel out between components are not paid twice); never below the
        mean."""
        y = self.reference
        py = [sum(c * v for c, v in zip(row, y, strict=True)) for row in self.cov]
        spread = math.sqrt(max(0.0, sum(p * v for p, v in zip(py, y, strict=True))))
        if spread <= 0:
            return list(self.mean)
        return [m + max(0.0, sigmas * p / spread) for m, p in zip(self.mean, py, strict=True)]

    def update(self, x: Sequence[float], actual: float) -> bool:
        """Learn that the API counted `actual` for features `x`; False if it taught nothing.

        A coefficient the update would take past its bound is held at the bound and the others
        learn the count without it (`_step`, again until none goes past): clamping it after the
        update instead kept the others' share of a correction it no longer made, and a series
        of near-identical requests then drove the fixed overhead up while every count came in
        below the prediction (the two windows' test: 2,377 tokens of overhead, every later count
        rejected as 8× off).
        """
        predicted = self.predict(x)
        if actual <= 0 or predicted.mean <= 0:
            return False
        if actual > REJECT * predicted.mean or actual * REJECT < predicted.mean:
            return False
        cov = [[c / FORGETTING for c in row] for row in self.cov]
        held: dict[int, float] = {}
        for _ in range(len(BOUNDS)):
            mean, new_cov = _step(self.mean, cov, x, actual, held)
            past = {
                i: min(high, max(low, m))
                for i, (m, (low, high)) in enumerate(zip(mean, BOUNDS, strict=True))
                if not low <= m <= high
            }
            if not past:
                break
            held |= past
        self.mean, self.cov = mean, new_cov
        self._constrain()
        self.observations += 1
        self.reference = [
            max(r * REFERENCE_FADING, v) for r, v in zip(self.reference, x, strict=True)
        ]
        return True

    def _constrain(self) -> None:
        for i, (low, high) in enumerate(BOUNDS):
            self.mean[i] = min(high, max(low, self.mean[i]))
            cap = (STD_CAP * self.prior.std[i]) ** 2
            if self.cov[i][i] > cap:
                scale = math.sqrt(cap / self.cov[i][i])
                for j in range(len(BOUNDS)):
                    self.cov[i][j] *= scale
                    self.cov[j][i] *= scale
        # Keep the matrix symmetric against rounding.
        n = len(BOUNDS)
        for i in range(n):
            for j in range(i + 1, n):
                average = (self.cov[i][j] + self.cov[j][i]) / 2
                self.cov[i][j] = self.cov[j][i] = average

    def to_json(self) -> dict[str, Any]:
        """The fit as a JSON document (for the ledger)."""
        return {
            "mean": list(self.mean),
            "cov": [list(r) for r in self.cov],
            "n": self.observations,
            "ref": list(self.reference),
        }

    @classmethod
    def from_json(cls, data: object, prior: Prior) -> ComponentFit | None:
        """A fit from `to_json`'s document; None if it is not one."""
        if not isinstance(data, dict):
            return None
        mean, cov, n = data.get("mean"), data.get("cov"), data.get("n")
        size = len(COMPONENTS)
        if not (_numbers(mean, size) and isinstance(cov, list) and len(cov) == size):
            return None
        if not all(_numbers(row, size) for row in cov) or not isinstance(n, int):
            return None
        assert isinstance(mean, list)  # for mypy: _numbers checked it
        reference = data.get("ref")
        fit = cls(
            [float(v) for v in mean],
            [[float(v) for v in row] for row in cov],
            prior,
            n,
            [float(v) for v in reference] if _numbers(reference, size) else list(REFERENCE),  # type: ignore[union-attr]
        )
        fit._constrain()
        return fit


def features(other: float, cjk: float, tools: float, messages: float, fixed: float) -> Vector:
    """A feature vector in `COMPONENTS` order."""
    return (other, cjk, tools, messages, fixed)


def _step(
    mean: Sequence[float],
    cov: Sequence[Sequence[float]],
    x: Sequence[float],
    actual: float,
    held: dict[int, float],
) -> tuple[list[float], list[list[float]]]:
    """One Kalman update of `mean` and `cov` by the count `actual` of features `x`, the
    coefficients of `held` fixed at their values (their uncertainty kept, their correlation with
    the others dropped: the count teaches them nothing more)."""
    free = [i for i in range(len(x)) if i not in held]
    fixed = [held.get(i, m) for i, m in enumerate(mean)]
    predicted = sum(m * v for m, v in zip(fixed, x, strict=True))
    px = {i: sum(cov[i][j] * x[j] for j in free) for i in free}
    noise = max(NOISE_FLOOR, NOISE_SHARE * actual) ** 2
    s = sum(px[i] * x[i] for i in free) + noise
    limit = CLIP * math.sqrt(s)
    innovation = max(-limit, min(limit, actual - predicted))
    gain = {i: px[i] / s for i in free}
    updated = [fixed[i] + gain.get(i, 0.0) * innovation for i in range(len(x))]
    new_cov = [list(row) for row in cov]
    for i in range(len(x)):
        for j in range(len(x)):
            if i in gain and j in gain:
                new_cov[i][j] = cov[i][j] - gain[i] * px[j]
            elif i != j and (i in held or j in held):
                new_cov[i][j] = 0.0
    return updated, new_cov


def _quadratic(matrix: list[list[float]], x: Sequence[float]) -> float:
    return sum(x[i] * matrix[i][j] * x[j] for i in range(len(x)) for j in range(len(x)))


def _numbers(value: object, size: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == size
        and all(isinstance(v, (int, float)) and math.isfinite(v) for v in value)
    )
