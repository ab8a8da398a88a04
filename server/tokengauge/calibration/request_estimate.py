"""What a request is estimated to cost in the API's tokens, by part, and the arithmetic of it.

A `RequestEstimate` is what `calibration.estimates.Calibration` answers for a request: its tools,
its fixed overhead and each message (with where that message's count came from: an API actual or
the fit), plus the raw counts it was made from. The fit's features of a message and of a request,
and the rounding every count goes through, live here too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, Literal

import attrs

from tokengauge.calibration.fit import features
from tokengauge.counting.request import RequestFeatures, TextCount

_EPSILON: Final = 1e-9

Source = Literal["actual", "estimate"]


def scaled(raw: int, scale: float) -> int:
    """`ceil(raw × scale)`, immune to float noise such as 100 × 1.05 = 105.00000000000001."""
    return math.ceil(raw * scale - _EPSILON) if raw > 0 else 0


def largest_remainder(total: int, weights: Sequence[int]) -> list[int]:
    """Split `total` in proportion to `weights` into integers that add up to `total`."""
    weight_sum = sum(weights)
    if total <= 0 or not weights:
        return [0] * len(weights)
    if weight_sum <= 0:
        weights, weight_sum = [1] * len(weights), len(weights)
    quotas = [total * weight / weight_sum for weight in weights]
    shares = [math.floor(quota) for quota in quotas]
    by_remainder = sorted(range(len(quotas)), key=lambda i: quotas[i] - shares[i], reverse=True)
    for index in by_remainder[: total - sum(shares)]:
        shares[index] += 1
    return shares


@attrs.frozen
class MessageEstimate:
    """One message's count (true size), where it came from, and the stored actual if any."""

    tokens: int
    source: Source
    actual: int | None = None


@attrs.frozen
class RequestEstimate:
    """The count of a whole request, by category; `messages` includes the system prompt."""

    tools: int
    fixed: int
    messages: tuple[MessageEstimate, ...]
    features: RequestFeatures
    ratios: dict[str, float]
    tools_saved: int = 0
    """What the tools' full documentation would have added (`toolDocs` other than `full`)."""
    exact: int | None = None
    """The server's own count of this very request, when it gave one (`Counts.anchor`)."""

    @property
    def total(self) -> int:
        """Everything together: the server's count of the request if it gave one."""
        if self.exact is not None:
            return self.exact
        return self.tools + self.fixed + sum(m.tokens for m in self.messages)

    @property
    def system(self) -> int:
        """The system prompt's messages."""
        roles = self.features.roles
        return sum(
            m.tokens for m, role in zip(self.messages, roles, strict=True) if role == "system"
        )

    @property
    def raw_total(self) -> int:
        """Our raw tiktoken count of the messages and the tools' JSON."""
        return self.features.text.total + self.features.tools


def message_features(count: TextCount) -> tuple[float, ...]:
    """The fit's features of one message."""
    return features(count.other, count.cjk, 0, 1, 0)


def request_features(request: RequestFeatures) -> tuple[float, ...]:
    """The fit's features of a whole request."""
    text = request.text
    return features(text.other, text.cjk, request.tools, len(request.messages), 1)


def tokens(coefficients: Sequence[float], x: Sequence[float]) -> int:
    """A count from coefficients and features, as a whole number of tokens."""
    value = sum(c * v for c, v in zip(coefficients, x, strict=True))
    return max(0, math.ceil(value - _EPSILON))
