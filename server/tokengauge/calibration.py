"""Estimates with margins, and learning from what the API reports (DESIGN §4).

Sources, best first: the API's own count for a message digest (+2%); the tiktoken count scaled by
+5% and the model's correction factor; the character fallback inside `TextCounter` (+10%).
Every usage report is spread over the request's messages and stored per digest, and nudges the
factor (`f = 0.7 f + 0.3 actual/raw`); every overflow error raises the factor and may lower the
model's learned limit. The `epoch` changes whenever a count could change.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Final, Literal

import attrs

from tokengauge.counting import RawRequestCount, RequestCounter
from tokengauge.ledger import Ledger
from tokengauge.models import ModelSpec
from tokengauge.overflow import ErrorKind, ParsedError
from tokengauge.wire import Message, Tool

log = logging.getLogger(__name__)

ACTUAL_MARGIN: Final = 1.02
ESTIMATE_MARGIN: Final = 1.05
FACTOR_MIN: Final = 0.5
FACTOR_MAX: Final = 3.0
FACTOR_WEIGHT_NEW: Final = 0.3
_EPSILON: Final = 1e-9

Source = Literal["actual", "estimate"]


def scaled(raw: int, scale: float) -> int:
    """`ceil(raw × scale)`, immune to float noise such as 100 × 1.05 = 105.00000000000001."""
    return math.ceil(raw * scale - _EPSILON) if raw > 0 else 0


def clamp_factor(factor: float) -> float:
    """Keep a correction factor within [0.5, 3]."""
    return min(FACTOR_MAX, max(FACTOR_MIN, factor))


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
class Usage:
    """Token usage of one response, as the API reported it."""

    total_input_tokens: int
    """Everything the model read (Anthropic: input + cache read + cache write)."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@attrs.frozen
class MessageEstimate:
    """One message's count and where it came from."""

    tokens: int
    raw: int
    source: Source


@attrs.frozen
class RequestEstimate:
    """The count of a whole request, by category."""

    system: int
    tools: int
    messages: tuple[MessageEstimate, ...]
    raw: RawRequestCount
    factor: float

    @property
    def total(self) -> int:
        """Everything together."""
        return self.system + self.tools + sum(m.tokens for m in self.messages)

    @property
    def actual_messages(self) -> int:
        """How many messages were counted from API actuals."""
        return sum(1 for m in self.messages if m.source == "actual")


