"""What a request or a string counts, as VS Code and the send path are told (ARCHITECTURE §4).

Each model has a raw counter (its encoding and image rule); calibration turns raw counts into
estimates of what the API will count, and the model's declaration (`models.declared`) into the
units VS Code is told its window in. A local server that counts requests itself (vLLM,
llama.cpp) is asked for an exact count of a request now and then (`anchor`): the fit learns
from it as from usage, and that very request is estimated as the server counted it. A server
that read far less of a request than it comes to cut it (`silently_cut`).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
from collections.abc import Iterable, Sequence
from typing import Final

import attrs

from tokengauge.calibration.estimates import Calibration
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.calibration.trim import Truncator, cap_tool_results
from tokengauge.counting.copilot_view import COPILOT_ENCODING, CopilotView
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.frequent import FrequentStrings
from tokengauge.counting.request import RequestCounter, TextCount, message_digest, tool_json
from tokengauge.counting.scales import Scales
from tokengauge.counting.text import TextCounters
from tokengauge.messages import CountInput, Message, Tool, Usage
from tokengauge.models.catalog import ModelSpec
from tokengauge.models.offer import Offer
from tokengauge.models.served import cut_without_error
from tokengauge.notes import without_notes
from tokengauge.protocol import (
    Breakdown,
    CountTokensResult,
    ModelScales,
    WarmCountsResult,
    WarmEntry,
)
from tokengauge.upstream.served import served_kind

log = logging.getLogger(__name__)

COPILOT_MESSAGE_OVERHEAD: Final = 3
"""What Copilot Chat adds to each message count itself."""
WARM_ENTRIES: Final = 200_000
ANCHOR_SECONDS: Final = 600.0
"""How often a server that counts requests itself is asked for an exact count (the first request
of a model in a session is always counted)."""
AHEAD_MODELS: Final = 4
"""How many models the extension counts the tools' strings ahead for (`WarmCountsResult.ahead`):
each costs a batch of ~500 strings and the memo as many entries."""


class Counts:
    """The counters of the models offered, and the counts made with them."""

    def __init__(
        self,
        offer: Offer,
        encodings: EncodingRegistry,
        calibration: Calibration,
        frequent: FrequentStrings,
    ) -> None:
        self.offer = offer
        self.encodings = encodings
        self.counters = TextCounters(encodings)
        self.calibration = calibration
        self.frequent = frequent
        self._request_counters: dict[str, RequestCounter] = {}
        self._anchored: dict[str, float] = {}
        self._exact: dict[str, tuple[str, int]] = {}

    @functools.cached_property
    def copilot_view(self) -> CopilotView:
        """Copilot's own count of messages (its o200k_base), loaded when first needed."""
        return CopilotView(self.encodings.get(COPILOT_ENCODING))

    def models_changed(self) -> None:
        """The models offered changed: their counters are made again when next needed."""
        self._request_counters.clear()

    def counter(self, model: ModelSpec) -> RequestCounter:
        """The raw counter for a model (its encoding and image rule)."""
        counter = self._request_counters.get(model.id)
        if counter is None:
            counter = RequestCounter(self.counters.for_encoding(model.encoding), model.image_rule)
            self._request_counters[model.id] = counter
        return counter

    def estimate(
        self,
        model: ModelSpec,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        given: Sequence[Tool] | None = None,
        *,
        remember: bool = True,
    ) -> RequestEstimate:
        """The whole request's count with its breakdown (`given`: the tools in full, when
        `tools` is the reduced form sent; `remember`: see `Calibration.estimate_request`)."""
        counter = self.counter(model)
        estimate = self.calibration.estimate_request(
            model, counter, messages, tools, given, remember=remember
        )
        exact = self._exact.get(model.id)
        if exact is not None and exact[0] == request_key(messages, tools):
            estimate = attrs.evolve(estimate, exact=exact[1])
        return estimate

    def count(self, model: ModelSpec, inputs: Sequence[CountInput]) -> CountTokensResult:
        """Counts for strings (text only) and messages, in input order.

        A message's count is its estimated true size less the 3 tokens Copilot adds to each
        message itself; a system prompt also carries the request's fixed overhead, so that
        Copilot's sum of a request's counts is the request's true size.
        """
        counter = self.counter(model)
        cap = self.offer.settings.tool_result_max_tokens
        scales = self.scales(model)
        scale = self.offer.declarations.get(model).scale
        tokens, raws, cjks = [], [], []
        for item in inputs:
            if isinstance(item, str):
                count = counter.string(item)
                tokens.append(scales.tokens(count))
                if not count.cjk:  # warm entries carry no CJK share
                    self.frequent.seen(model.encoding, item, count.total)
            else:
                item = without_notes(item)  # as it will be sent
                if cap is not None:  # count what will be sent
                    truncator = Truncator(counter.text.encoding)
                    item = cap_tool_results([item], truncator, cap).messages[0]
                count = counter.message(item)
                digest = message_digest(item)
                estimate = self.calibration.estimate_message(model, count, digest).tokens
                if item.role == "system":
                    estimate += self.calibration.overhead(model)[1]
                tokens.append(max(0, math.ceil(estimate * scale) - COPILOT_MESSAGE_OVERHEAD))
            raws.append(count.total)
            cjks.append(count.cjk)
        epoch = self.calibration.epoch
        return CountTokensResult(tokens=tokens, raw=raws, cjk=cjks, epoch=epoch, scales=scales)

    def scales(self, model: ModelSpec) -> Scales:
        """The model's multipliers of raw string counts, for what VS Code was told of it."""
        return self.calibration.scales(model, self.offer.declarations.get(model))

    def start_encodings(self, encodings: Iterable[str]) -> list[str]:
        """The encodings loaded at start, of those of the models offered: Copilot's own, in which
        every answered request is also counted, and those whose strings were counted before (another
        family's loads when first counted: each holds 23–46 MiB)."""
        return list(dict.fromkeys([COPILOT_ENCODING, *self.frequent.used(encodings)]))

    def warm(self, models: Sequence[ModelSpec]) -> WarmCountsResult:
        """Raw counts of the most asked strings for each model (at most `WARM_ENTRIES` in all,
        split evenly), with each model's scales, and the models to count the tools' strings ahead
        for: those of an encoding loaded at start (no count ahead loads one), counted ones first."""
        used = self.frequent.used(model.encoding for model in models)
        loaded = self.start_encodings(model.encoding for model in models)
        ready = [model for model in models if model.encoding in loaded]
        ahead = sorted(ready, key=lambda model: model.encoding not in used)
        entries = []
        scales = []
        per_model = WARM_ENTRIES // max(1, len(models))
        for model in models:
            model_scales = self.scales(model)
            scales.append(ModelScales(model.id, model_scales))
            entries += [
                WarmEntry(model.id, sha, raw, model_scales.tokens(TextCount(raw)))
                for sha, raw in self.frequent.entries(model.encoding)[:per_model]
            ]
        return WarmCountsResult(
            entries=entries,
            epoch=self.calibration.epoch,
            scales=scales,
            ahead=[model.id for model in ahead[:AHEAD_MODELS]],
        )

    def expect_tools(self, model: ModelSpec, tools: Sequence[Tool], given: Sequence[Tool]) -> bool:
        """The model's next request will send `tools` (a form of `given`): its tool scale is
        for them from now on; False if it already was."""
        walk = self.counter(model).tools(tools, given)
        return self.calibration.remember_walk(model.id, walk)

    def breakdown(self, model: ModelSpec, estimate: RequestEstimate) -> Breakdown:
        """A request estimate as a payload."""
        return Breakdown(
            system=estimate.system,
            tools=estimate.tools,
            fixed=estimate.fixed,
            messages=[m.tokens for m in estimate.messages],
            sources=[m.source for m in estimate.messages],
            total=estimate.total,
            raw_total=estimate.raw_total,
            ratios=estimate.ratios,
            max_input_tokens=self.offer.windows.sizes(model).max_input,
        )

    def learn(
        self,
        model: ModelSpec,
        estimate: RequestEstimate,
        usage: Usage,
        messages: Sequence[Message],
        tools: Sequence[Tool],
    ) -> None:
        """Calibration learns a request's count, with Copilot's own count of its messages and of
        the whole request (`tools`: in full, as Copilot counts them)."""
        copilot = self.copilot_view.messages(messages)
        whole = copilot + self.copilot_view.tools(tools)
        self.calibration.record_usage(model, estimate, usage, copilot, whole)

    def anchor_due(self, model: ModelSpec, now: float) -> bool:
        """Whether to ask the model's server for an exact count before sending: its first request
        in this session, then every `ANCHOR_SECONDS` (never per `provideTokenCount`)."""
        if served_kind(model.provider) not in ("vllm", "llamacpp"):
            return False
        last = self._anchored.get(model.id)
        return last is None or now - last >= ANCHOR_SECONDS

    def anchor(
        self,
        model: ModelSpec,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        given: Sequence[Tool],
        count: int | None,
        now: float,
    ) -> None:
        """The server's exact count of a request about to be sent (None: it could not say): the
        fit learns from it as from usage, and that very request is estimated as counted."""
        self._anchored[model.id] = now
        if count is None:
            return
        estimate = self.estimate(model, messages, tools, given)
        usage = Usage(input_tokens=count, output_tokens=0, total_input_tokens=count)
        self.learn(model, estimate, usage, messages, given)
        self._exact[model.id] = (request_key(messages, tools), count)
        log.info(
            "%s: its server counts the request at %d tokens (we had %d)",
            model.id,
            count,
            estimate.total,
        )

    def expected_size(self, model: ModelSpec, estimate: RequestEstimate) -> int:
        """What the request most likely came to: the server's count, else the fit's, without
        the margin estimates carry."""
        return estimate.exact or round(self.calibration.expected(model, estimate))

    def silently_cut(self, model: ModelSpec, estimate: RequestEstimate, usage: Usage) -> bool:
        """Whether a local server counted the request far below what it comes to, or read just
        its whole served window of a request larger than that: it cut the prompt without an
        error (Ollama and LM Studio do)."""
        read = usage.total_input_tokens
        if served_kind(model.provider) is None or read <= 0:
            return False
        calibrated = bool(self.calibration.fit(model).observations or estimate.exact)
        expected = self.expected_size(model, estimate)
        served = self.offer.windows.served.get(model.id)
        return cut_without_error(read, expected, estimate.total, served, calibrated=calibrated)


def request_key(messages: Sequence[Message], tools: Sequence[Tool]) -> str:
    """What tells one request from another: its messages' digests and its tools' JSON."""
    parts = [message_digest(message) for message in messages] + [tool_json(t) for t in tools]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
