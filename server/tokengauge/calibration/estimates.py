"""Estimates with margins, and learning from what the API reports (ARCHITECTURE §7).

Each model has a `ComponentFit`: the ratios of the API's count to ours for non-CJK text, CJK text
and the tools' JSON, and the API's overhead per message and per request, learned from every usage
report and every overflow error. A message the API has already counted (by digest) is estimated
from that actual (+2%); any other text from the fit, with a margin of `SIGMAS` standard
deviations of the fit's own uncertainty (wide for a new model, narrow once the API has spoken).

Actuals come from differences: the API's count minus what the fit predicts for the tools and the
request overhead, minus the actuals already stored for the request's other messages, is spread
over the messages it has not counted before. In a conversation that is the new messages alone,
so each message ends up with what the API really charged for it. A report that does not fit the
stored actuals (they went stale) spreads the whole count again; one that fits nothing is ignored.
The `epoch` changes whenever a count could change.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Sequence
from typing import Final, Literal

import attrs

from tokengauge.calibration.classify import ErrorKind, ParsedError
from tokengauge.calibration.fit import (
    APPROXIMATE,
    COMPONENTS,
    EXACT,
    REJECT,
    ComponentFit,
    Prior,
    features,
)
from tokengauge.calibration.ratios import ObservedRatios
from tokengauge.calibration.tool_walks import ToolWalks
from tokengauge.counting.request import RequestCounter, RequestFeatures, TextCount, ToolWalk
from tokengauge.counting.scales import (
    DEFAULT_WALK_SHORTFALL,
    Scales,
    copilot_tools_target,
    tool_scale,
)
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, Tool, Usage
from tokengauge.models.catalog import ModelSpec
from tokengauge.models.declared import Basis, Declared

log = logging.getLogger(__name__)

ACTUAL_MARGIN: Final = 1.02
SIGMAS: Final = 1.5
"""Estimates are the fit's mean plus this many standard deviations."""
SPREAD_RANGE: Final = (0.5, 2.0)
"""A spread that gives messages less than half or more than twice their prediction is odd."""
OVERFLOW_MARGIN: Final = 1.05
NO_COUNT_SHRINK: Final = 0.9
"""An overflow that names no number, of a request far smaller than the window we believed in:
the API's window is below what was sent; it is taken as this share of it."""
NO_COUNT_FLOOR: Final = 4_096
"""…but never below this: a request smaller than any model's window that "overflows" says more
about the server than about its window, and a window learned that small would refuse everything."""
COPILOT_RATIO_PRIOR: Final = {False: 1.25, True: 1.05}
"""API tokens per token of Copilot's o200k count of messages, before any report: a Claude or an
open model (tokenizer unknown, be careful), an OpenAI model (its own tokenizer)."""
COPILOT_RATIO_MARGIN: Final = 1.02
EXACT_FAMILIES: Final = re.compile(r"^(gpt-(3\.5|4|5)|o\d|chatgpt-4o)", re.I)
"""Families whose API counts text with the very encoding tokengauge uses for them."""
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
    """The server's own count of this very request, when it gave one (`Gauge.anchor`)."""

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


