"""The server's hub without the LSP: the parts built over one ledger, and what one learns passed
to the others.

Each concern keeps its own state: `models.offer.Offer` the providers, models, windows and
declarations; `calibration.estimates.Calibration` the fits; `gauge.counts.Counts` the counters
and counts; `activity.history.History` the requests and their costs; `status.StatusBar` what the
status bar says. `TokenGaugeServer` owns one `Gauge` and its handlers call into it; the CLI
builds one too.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Final

import attrs
import cachetools

from tokengauge.activity import dashboard
from tokengauge.activity.history import History
from tokengauge.calibration.classify import ErrorKind, ParsedError, classify_error
from tokengauge.calibration.estimates import Calibration
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.counting.copilot_view import CopilotView
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.frequent import FrequentStrings
from tokengauge.gauge.counts import Counts
from tokengauge.ledger.store import Ledger
from tokengauge.messages import CountInput, Message, Tool, Usage
from tokengauge.models.catalog import DiscoveredModel, ModelCatalog, ModelSpec
from tokengauge.models.offer import Offer
from tokengauge.models.served import ServedWindows
from tokengauge.protocol import (
    CountTokensResult,
    LatestRequest,
    ModelCalibration,
    ModelInfo,
    RecordErrorParams,
    RecordResult,
    RecordUsageParams,
    UsageResult,
    WarmCountsResult,
)
from tokengauge.settings import ProviderSettings, ServerSettings
from tokengauge.status import StatusBar
from tokengauge.upstream.choices import model_choices
from tokengauge.upstream.presets import resolve, resolve_all
from tokengauge.upstream.served import served_kind

RUNTIME_SESSIONS: Final = 1_000
"""Conversations of the Agents window's runtime whose limit is remembered (LRU)."""


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
    """The parts over one ledger, and what each learns passed to the others."""

    def __init__(
        self,
        settings: ServerSettings,
        ledger: Ledger,
        encodings: EncodingRegistry | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ledger = ledger
        self.encodings = encodings or EncodingRegistry()
        self.calibration = Calibration(ledger)
        self.frequent = FrequentStrings(ledger)
        resolved = attrs.evolve(settings, providers=resolve_all(settings.providers))
        self.offer = Offer(resolved, ledger, self.calibration)
        self.windows = windows = self.offer.windows
        self.counts = Counts(self.offer, self.encodings, self.calibration, self.frequent)
        days = settings.usage_retention_days
        self.history = History(ledger, days, windows, self.calibration, clock)
        self.bar = StatusBar(self.offer, self.history, self.calibration)
        self._runtime_limits: cachetools.LRUCache[tuple[str, str], int] = cachetools.LRUCache(
            RUNTIME_SESSIONS
        )

    @property
    def epoch(self) -> int:
        """Changes whenever a count could change."""
        return self.calibration.epoch

    @property
    def copilot_view(self) -> CopilotView:
        """Copilot's own count of messages (its o200k_base), loaded when first needed."""
        return self.counts.copilot_view

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
        return self.windows.served

    def apply_discovery(self, provider_id: str, models: list[DiscoveredModel]) -> bool:
        """Remember what a provider lists (in the ledger too); True if the models changed."""
        changed = self.offer.apply_discovery(provider_id, models)
        if changed:
            self.counts.models_changed()
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
        self.counts.models_changed()
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

    def max_input_tokens(self, model: ModelSpec) -> int:
        """The model's input budget, after every limit on its window."""
        return self.windows.sizes(model).max_input

    def num_ctx(self, model: ModelSpec) -> int | None:
        """The `num_ctx` to ask Ollama for (`Windows.num_ctx`); None for other servers."""
        ollama = served_kind(model.provider) == "ollama"
        return self.windows.num_ctx(model) if ollama else None

    def client_prompt(self, model: ModelSpec, tokens: int, runtime_limit: int | None = None) -> int:
        """A request's input of `tokens` true tokens in the units of the window the client meters
        (what its compaction compares with `maxInputTokens`): the declaration of now for the chat
        panel's agent, which reads it anew; for the Agents window's runtime, `runtime_limit`,
        the `maxInputTokens` its session meters against (rounded up: it takes a count only
        above its own, and compacts at 0.80 of the true budget or before)."""
        declared = self.offer.declarations.get(model)
        if runtime_limit is not None:
            return math.ceil(tokens * runtime_limit / max(1, declared.true_max_input))
        return round(tokens * declared.scale)

    def runtime_limit(self, model: ModelSpec, conversation: str | None, declared_then: int) -> int:
        """The `maxInputTokens` a session of the Agents window's runtime meters against: what was
        declared when its conversation's first request of the model came (`declared_then` of
        that request; VS Code's bridge lists the models as declared, and a session keeps the
        limit it was created with). Outside a conversation, `declared_then`."""
        if conversation is None:
            return declared_then
        return self._runtime_limits.setdefault((model.id, conversation), declared_then)

    def count(self, model_id: str, inputs: Sequence[CountInput]) -> CountTokensResult:
        """Counts for strings and messages of the model, in input order (`Counts.count`)."""
        return self.counts.count(self.offer.model(model_id), inputs)

    def warm_counts(self, model_ids: Sequence[str]) -> WarmCountsResult:
        """Raw counts of the most asked strings for each model (each id once), with each
        model's scales (`Counts.warm`)."""
        return self.counts.warm(
            [self.offer.model(model_id) for model_id in dict.fromkeys(model_ids)]
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
        self.counts.learn(model, estimate, usage, messages, given or tools)
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
            window = self.windows.api_window(model)
            copilot = self.copilot_view.messages(messages)
            learned = self.calibration.learn_overflow(model, estimate, error, window, copilot)
        moved = self.offer.declarations.redeclare(model)
        return ErrorLearned(learned, learned is not None or moved)

    def record_usage(self, params: RecordUsageParams) -> RecordResult:
        """`tokenGauge/recordUsage`: `learn_usage` of the request the payload names, estimated
        now, and the request added to the usage history as answered."""
        model, messages, tools = self.offer.model(params.model_id), params.messages, params.tools
        estimate = self.counts.estimate(model, messages, tools)
        learned = self.learn_usage(model, messages, tools, params.usage, estimate)
        self.history.log(model, messages, tools, estimate, "answered", usage=params.usage)
        return RecordResult(
            epoch=self.epoch,
            estimate=self.counts.breakdown(model, estimate),
            models_changed=learned.models_changed,
            client_prompt=learned.client_prompt,
        )

    def record_error(self, params: RecordErrorParams) -> RecordResult:
        """`tokenGauge/recordError`: the error body classified and `learn_error` of it, for the
        request the payload names, estimated now, and the request added to the usage history as
        failed."""
        model, messages, tools = self.offer.model(params.model_id), params.messages, params.tools
        estimate = self.counts.estimate(model, messages, tools)
        error = classify_error(params.status, params.body)
        learned = self.learn_error(model, messages, error, estimate)
        failure = error.kind.value.replace("_", " ")
        self.history.log(model, messages, tools, estimate, "failed", error=failure)
        return RecordResult(
            epoch=self.epoch,
            estimate=self.counts.breakdown(model, estimate),
            error=error.report(),
            learned_limit=learned.learned_limit,
            models_changed=learned.models_changed,
        )

    def dashboard(self) -> Callable[[], dashboard.DashboardData]:
        """The dashboard's data, to be made: the models' rows are taken now, the requests are
        read and summed by the caller (`History.dashboard`)."""
        rows = []
        for model in self.catalog:
            sizes = self.windows.sizes(model)
            rows.append(dashboard.model_row(model, sizes.window, sizes.max_input))
        return self.history.dashboard(rows)

    def usage_report(self) -> UsageResult:
        """Latest breakdown, per-model calibration and recent history, for the dashboard."""
        latest = None
        if self.history.latest is not None:
            last = self.history.latest
            model = self.offer.model(last.model_id)
            breakdown = self.counts.breakdown(model, last.estimate)
            latest = LatestRequest(model.id, last.input_tokens, last.output_tokens, breakdown)
        models = [
            ModelCalibration(
                model.id,
                self.calibration.ratios(model),
                self.counts.scales(model),
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
            status=self.bar.status(),
            models=models,
            history=self.history.recent(),
            costs=costs,
            today_usd=None if today is None else today.total_usd,
            today_reported_usd=None if today is None else today.reported_usd,
        )
