"""The server's brain without the LSP: models, counts, calibration, budget and status together.

`TokenGaugeServer` owns one `Gauge` and its handlers call into it; the CLI builds one too. Every
method takes plain DESIGN §3 objects and returns protocol payloads.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

import attrs

from tokengauge import budget
from tokengauge.calibration import Calibration, RequestEstimate, scaled
from tokengauge.counting import RequestCounter, message_digest
from tokengauge.encodings import EncodingRegistry
from tokengauge.frequent_strings import FrequentStrings
from tokengauge.ledger import Ledger
from tokengauge.models import ModelCatalog, ModelSpec
from tokengauge.overflow import ErrorKind, parse_overflow_error
from tokengauge.protocol import (
    Breakdown,
    Capabilities,
    CountTokensResult,
    ModelInfo,
    ModelScale,
    RecordErrorParams,
    RecordResult,
    RecordUsageParams,
    WarmCountsResult,
    WarmEntry,
)
from tokengauge.settings import ServerSettings
from tokengauge.status import Status, compact, render_status
from tokengauge.text_counter import TextCounters
from tokengauge.upstream.discovery import DiscoveredModel, from_documents, to_documents
from tokengauge.wire import CountInput, Message, Tool, unstructure

log = logging.getLogger(__name__)

HISTORY_IN_REPORT = 100
WARM_ENTRIES = 200_000


def discovery_key(provider_id: str) -> str:
    """Ledger document name of a provider's discovered models."""
    return f"discovery/{provider_id}"


@attrs.frozen
class LastRequest:
    """The most recent calibrated request of a model, for the status bar and the dashboard."""

    model_id: str
    estimate: RequestEstimate
    input_tokens: int
    output_tokens: int | None