class Calibration:
    """Component fits, stored actuals and learned limits, over one ledger."""

    def __init__(self, ledger: Ledger, clock: Callable[[], float] = time.time) -> None:
        self.ledger = ledger
        self._fits: dict[str, ComponentFit] = {}
        self.walks = ToolWalks(ledger)
        self.observed = ObservedRatios(ledger)
        self._scales: dict[tuple[str, Declared], Scales] = {}
        self._cautious: dict[str, list[float]] = {}
        self.epoch = int(clock() * 1000)

    def fit(self, model: ModelSpec) -> ComponentFit:
        """The model's fit (the prior until the API has reported usage)."""
        fit = self._fits.get(model.id)
        if fit is None:
            prior = prior_for(model)
            stored = self.ledger.get_document(_fit_key(model.id))
            fit = ComponentFit.from_json(stored, prior) or ComponentFit.start(prior)
            self._fits[model.id] = fit
        return fit

    def coefficients(self, model: ModelSpec) -> list[float]:
        """The fit's coefficients with their margins (what every estimate is made of)."""
        cached = self._cautious.get(model.id)
        if cached is None:
            cached = self.fit(model).cautious(SIGMAS)
            self._cautious[model.id] = cached
        return cached

    def ratios(self, model: ModelSpec) -> dict[str, float]:
        """The fit's coefficients by name."""
        return dict(zip(COMPONENTS, self.fit(model).mean, strict=True))

    def scales(self, model: ModelSpec, declared: Declared) -> Scales:
        """What raw string counts are multiplied by for this model (strings of text or tools),
        given what VS Code was told of its window (`declared`; see `copilot_tools_target`)."""
        key = (model.id, declared)
        cached = self._scales.get(key)
        if cached is None:
            text, cjk, tools, _, fixed = self.coefficients(model)
            walk = self.walks.get(model.id)
            if walk is None:
                tool = tools * DEFAULT_WALK_SHORTFALL * declared.scale
            else:
                ratio = self.copilot_ratio(model) * COPILOT_RATIO_MARGIN
                target = copilot_tools_target(
                    declared.max_input, tools * walk.json + fixed, ratio, declared.true_max_input
                )
                tool = tool_scale(target, walk)
            cached = Scales(text=text * declared.scale, cjk=cjk * declared.scale, tools=tool)
            self._scales[key] = cached
        return cached

    def basis(self, model: ModelSpec, window: int, max_input: int, least_output: int) -> Basis:
        """What the model's declaration is made from, for its true `window` and `max_input`."""
        return Basis(
            window=window,
            max_input=max_input,
            ratio=self.observed.whole(model.id),
            least_output=least_output,
        )

    def copilot_ratio(self, model: ModelSpec) -> float:
        """What the API charges for messages per token of Copilot's own count of them: the median
        of the recent requests' ratios (a prior before any)."""
        observed = self.observed.messages(model.id)
        return COPILOT_RATIO_PRIOR[prior_for(model) is EXACT] if observed is None else observed

    def expected(self, model: ModelSpec, estimate: RequestEstimate) -> float:
        """What the fit expects the API to count for the request, without any margin."""
        return self.fit(model).predict(request_features(estimate.features)).mean

    def overhead(self, model: ModelSpec) -> tuple[int, int]:
        """The per-message and per-request overheads (rounded up, with their margins)."""
        coefficients = self.coefficients(model)
        per_message = tokens(coefficients, features(0, 0, 0, 1, 0))
        fixed = tokens(coefficients, features(0, 0, 0, 0, 1))
        return per_message, fixed

    def learned_limit(self, model_id: str) -> int | None:
        """The context limit an overflow error taught us, if any."""
        return self.ledger.get_limit(model_id)

    def estimate_text(self, model: ModelSpec, count: TextCount) -> int:
        """A string's count (no structure): `ceil(other × text + cjk × cjk)`."""
        text, cjk, tools, _, _ = self.coefficients(model)
        return Scales(text=text, cjk=cjk, tools=tools).tokens(count)

    def estimate_message(self, model: ModelSpec, count: TextCount, digest: str) -> MessageEstimate:
        """A message's true size: the stored API actual if there is one, else the fit's."""
        return self._message_estimate(model, count, self.ledger.get_actual(model.family, digest))

    def _message_estimate(
        self, model: ModelSpec, count: TextCount, actual: int | None
    ) -> MessageEstimate:
        if actual is not None:
            return MessageEstimate(scaled(actual, ACTUAL_MARGIN), "actual", actual)
        return MessageEstimate(
            tokens(self.coefficients(model), message_features(count)), "estimate"
        )

    def estimate_request(
        self,
        model: ModelSpec,
        counter: RequestCounter,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        given: Sequence[Tool] | None = None,
        *,
        remember: bool = True,
    ) -> RequestEstimate:
        """The whole request's true size with its breakdown (`given`: the tools in full, when
        `tools` is a reduced form); `remember`: the request's tools are those of the model's next
        requests (not a form the recovery ladder tries for this one)."""
        request = counter.request(messages, tools, given)
        if remember and request.walk.tools:
            self.remember_walk(model.id, request.walk)
        return self.estimate_features(model, request)

    def estimate_features(self, model: ModelSpec, request: RequestFeatures) -> RequestEstimate:
        """`estimate_request` for a request already counted."""
        coefficients = self.coefficients(model)
        actuals = self.ledger.get_actuals(model.family, request.digests)
        return RequestEstimate(
            tools=tokens(coefficients, features(0, 0, request.tools, 0, 0)),
            fixed=self.overhead(model)[1],
            messages=tuple(
                self._message_estimate(model, count, actual)
                for count, actual in zip(request.messages, actuals, strict=True)
            ),
            features=request,
            ratios=self.ratios(model),
            tools_saved=tokens(coefficients, features(0, 0, request.walk.left_out, 0, 0)),
        )

    def record_usage(
        self,
        model: ModelSpec,
        estimate: RequestEstimate,
        usage: Usage,
        copilot_messages: int | None = None,
        copilot_whole: int | None = None,
    ) -> bool:
        """Learn from a response's usage report; False if it taught nothing.

        `copilot_messages` is Copilot's own count of the request's messages (`CopilotView`),
        `copilot_whole` an o200k count of the whole request as the Agent Host counts it.
        """
        actual = usage.total_input_tokens
        self.observed.observe_whole(model.id, actual, copilot_whole)
        if not self._learn(model, estimate, actual, copilot_messages=copilot_messages):
            log.warning(
                "%s: the API counted %d input tokens where we expected about %d; ignored",
                model.id,
                actual,
                estimate.total,
            )
            return False
        log.info(
            "%s: API counted %d input tokens, we estimated %d (raw %d); %s",
            model.id,
            actual,
            estimate.total,
            estimate.raw_total,
            _ratios_text(self.ratios(model)),
        )
        return True

    def learn_overflow(
        self,
        model: ModelSpec,
        estimate: RequestEstimate,
        error: ParsedError,
        window: int,
        copilot_messages: int | None = None,
    ) -> int | None:
        """Learn from an overflow error; returns the newly learned limit, if it changed.

        `window` is the window we believed in when sending. The true input is the error's count,
        or the limit (else the window) plus the excess it names (at least one), and at least 5%
        more than we thought; when that is far above our count (the API's window is not the one
        we believed in), just 5% more than we thought, and if the error names no number at all
        (OpenAI's "Your input exceeds the context window of this model"), the window is learned
        as 90% of what we counted (not below 4,096): no count error that large is believable, a
        smaller window is.
        """
        if error.kind is not ErrorKind.OVERFLOW:
            return None
        limit = error.limit_tokens
        new_limit = None
        if limit is not None and limit < min(window, self.learned_limit(model.id) or window):
            self.ledger.set_limit(model.id, limit)
            new_limit = limit
        true_input = error.input_tokens
        if true_input is None:  # "exceeded by N tokens", or no number at all
            above = (limit or window) + (error.excess_tokens or 1)
            at_least = math.ceil(estimate.total * OVERFLOW_MARGIN)
            # Far above what we counted, the window was not the API's: learn only "more".
            plausible = above <= REJECT * estimate.total
            true_input = max(above, at_least) if plausible else at_least
            if not plausible and limit is None and error.excess_tokens is None:
                smaller = math.floor(estimate.total * NO_COUNT_SHRINK)
                if NO_COUNT_FLOOR <= smaller < (self.learned_limit(model.id) or window):
                    self.ledger.set_limit(model.id, smaller)
                    new_limit = smaller
        learned = self._learn(
            model, estimate, true_input, force=True, copilot_messages=copilot_messages
        )
        if not learned:
            log.warning(
                "%s: overflow (%s) claims %d input tokens where we counted about %d; ignored",
                model.id,
                error.message,
                true_input,
                estimate.total,
            )
            return new_limit
        log.warning(
            "%s: overflow (%s); input %s, limit %s, output %s; %s",
            model.id,
            error.message,
            error.input_tokens,
            limit,
            error.output_tokens,
            _ratios_text(self.ratios(model)),
        )
        return new_limit

    def _learn(
        self,
        model: ModelSpec,
        estimate: RequestEstimate,
        actual: int,
        force: bool = False,
        copilot_messages: int | None = None,
    ) -> bool:
        """Update the fit and the stored actuals; `force`: the count is the API's own word for
        this very request (an overflow error), so its actuals are stored even if they look odd
        against the old ones; a count the fit rejects as absurd teaches nothing either way."""
        if actual <= 0 or not estimate.features.messages:
            return False
        if not self._update_fit(model, request_features(estimate.features), actual):
            return False
        self._store_actuals(model, estimate, actual, force)
        if copilot_messages:
            messages = actual - _tools_and_overhead(self.fit(model), estimate.features)
            self.observed.observe_messages(model.id, messages, copilot_messages)
        self._forget_scales(model.id)
        self._cautious.pop(model.id, None)
        self.epoch += 1
        return True

    def _update_fit(self, model: ModelSpec, x: tuple[float, ...], actual: int) -> bool:
        """Teach the model's fit that the API counted `actual` for features `x`, on the fit the
        ledger holds (other windows sharing it learn too); False if it taught nothing."""
        prior = prior_for(model)
        taught = False

        def learn(stored: object) -> object:
            nonlocal taught
            fit = ComponentFit.from_json(stored, prior) or ComponentFit.start(prior)
            taught = fit.update(x, actual)
            return fit.to_json()

        document = self.ledger.update_document(_fit_key(model.id), learn)
        self._fits[model.id] = ComponentFit.from_json(document, prior) or self.fit(model)
        return taught

    def _store_actuals(
        self, model: ModelSpec, estimate: RequestEstimate, actual: int, force: bool
    ) -> None:
        """Give the request's messages their share of `actual` (see the module docstring)."""
        fit, request = self.fit(model), estimate.features
        predicted = [max(1, round(fit.predict(message_features(c)).mean)) for c in request.messages]
        messages_total = actual - round(_tools_and_overhead(fit, request))
        stored = [m.actual for m in estimate.messages]
        new = [i for i, s in enumerate(stored) if s is None]
        known = sum(s for s in stored if s is not None)
        if new and _plausible(messages_total - known, sum(predicted[i] for i in new)):
            shares = largest_remainder(messages_total - known, [predicted[i] for i in new])
            updates = dict(zip((request.digests[i] for i in new), shares, strict=True))
        else:  # every message counted before, or their actuals went stale: spread it all again
            weights = [s if s is not None else p for s, p in zip(stored, predicted, strict=True)]
            if not force and not _plausible(messages_total, sum(weights)):
                return
            updates = dict(
                zip(request.digests, largest_remainder(messages_total, weights), strict=True)
            )
        self.ledger.put_actuals(model.family, updates)

    def changed(self, model_id: str) -> None:
        """Something the model's counts depend on changed (what VS Code is told of its window)."""
        self._forget_scales(model_id)
        self.epoch += 1

    def _forget_scales(self, model_id: str) -> None:
        for key in [k for k in self._scales if k[0] == model_id]:
            del self._scales[key]

    def remember_walk(self, model_id: str, walk: ToolWalk) -> bool:
        """Take `walk` as the tools of the model's next request (what its tool scale is for);
        False if it already was."""
        if not self.walks.remember(model_id, walk):
            return False
        self._forget_scales(model_id)
        self.epoch += 1
        return True


def _tools_and_overhead(fit: ComponentFit, request: RequestFeatures) -> float:
    """What the fit expects the API to charge for a request's tools and its fixed overhead."""
    return fit.predict(features(0, 0, request.tools, 0, 1)).mean


def prior_for(model: ModelSpec) -> Prior:
    """What to believe of a model the API has not reported on yet."""
    return EXACT if EXACT_FAMILIES.match(model.family.strip()) else APPROXIMATE


def _plausible(total: int, predicted: int) -> bool:
    low, high = SPREAD_RANGE
    return predicted > 0 and low * predicted <= total <= high * predicted


def _ratios_text(ratios: dict[str, float]) -> str:
    return (
        f"ratios text {ratios['text']:.3f}, CJK {ratios['cjk']:.3f}, tools {ratios['tools']:.3f}; "
        f"{ratios['message']:.1f}/message, {ratios['fixed']:.1f}/request"
    )


def _fit_key(model_id: str) -> str:
    return f"fit/{model_id}"
