"""The server's hub without the LSP: the models offered, the counts, calibration, the usage
history and the status bar, wired together.

Each concern keeps its own state: `models.offer.Offer` the providers, models, windows and
declarations; `calibration.estimates.Calibration` the fits; `activity.history.History` the
requests and their costs; `status.StatusBar` what the status bar says. `Gauge` builds them over
one ledger, counts requests, and passes what one learns to the others. `TokenGaugeServer` owns
one and its handlers call into it; the CLI builds one too.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import attrs

from tokengauge.activity import dashboard
from tokengauge.activity.history import History
from tokengauge.activity.record import Outcome, RequestKind, RequestRecord
from tokengauge.calibration.classify import ErrorKind, ParsedError, classify_error
from tokengauge.calibration.estimates import Calibration, RequestEstimate
from tokengauge.calibration.trim import Truncator, cap_tool_results
from tokengauge.counting.copilot_view import COPILOT_ENCODING, CopilotView
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.frequent import FrequentStrings
from tokengauge.counting.request import RequestCounter, TextCount, message_digest, tool_json
from tokengauge.counting.scales import Scales
from tokengauge.counting.text import TextCounters
from tokengauge.ledger.store import Ledger
from tokengauge.messages import CountInput, Message, Tool, Usage
from tokengauge.models.catalog import DiscoveredModel, ModelCatalog, ModelSpec
from tokengauge.models.declared import Declared
from tokengauge.models.offer import Offer
from tokengauge.models.served import Served, ServedWindows, cut_without_error
from tokengauge.protocol import (
    Breakdown,
    CountTokensResult,
    LatestRequest,
    ModelCalibration,
    ModelInfo,
    ModelScales,
    RecordErrorParams,
    RecordResult,
    RecordUsageParams,
    Status,
    UsageResult,
    WarmCountsResult,
    WarmEntry,
)
from tokengauge.settings import ProviderSettings, ServerSettings
from tokengauge.status import StatusBar, without_notes
from tokengauge.upstream.choices import model_choices
from tokengauge.upstream.presets import resolve, resolve_all
from tokengauge.upstream.served import served_kind

log = logging.getLogger(__name__)

COPILOT_MESSAGE_OVERHEAD = 3
"""What Copilot Chat adds to each message count itself."""
WARM_ENTRIES = 200_000
ANCHOR_SECONDS: Final = 600.0
"""How often a server that counts requests itself is asked for an exact count (the first request
of a model in a session is always counted)."""


@attrs.frozen
class UsageLearned:
    """What a response's usage taught, for its caller."""

    models_changed: bool
    """The model's declaration moved: VS Code must ask for the models again."""
    client_prompt: int
    """The request's input in the units VS Code is told the model's window in (`declared`)."""


@attrs.frozen
class ErrorLearned:
    """What an error answer taught, for its caller."""

    learned_limit: int | None
    """The window an overflow taught, if it taught one."""
    models_changed: bool
    """The model's window or declaration moved: VS Code must ask for the models again."""