class Gauge:
    """Counting, calibration and budgets for the configured models."""

    def __init__(
        self,
        settings: ServerSettings,
        ledger: Ledger,
        encodings: EncodingRegistry | None = None,
    ) -> None:
        self.settings = settings
        self.ledger = ledger
        self.discovered: dict[str, list[DiscoveredModel]] = {
            provider.id: from_documents(ledger.get_document(discovery_key(provider.id)))
            for provider in settings.providers
            if provider.discover
        }
        self.catalog = ModelCatalog.from_settings(settings, self.discovered)
        self.encodings = encodings or EncodingRegistry()
        self.counters = TextCounters(self.encodings)
        self.calibration = Calibration(ledger)
        self.frequent = FrequentStrings(ledger)
        self.last: LastRequest | None = None
        self._request_counters: dict[str, RequestCounter] = {}

    @property
    def epoch(self) -> int:
        """Changes whenever a count could change."""
        return self.calibration.epoch

    def apply_discovery(self, provider_id: str, models: list[DiscoveredModel]) -> bool:
        """Remember what a provider lists (in the ledger too); True if the models changed."""
        self.ledger.set_document(discovery_key(provider_id), to_documents(models))
        if self.discovered.get(provider_id) == models:
            return False
        self.discovered[provider_id] = models
        self.catalog = ModelCatalog.from_settings(self.settings, self.discovered)
        self._request_counters.clear()
        return True

    def model(self, model_id: str) -> ModelSpec:
        """The configured model, or `UnknownModelError`."""
        return self.catalog.get(model_id)

    def counter(self, model: ModelSpec) -> RequestCounter:
        """The raw counter for a model (its encoding and image rule)."""
        counter = self._request_counters.get(model.id)
        if counter is None:
            counter = RequestCounter(self.counters.for_encoding(model.encoding), model.image_rule)
            self._request_counters[model.id] = counter
        return counter

    def max_input_tokens(self, model: ModelSpec) -> int:
        """The model's input budget, after what overflows have taught us."""
        return budget.max_input_tokens(model, self.calibration.learned_limit(model.id))

    def model_info(self, model: ModelSpec) -> ModelInfo:
        """The model as VS Code should see it."""
        limit = self.calibration.learned_limit(model.id)
        max_input = budget.max_input_tokens(model, limit)
        window = budget.effective_window(model, limit)
        learned = f" (learned from an API error; configured {compact(model.context_window)})"
        tooltip = (
            f"{model.name} via {model.provider.id}: {compact(window)} window"
            f"{learned if limit is not None and limit < model.context_window else ''}, "
            f"{compact(window - max_input)} kept for output, input budget {compact(max_input)}."
        )
        return ModelInfo(
            id=model.id,
            name=model.name,
            family=model.family,
            version=model.id,
            provider_id=model.provider.id,
            max_input_tokens=max_input,
            max_output_tokens=model.max_output_tokens,
            context_window=window,
            capabilities=Capabilities(
                tool_calling=model.tool_calling, image_input=model.image_input
            ),
            tooltip=tooltip,
            detail=f"tokengauge · {model.provider.id}",
        )

    def models(self) -> list[ModelInfo]:
        """Every configured model."""
        return [self.model_info(model) for model in self.catalog]

    def count(self, model_id: str, inputs: Sequence[CountInput]) -> CountTokensResult:
        """Counts for strings (text only) and messages (with structure), in input order."""
        model = self.model(model_id)
        counter = self.counter(model)
        tokens, raws = [], []
        for item in inputs:
            if isinstance(item, str):
                raw = counter.text.count(item)
                tokens.append(self.calibration.estimate_text(model, raw))
                self.frequent.seen(model.encoding, item, raw)
            else:
                raw = counter.message(item)
                estimate = self.calibration.estimate_message(model, raw, message_digest(item))
                tokens.append(estimate.tokens)
            raws.append(raw)
        return CountTokensResult(
            tokens=tokens, raw=raws, epoch=self.epoch, scale=self.calibration.scale(model.id)
        )

    def warm_counts(self, model_ids: Sequence[str]) -> WarmCountsResult:
        """Raw counts of the most asked strings for each model (each id once; at most
        `WARM_ENTRIES` in all, split evenly), with each model's scale."""
        entries = []
        scales = []
        unique = list(dict.fromkeys(model_ids))
        per_model = WARM_ENTRIES // max(1, len(unique))
        for model_id in unique:
            model = self.model(model_id)
            scale = self.calibration.scale(model.id)
            scales.append(ModelScale(model.id, scale))
            entries += [
                WarmEntry(model.id, sha, raw, scaled(raw, scale))
                for sha, raw in self.frequent.entries(model.encoding)[:per_model]
            ]
        return WarmCountsResult(entries=entries, epoch=self.epoch, scales=scales)

    def estimate(
        self, model: ModelSpec, messages: Sequence[Message], tools: Sequence[Tool]
    ) -> RequestEstimate:
        """The whole request's count with its breakdown."""
        return self.calibration.estimate_request(model, self.counter(model), messages, tools)

    def breakdown(self, model: ModelSpec, estimate: RequestEstimate) -> Breakdown:
        """A request estimate as a payload."""
        return Breakdown(
            system=estimate.system,
            tools=estimate.tools,
            messages=[m.tokens for m in estimate.messages],
            sources=[m.source for m in estimate.messages],
            total=estimate.total,
            raw_total=estimate.raw.total,
            factor=estimate.factor,
            max_input_tokens=self.max_input_tokens(model),
        )

    def record_usage(
        self, params: RecordUsageParams, estimate: RequestEstimate | None = None
    ) -> RecordResult:
        """Learn from the usage the API reported for a request, as counted when it was sent."""
        model = self.model(params.model_id)
        estimate = estimate or self.estimate(model, params.messages, params.tools)
        self.calibration.record_usage(model, estimate, params.usage)
        self.last = LastRequest(
            model.id, estimate, params.usage.total_input_tokens, params.usage.output_tokens
        )
        return RecordResult(epoch=self.epoch, estimate=self.breakdown(model, estimate))

    def record_error(
        self, params: RecordErrorParams, estimate: RequestEstimate | None = None
    ) -> RecordResult:
        """Classify an API error body; learn from it when it is an overflow."""
        model = self.model(params.model_id)
        estimate = estimate or self.estimate(model, params.messages, params.tools)
        error = parse_overflow_error(params.status, params.body)
        learned = None
        if error.kind is ErrorKind.OVERFLOW:
            window = budget.effective_window(model, self.calibration.learned_limit(model.id))
            learned = self.calibration.learn_overflow(model, estimate, error, window)
        return RecordResult(
            epoch=self.epoch,
            estimate=self.breakdown(model, estimate),
            error=error.to_json(),
            learned_limit=learned,
        )

    def status(self) -> Status | None:
        """Status-bar content for the last calibrated request, if any."""
        if self.last is None:
            return None
        model = self.model(self.last.model_id)
        return render_status(
            model.name,
            self.last.input_tokens,
            self.max_input_tokens(model),
            self.last.estimate,
            self.last.output_tokens,
        )

    def usage_report(self) -> dict[str, object]:
        """Latest breakdown, per-model calibration and recent history, for the dashboard."""
        latest = None
        if self.last is not None:
            model = self.model(self.last.model_id)
            latest = {
                "modelId": model.id,
                "inputTokens": self.last.input_tokens,
                "outputTokens": self.last.output_tokens,
                "estimate": unstructure(self.breakdown(model, self.last.estimate)),
            }
        return {
            "epoch": self.epoch,
            "pid": os.getpid(),
            "persistent": self.ledger.persistent,
            "latest": latest,
            "status": unstructure(self.status()),
            "models": [
                {
                    "id": model.id,
                    "factor": self.calibration.factor(model.id),
                    "learnedLimit": self.calibration.learned_limit(model.id),
                    "maxInputTokens": self.max_input_tokens(model),
                }
                for model in self.catalog
            ],
            "history": self.ledger.recent_usage(HISTORY_IN_REPORT),
        }
