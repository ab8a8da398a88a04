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
import re
import time
from collections.abc import Callable, Sequence
from typing import Final

from tokengauge.calibration.classify import ErrorKind, ParsedError
from tokengauge.calibration.fit import (
    APPROXIMATE,
    COMPONENTS,
    EXACT,
    ComponentFit,
    Prior,
    features,
)
from tokengauge.calibration.overflow import overflow_lesson
from tokengauge.calibration.ratios import ObservedRatios
from tokengauge.calibration.request_estimate import (
    MessageEstimate,
    RequestEstimate,
    largest_remainder,
    message_features,
    request_features,
    scaled,
    tokens,
)
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
COPILOT_RATIO_PRIOR: Final = {False: 1.25, True: 1.05}
"""API tokens per token of Copilot's o200k count of messages, before any report: a Claude or an
open model (tokenizer unknown, be careful), an OpenAI model (its own tokenizer)."""
COPILOT_RATIO_MARGIN: Final = 1.02
EXACT_FAMILIES: Final = re.compile(r"^(gpt-(3\.5|4|5)|o\d|chatgpt-4o)", re.I)
"""Families whose API counts text with the very encoding tokengauge uses for them."""


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
        """Learn from an overflow error (`overflow_lesson`; `window`: the one we believed in
        when sending); returns the newly learned limit, if it changed."""
        if error.kind is not ErrorKind.OVERFLOW:
            return None
        lesson = overflow_lesson(error, estimate.total, window, self.learned_limit(model.id))
        new_limit, true_input = lesson.limit, lesson.true_input
        if new_limit is not None:
            self.ledger.set_limit(model.id, new_limit)
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
            error.limit_tokens,
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