class Calibration:
    """Correction factors, cached actuals and learned limits, over one ledger."""

    def __init__(self, ledger: Ledger, clock: Callable[[], float] = time.time) -> None:
        self.ledger = ledger
        self._clock = clock
        self._factors: dict[str, float] = {}
        self.epoch = int(clock() * 1000)

    def factor(self, model_id: str) -> float:
        """The model's correction factor (1.0 until the API has reported usage)."""
        factor = self._factors.get(model_id)
        if factor is None:
            factor = self.ledger.get_factor(model_id) or 1.0
            self._factors[model_id] = factor
        return factor

    def scale(self, model_id: str) -> float:
        """What a raw tiktoken count is multiplied by for this model."""
        return ESTIMATE_MARGIN * self.factor(model_id)

    def learned_limit(self, model_id: str) -> int | None:
        """The context limit an overflow error taught us, if any."""
        return self.ledger.get_limit(model_id)

    def estimate_text(self, model: ModelSpec, raw: int) -> int:
        """A string's count from its raw tiktoken count."""
        return scaled(raw, self.scale(model.id))

    def estimate_message(self, model: ModelSpec, raw: int, digest: str) -> MessageEstimate:
        """A message's count: the cached API actual if there is one, else the scaled estimate."""
        return self._message_estimate(model, raw, self.ledger.get_actual(model.family, digest))

    def _message_estimate(self, model: ModelSpec, raw: int, actual: int | None) -> MessageEstimate:
        if actual is not None:
            return MessageEstimate(scaled(actual, ACTUAL_MARGIN), raw, "actual")
        return MessageEstimate(self.estimate_text(model, raw), raw, "estimate")

    def estimate_request(
        self,
        model: ModelSpec,
        counter: RequestCounter,
        messages: Sequence[Message],
        tools: Sequence[Tool],
    ) -> RequestEstimate:
        """The whole request's count with its breakdown."""
        raw = counter.request(messages, tools)
        actuals = self.ledger.get_actuals(model.family, raw.digests)
        return RequestEstimate(
            system=self.estimate_text(model, raw.system),
            tools=self.estimate_text(model, raw.tools),
            messages=tuple(
                self._message_estimate(model, message_raw, actual)
                for message_raw, actual in zip(raw.messages, actuals, strict=True)
            ),
            raw=raw,
            factor=self.factor(model.id),
        )

    def _store_actuals(self, model: ModelSpec, estimate: RequestEstimate, actual: int) -> None:
        """Spread `actual` (minus our system and tools counts) over the messages and store it.

        The messages' share never drops below their proportional share of `actual`: when our
        system/tools counts run high, the residual alone would under-count these messages later.
        """
        raw = estimate.raw
        if not raw.messages:
            return
        residual = actual - estimate.system - estimate.tools
        proportional = actual * sum(raw.messages) // max(1, raw.total)
        shares = largest_remainder(max(residual, proportional), raw.messages)
        self.ledger.put_actuals(model.family, dict(zip(raw.digests, shares, strict=True)))

    def _set_factor(self, model: ModelSpec, factor: float) -> float:
        factor = clamp_factor(factor)
        self._factors[model.id] = factor
        self.ledger.set_factor(model.id, factor)
        return factor

    def _history(
        self, model: ModelSpec, kind: str, estimate: RequestEstimate, **fields: object
    ) -> None:
        record: dict[str, object] = {
            "time": self._clock(),
            "kind": kind,
            "modelId": model.id,
            "estimatedTokens": estimate.total,
            "rawTokens": estimate.raw.total,
            "factor": self.factor(model.id),
        }
        record.update(fields)
        self.ledger.append_usage(record)

    def record_usage(self, model: ModelSpec, estimate: RequestEstimate, usage: Usage) -> None:
        """Learn from a response's usage report."""
        actual = usage.total_input_tokens
        if actual <= 0 or estimate.raw.total <= 0:
            log.debug("usage for %s without input tokens: nothing to learn", model.id)
            return
        self._store_actuals(model, estimate, actual)
        old = self.factor(model.id)
        ratio = actual / estimate.raw.total
        new = self._set_factor(model, (1 - FACTOR_WEIGHT_NEW) * old + FACTOR_WEIGHT_NEW * ratio)
        log.info(
            "%s: API counted %d input tokens, we estimated %d (raw %d); factor %.3f → %.3f",
            model.id,
            actual,
            estimate.total,
            estimate.raw.total,
            old,
            new,
        )
        self._history(
            model,
            "usage",
            estimate,
            inputTokens=actual,
            outputTokens=usage.output_tokens,
            cacheReadTokens=usage.cache_read_tokens,
            cacheWriteTokens=usage.cache_write_tokens,
            reasoningTokens=usage.reasoning_tokens,
        )
        self.epoch += 1

    def learn_overflow(
        self,
        model: ModelSpec,
        estimate: RequestEstimate,
        error: ParsedError,
        window: int,
    ) -> int | None:
        """Learn from an overflow error; returns the newly learned limit, if it changed.

        `window` is the window we believed in when sending. The true input is the error's count,
        or, when the error names none, at least one token more than the limit it overflowed.
        """
        if error.kind is not ErrorKind.OVERFLOW:
            return None
        limit = error.limit_tokens
        new_limit = None
        if limit is not None and limit < min(window, self.learned_limit(model.id) or window):
            self.ledger.set_limit(model.id, limit)
            new_limit = limit
        fits_alone = (
            error.output_tokens is not None
            and error.input_tokens is not None
            and (limit is None or error.input_tokens <= limit)
        )
        if error.input_tokens is not None:
            true_input = error.input_tokens
        else:
            true_input = max((limit or window) + (error.excess_tokens or 1), estimate.total)
        self._store_actuals(model, estimate, true_input)
        old = self.factor(model.id)
        ratio = true_input / max(1, estimate.raw.total)
        blended = (1 - FACTOR_WEIGHT_NEW) * old + FACTOR_WEIGHT_NEW * ratio
        # Input that overflowed on its own must count above the limit next time: never lower f.
        new = self._set_factor(model, blended if fits_alone else max(old, ratio, blended))
        log.warning(
            "%s: overflow (%s); input %s, limit %s, output %s; factor %.3f → %.3f",
            model.id,
            error.message,
            error.input_tokens,
            limit,
            error.output_tokens,
            old,
            new,
        )
        self._history(
            model,
            "overflow",
            estimate,
            inputTokens=true_input,
            limitTokens=limit,
            outputTokens=error.output_tokens,
        )
        self.epoch += 1
        return new_limit