class Gauge:
    """The parts over one ledger, the counts, and what each learns passed to the others; the
    methods the chat and the language server call on the parts answer through them."""

    def __init__(
        self,
        settings: ServerSettings,
        ledger: Ledger,
        encodings: EncodingRegistry | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ledger = ledger
        self.encodings = encodings or EncodingRegistry()
        self.counters = TextCounters(self.encodings)
        self.calibration = Calibration(ledger)
        self.frequent = FrequentStrings(ledger)
        resolved = attrs.evolve(settings, providers=resolve_all(settings.providers))
        self.offer = Offer(resolved, ledger, self.calibration)
        days = settings.usage_retention_days
        self.history = History(ledger, days, self.offer.windows, self.calibration, clock)
        self.bar = StatusBar(self.offer, self.history, self.calibration)
        self._request_counters: dict[str, RequestCounter] = {}
        self._anchored: dict[str, float] = {}
        self._exact: dict[str, tuple[str, int]] = {}

    @functools.cached_property
    def copilot_view(self) -> CopilotView:
        """Copilot's own count of messages (its o200k_base), loaded when first needed."""
        return CopilotView(self.encodings.get(COPILOT_ENCODING))

    @property
    def epoch(self) -> int:
        """Changes whenever a count could change."""
        return self.calibration.epoch

    @property
    def settings(self) -> ServerSettings:
        """The settings, with the providers of Manage Models and every preset resolved."""
        return self.offer.settings

    @property
    def catalog(self) -> ModelCatalog:
        """The models offered."""
        return self.offer.catalog

    @property
    def served(self) -> ServedWindows:
        """What the local servers last said they serve each model with."""
        return self.offer.windows.served

    def model(self, model_id: str) -> ModelSpec:
        """The configured model, or `UnknownModelError`."""
        return self.offer.model(model_id)

    def provider(self, provider_id: str) -> ProviderSettings:
        """The provider with this id (of settings or Manage Models), or `InvalidInput`."""
        return self.offer.provider(provider_id)

    def apply_discovery(self, provider_id: str, models: list[DiscoveredModel]) -> bool:
        """Remember what a provider lists (in the ledger too); True if the models changed."""
        changed = self.offer.apply_discovery(provider_id, models)
        if changed:
            self._request_counters.clear()
        return changed

    def add_provider(self, provider: ProviderSettings) -> ProviderSettings:
        """Add (or replace) a provider of Manage Models, its preset resolved (`InvalidInput` if
        it cannot be), with what it listed before; a provider of settings with its id wins and is
        returned instead."""
        known = self.offer.of_settings(provider.id)
        if known is not None:
            return known
        provider = resolve(provider)
        self.offer.add_provider(provider)
        self._request_counters.clear()
        return provider

    def has_local_models(self) -> bool:
        """Whether a model is served by a local server (`upstream.served`)."""
        return any(served_kind(model.provider) is not None for model in self.catalog)

    def model_info(self, model: ModelSpec) -> ModelInfo:
        """The model as VS Code should see it (`Offer.model_info`)."""
        local = served_kind(model.provider) is not None
        return self.offer.model_info(model, local=local, choices=model_choices(model))

    def models(self) -> list[ModelInfo]:
        """Every configured model (new declarations stored together, in one transaction)."""
        with self.ledger.batched():
            return [self.model_info(model) for model in self.catalog]

    def window_limit(self, model: ModelSpec) -> int | None:
        """What limits the model's window below its own (`Windows.limit`)."""
        return self.offer.windows.limit(model)

    def max_input_tokens(self, model: ModelSpec) -> int:
        """The model's input budget, after every limit on its window."""
        return self.offer.windows.sizes(model).max_input

    def choose_context_size(self, model: ModelSpec, size: int) -> bool:
        """A context size picked for a model; whether its window changed."""
        return self.offer.windows.choose(model, size)

    def num_ctx(self, model: ModelSpec) -> int | None:
        """The `num_ctx` to ask Ollama for (`Windows.num_ctx`); None for other servers."""
        return (
            self.offer.windows.num_ctx(model) if served_kind(model.provider) == "ollama" else None
        )

    def asked_num_ctx(self, model: ModelSpec) -> int | None:
        """The window a person asked Ollama to load the model with (picked, or `numCtx`)."""
        return self.offer.windows.asked_num_ctx(model)

    def num_ctx_sent(self, model: ModelSpec, num_ctx: int | None) -> None:
        """A request asked Ollama for `num_ctx`."""
        self.offer.windows.num_ctx_sent(model, num_ctx)

    def last_num_ctx(self, model: ModelSpec) -> int | None:
        """The `num_ctx` the model's last request asked Ollama for, if any."""
        return self.offer.windows.last_num_ctx(model)

    def apply_served(self, model: ModelSpec, served: Served) -> bool:
        """Keep what the model's local server serves it with; True if its window moved."""
        return self.offer.windows.apply_served(model, served)

    def learn_cut(self, model: ModelSpec, usage: Usage, served: Served | None) -> int:
        """A request the server cut: the window learned (`Windows.learn_cut`)."""
        return self.offer.windows.learn_cut(model, usage, served)

    def declared(self, model: ModelSpec) -> Declared:
        """What VS Code is told of the model's window (`models.declared`)."""
        return self.offer.declarations.get(model)

    def client_prompt(self, model: ModelSpec, tokens: int) -> int:
        """A request's input of `tokens` true tokens in the units VS Code is told the model's
        window in (what Copilot's compaction compares with `maxInputTokens`)."""
        return round(tokens * self.declared(model).scale)

    def counter(self, model: ModelSpec) -> RequestCounter:
        """The raw counter for a model (its encoding and image rule)."""
        counter = self._request_counters.get(model.id)
        if counter is None:
            counter = RequestCounter(self.counters.for_encoding(model.encoding), model.image_rule)
            self._request_counters[model.id] = counter
        return counter

    def silently_cut(self, model: ModelSpec, estimate: RequestEstimate, usage: Usage) -> bool:
        """Whether a local server counted the request far below what it comes to, or read just
        its whole served window of a request larger than that: it cut the prompt without an
        error (Ollama and LM Studio do)."""
        read = usage.total_input_tokens
        if served_kind(model.provider) is None or read <= 0:
            return False
        calibrated = bool(self.calibration.fit(model).observations or estimate.exact)
        expected, served = self.expected_size(model, estimate), self.served.get(model.id)
        return cut_without_error(read, expected, estimate.total, served, calibrated=calibrated)

    def expected_size(self, model: ModelSpec, estimate: RequestEstimate) -> int:
        """What the request most likely came to: the server's count, else the fit's, without
        the margin estimates carry."""
        return estimate.exact or round(self.calibration.expected(model, estimate))

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
        self._learn_usage(model, estimate, usage, messages, given)
        self._exact[model.id] = (request_key(messages, tools), count)
        log.info(
            "%s: its server counts the request at %d tokens (we had %d)",
            model.id,
            count,
            estimate.total,
        )

    def count(self, model_id: str, inputs: Sequence[CountInput]) -> CountTokensResult:
        """Counts for strings (text only) and messages, in input order.

        A message's count is its estimated true size less the 3 tokens Copilot adds to each
        message itself; a system prompt also carries the request's fixed overhead, so that
        Copilot's sum of a request's counts is the request's true size.
        """
        model = self.model(model_id)
        counter = self.counter(model)
        cap = self.settings.tool_result_max_tokens
        scales = self.scales(model)
        scale = self.declared(model).scale
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
                    item = cap_tool_results([item], Truncator(counter.text.encoding), cap).messages[
                        0
                    ]
                count = counter.message(item)
                digest = message_digest(item)
                estimate = self.calibration.estimate_message(model, count, digest).tokens
                if item.role == "system":
                    estimate += self.calibration.overhead(model)[1]
                tokens.append(max(0, math.ceil(estimate * scale) - COPILOT_MESSAGE_OVERHEAD))
            raws.append(count.total)
            cjks.append(count.cjk)
        return CountTokensResult(tokens=tokens, raw=raws, cjk=cjks, epoch=self.epoch, scales=scales)

    def scales(self, model: ModelSpec) -> Scales:
        """The model's multipliers of raw string counts, for what VS Code was told of it."""
        return self.calibration.scales(model, self.declared(model))

    def warm_counts(self, model_ids: Sequence[str]) -> WarmCountsResult:
        """Raw counts of the most asked strings for each model (each id once; at most
        `WARM_ENTRIES` in all, split evenly), with each model's scales."""
        entries = []
        scales = []
        unique = list(dict.fromkeys(model_ids))
        per_model = WARM_ENTRIES // max(1, len(unique))
        for model_id in unique:
            model = self.model(model_id)
            model_scales = self.scales(model)
            scales.append(ModelScales(model.id, model_scales))
            entries += [
                WarmEntry(model.id, sha, raw, model_scales.tokens(TextCount(raw)))
                for sha, raw in self.frequent.entries(model.encoding)[:per_model]
            ]
        return WarmCountsResult(entries=entries, epoch=self.epoch, scales=scales)

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
            max_input_tokens=self.max_input_tokens(model),
        )

    def learn_usage(
        self,
        model: ModelSpec,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        usage: Usage,
        estimate: RequestEstimate,
        *,
        given: Sequence[Tool] | None = None,
    ) -> UsageLearned:
        """Learn from the usage the API reported for a request of `messages` and `tools` (as
        sent), estimated at `estimate` when it was sent (`given`: the tools in full, when the
        request sent a reduced form): calibration learns the count, the usage history and the
        status bar take the request, and the model's declaration follows calibration."""
        self._learn_usage(model, estimate, usage, messages, given or tools)
        self.history.answered(model, estimate, usage, messages, tools)
        moved = self.offer.declarations.redeclare(model)
        return UsageLearned(moved, self.client_prompt(model, usage.total_input_tokens))

    def learn_error(
        self,
        model: ModelSpec,
        messages: Sequence[Message],
        error: ParsedError,
        estimate: RequestEstimate,
    ) -> ErrorLearned:
        """Learn from an error the API answered a request of `messages` with, estimated at
        `estimate` when it was sent: an overflow teaches the API's own window (whatever size was
        picked) and the request's size; the model's declaration follows calibration."""
        learned = None
        if error.kind is ErrorKind.OVERFLOW:
            window = self.offer.windows.api_window(model)
            copilot = self.copilot_view.messages(messages)
            learned = self.calibration.learn_overflow(model, estimate, error, window, copilot)
        moved = self.offer.declarations.redeclare(model)
        return ErrorLearned(learned, learned is not None or moved)

    def record_usage(
        self,
        params: RecordUsageParams,
        estimate: RequestEstimate | None = None,
        *,
        log_request: bool = True,
        given: Sequence[Tool] | None = None,
    ) -> RecordResult:
        """`tokenGauge/recordUsage`: `learn_usage` of the request the payload names, estimated
        now unless `estimate` is given; `log_request`: add it to the usage history as
        answered."""
        model = self.model(params.model_id)
        estimate = estimate or self.estimate(model, params.messages, params.tools)
        usage = params.usage
        learned = self.learn_usage(
            model, params.messages, params.tools, usage, estimate, given=given
        )
        if log_request:
            self.log_request(
                model, params.messages, params.tools, estimate, "answered", usage=usage
            )
        return RecordResult(
            epoch=self.epoch,
            estimate=self.breakdown(model, estimate),
            models_changed=learned.models_changed,
            client_prompt=learned.client_prompt,
        )

    def record_error(
        self,
        params: RecordErrorParams,
        estimate: RequestEstimate | None = None,
        *,
        log_request: bool = True,
    ) -> RecordResult:
        """`tokenGauge/recordError`: the error body classified and `learn_error` of it, for the
        request the payload names, estimated now unless `estimate` is given; `log_request`: add
        the request to the usage history as failed."""
        model = self.model(params.model_id)
        estimate = estimate or self.estimate(model, params.messages, params.tools)
        error = classify_error(params.status, params.body)
        learned = self.learn_error(model, params.messages, error, estimate)
        if log_request:
            failure = error.kind.value.replace("_", " ")
            self.log_request(
                model, params.messages, params.tools, estimate, "failed", error=failure
            )
        return RecordResult(
            epoch=self.epoch,
            estimate=self.breakdown(model, estimate),
            error=error.report(),
            learned_limit=learned.learned_limit,
            models_changed=learned.models_changed,
        )

    def _learn_usage(
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

    def ahead(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        estimate: RequestEstimate,
        held: Sequence[Message] | None,
        *,
        conversation: bool,
    ) -> tuple[RequestKind, str | None]:
        """A request's kind and, if asked, its conversation, told before it is sent
        (`History.ahead`)."""
        return self.history.ahead(messages, tools, estimate, held, conversation=conversation)

    def log_request(
        self,
        model: ModelSpec,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        estimate: RequestEstimate,
        outcome: Outcome,
        *,
        usage: Usage | None = None,
        error: str | None = None,
        trimmed_tokens: int = 0,
        ladder: Mapping[str, int] | None = None,
        retries: int = 0,
        answer_text: str = "",
        answer_calls: Sequence[str] = (),
        held: Sequence[Message] | None = None,
        cut: bool = False,
        ahead: str | None = None,
    ) -> RequestRecord:
        """Add a request to the usage history (`History.log`)."""
        return self.history.log(
            model,
            messages,
            tools,
            estimate,
            outcome,
            usage=usage,
            error=error,
            trimmed_tokens=trimmed_tokens,
            ladder=ladder,
            retries=retries,
            answer_text=answer_text,
            answer_calls=answer_calls,
            held=held,
            cut=cut,
            ahead=ahead,
        )

    def tool_docs_used(self, model: ModelSpec) -> None:
        """`model.tool_docs` is what its latest chat sent: the status names it."""
        self.bar.tool_docs_used(model)

    def status(self) -> Status:
        """Status-bar content: the last conversation request, else how many models are ready."""
        return self.bar.status()

    def conversation_status(self) -> Status | None:
        """The status of the last conversation request, of this session or an earlier one."""
        return self.bar.conversation()

    def dashboard(self) -> Callable[[], dashboard.DashboardData]:
        """The dashboard's data, to be made: the models' rows are taken now, the requests are
        read and summed by the caller (`History.dashboard`)."""
        rows = []
        for model in self.catalog:
            sizes = self.offer.windows.sizes(model)
            rows.append(dashboard.model_row(model, sizes.window, sizes.max_input))
        return self.history.dashboard(rows)

    def usage_report(self) -> UsageResult:
        """Latest breakdown, per-model calibration and recent history, for the dashboard."""
        latest = None
        if self.history.latest is not None:
            last = self.history.latest
            model = self.model(last.model_id)
            breakdown = self.breakdown(model, last.estimate)
            latest = LatestRequest(model.id, last.input_tokens, last.output_tokens, breakdown)
        models = [
            ModelCalibration(
                model.id,
                self.calibration.ratios(model),
                self.scales(model),
                self.calibration.copilot_ratio(model),
                self.calibration.learned_limit(model.id),
                self.max_input_tokens(model),
            )
            for model in self.catalog
        ]
        costs, today = self.history.costs()
        return UsageResult(
            epoch=self.epoch,
            pid=os.getpid(),
            persistent=self.ledger.persistent,
            latest=latest,
            status=self.status(),
            models=models,
            history=self.history.recent(),
            costs=costs,
            today_usd=None if today is None else today.total_usd,
            today_reported_usd=None if today is None else today.reported_usd,
        )


def request_key(messages: Sequence[Message], tools: Sequence[Tool]) -> str:
    """What tells one request from another: its messages' digests and its tools' JSON."""
    parts = [message_digest(message) for message in messages] + [tool_json(t) for t in tools]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
