"""The server's brain without the LSP: models, counts, calibration, budget and status together.

`TokenGaugeServer` owns one `Gauge` and its handlers call into it; the CLI builds one too. Every
method takes plain ARCHITECTURE §3 objects and returns protocol payloads.
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
from tokengauge.activity.conversations import Conversations, request_kind
from tokengauge.activity.cost import (
    CostSource,
    CostSum,
    CostTotal,
    cost_totals,
    request_cost_of,
    start_of_day,
)
from tokengauge.activity.record import Outcome, RequestKind, RequestRecord, read_record
from tokengauge.activity.record import stored as record_field
from tokengauge.calibration.classify import ErrorKind, classify_error
from tokengauge.calibration.estimates import Calibration, RequestEstimate
from tokengauge.calibration.trim import Truncator, cap_tool_results
from tokengauge.counting.copilot_view import COPILOT_ENCODING, CopilotView
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.frequent import FrequentStrings
from tokengauge.counting.request import RequestCounter, TextCount, message_digest, tool_json
from tokengauge.counting.scales import Scales
from tokengauge.counting.text import TextCounters
from tokengauge.formatting import compact
from tokengauge.ledger.store import Ledger
from tokengauge.messages import CountInput, InvalidInput, Message, Tool, Usage
from tokengauge.models import budget
from tokengauge.models.catalog import (
    DiscoveredModel,
    ModelCatalog,
    ModelSpec,
    UnknownModelError,
    from_documents,
    to_documents,
)
from tokengauge.models.context_sizes import ContextSizes
from tokengauge.models.declared import Basis, Declared, damped
from tokengauge.models.prices import price_text
from tokengauge.models.served import Served, ServedWindows
from tokengauge.protocol import (
    Breakdown,
    Capabilities,
    CountTokensResult,
    LatestRequest,
    ModelCalibration,
    ModelCost,
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
from tokengauge.settings import ProviderSettings, ServerSettings, ToolDocs
from tokengauge.status import (
    LAST_CONVERSATION,
    Figures,
    LastConversation,
    ready_status,
    render_status,
    without_notes,
)
from tokengauge.upstream.choices import model_choices
from tokengauge.upstream.presets import resolve, resolve_all
from tokengauge.upstream.served import served_kind

log = logging.getLogger(__name__)

HISTORY_IN_REPORT = 100
COPILOT_MESSAGE_OVERHEAD = 3
"""What Copilot Chat adds to each message count itself."""
HELPER_MAX_MESSAGES = 2
"""A request without tools and with at most this many messages, not Copilot's chat prompt, is one
of Copilot's helpers (a chat title, progress messages): it does not move the status bar."""
WARM_ENTRIES = 200_000
CLIENT_UNITS_SHOWN = 0.02
"""The tooltip says the sizes Copilot is told once they are this far from the true ones."""
CUT_BELOW: Final = 0.5
"""A local server that counted less than this share of what the request should come to (the
fit's own prediction, before any usage taught it) cut the prompt without an error: no tokenizer
counts that much less than the prior (the harshest skew seen is 0.6)."""
CUT_BELOW_CALIBRATED: Final = 0.75
"""…and this share once usage has taught the fit the model's tokenizer."""
FULL_WINDOW: Final = 0.97
"""A read of at least this share of the served window, of a request estimated above that window,
was cut to it: requests are fitted below the window, so only a cut fills it (a conversation that
grows a turn at a time overflows by a little first). Taken for a cut wrongly, it costs only
taking the window the server serves."""
DROP_INTERVAL: Final = 3_600.0
"""How often a long session forgets the usage records older than the retention."""
ANCHOR_SECONDS: Final = 600.0
"""How often a server that counts requests itself is asked for an exact count (the first request
of a model in a session is always counted)."""


def discovery_key(provider_id: str) -> str:
    """Ledger document name of a provider's discovered models."""
    return f"discovery/{provider_id}"


@attrs.frozen
class LastRequest:
    """A request the API reported usage for, with its estimate: the status bar and the dashboard
    show it."""

    model_id: str
    estimate: RequestEstimate
    input_tokens: int
    output_tokens: int | None
    cost_usd: float | None = None
    cost_source: CostSource = "estimate"


class Gauge:
    """Counting, calibration and budgets for the configured models."""

    def __init__(
        self,
        settings: ServerSettings,
        ledger: Ledger,
        encodings: EncodingRegistry | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = attrs.evolve(settings, providers=resolve_all(settings.providers))
        self.ledger = ledger
        self.discovered: dict[str, list[DiscoveredModel]] = {
            provider.id: from_documents(ledger.get_document(discovery_key(provider.id)))
            for provider in self.settings.providers
            if provider.discover
        }
        self.catalog = ModelCatalog.from_settings(self.settings, self.discovered)
        self.encodings = encodings or EncodingRegistry()
        self.counters = TextCounters(self.encodings)
        self.calibration = Calibration(ledger)
        self.context_sizes = ContextSizes(ledger)
        self.served = ServedWindows(ledger)
        self._num_ctx_sent: dict[str, int] = {}
        self._anchored: dict[str, float] = {}
        self._exact: dict[str, tuple[str, int]] = {}
        self._tool_docs: dict[str, ToolDocs] = {}
        self._declared: dict[str, Declared] = {}
        self.frequent = FrequentStrings(ledger)
        self.latest: LastRequest | None = None
        """The last request reported, helpers included (the dashboard's)."""
        self.last: LastRequest | None = None
        """The last conversation request reported (the status bar's)."""
        self._request_counters: dict[str, RequestCounter] = {}
        self.conversations = Conversations()
        self.conversation: str | None = None
        """The conversation of the last request logged that had one (the status bar's)."""
        self._clock = clock
        self._dropped = 0.0
        self._drop_old_usage()

    @functools.cached_property
    def copilot_view(self) -> CopilotView:
        """Copilot's own count of messages (its o200k_base), loaded when first needed."""
        return CopilotView(self.encodings.get(COPILOT_ENCODING))

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

    def add_provider(self, provider: ProviderSettings) -> ProviderSettings:
        """Add (or replace) a provider of Manage Models, its preset resolved (`InvalidInput` if
        it cannot be), with what it listed before; a provider of settings with its id wins and is
        returned instead."""
        providers = {known.id: known for known in self.settings.providers}
        known = providers.get(provider.id)
        if known is not None and not known.managed:
            return known
        provider = resolve(provider)
        providers[provider.id] = provider
        self.settings = attrs.evolve(self.settings, providers=tuple(providers.values()))
        if provider.id not in self.discovered:
            document = self.ledger.get_document(discovery_key(provider.id))
            self.discovered[provider.id] = from_documents(document)
        self.catalog = ModelCatalog.from_settings(self.settings, self.discovered)
        self._request_counters.clear()
        return provider

    def provider(self, provider_id: str) -> ProviderSettings:
        """The provider with this id (of settings or Manage Models), or `InvalidInput`."""
        for provider in self.settings.providers:
            if provider.id == provider_id:
                return provider
        known = ", ".join(provider.id for provider in self.settings.providers) or "none"
        raise InvalidInput(f"unknown provider {provider_id!r}; configured providers: {known}")

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

    def window_limit(self, model: ModelSpec) -> int | None:
        """What limits the model's window below its own: what overflows taught us, the context
        size picked for it, or the window its local server has loaded it with (the smallest)."""
        limits = [
            self.calibration.learned_limit(model.id),
            self.context_sizes.limit(model),
            self.served.limit(model),
        ]
        return min((limit for limit in limits if limit is not None), default=None)

    def has_local_models(self) -> bool:
        """Whether a model is served by a local server (`upstream.served`)."""
        return any(served_kind(model.provider) is not None for model in self.catalog)

    def num_ctx(self, model: ModelSpec) -> int | None:
        """The `num_ctx` to ask Ollama for: the context size picked for the model, else its
        `numCtx` setting, else what Ollama has loaded it with (nothing reloads unasked); None for
        other servers, or before Ollama has said."""
        if served_kind(model.provider) != "ollama":
            return None
        asked = self.asked_num_ctx(model)
        served = self.served.get(model.id)
        return asked or (served.window if served is not None and served.loaded else None)

    def asked_num_ctx(self, model: ModelSpec) -> int | None:
        """The window a person asked Ollama to load the model with (picked, or `numCtx`)."""
        return self.context_sizes.limit(model) or model.num_ctx

    def num_ctx_sent(self, model: ModelSpec, num_ctx: int | None) -> None:
        """A request asked Ollama for `num_ctx`: its next reading shows what Ollama made of it."""
        if num_ctx is not None:
            self._num_ctx_sent[model.id] = num_ctx

    def last_num_ctx(self, model: ModelSpec) -> int | None:
        """The `num_ctx` the model's last request asked Ollama for, if any."""
        return self._num_ctx_sent.get(model.id)

    def apply_served(self, model: ModelSpec, served: Served) -> bool:
        """Keep what the model's local server said it serves it with; True if its window moved
        (VS Code must ask for the models again). A larger window (the model reloaded with more)
        makes a smaller limit an overflow taught moot."""
        if not self.served.update(model.id, served):
            return False
        learned = self.calibration.learned_limit(model.id)
        if learned is not None and learned < min(served.window, model.context_window):
            self.ledger.set_limit(model.id, model.context_window)  # reloaded with more: moot
        log.info(
            "%s: its server serves a %s-token window (%s)",
            model.id,
            f"{served.window:,}",
            served.source,
        )
        self.calibration.changed(model.id)
        return True

    def silently_cut(self, model: ModelSpec, estimate: RequestEstimate, usage: Usage) -> bool:
        """Whether a local server counted the request far below what it comes to, or read just
        its whole served window of a request larger than that: it cut the prompt without an
        error (Ollama and LM Studio do)."""
        read = usage.total_input_tokens
        if served_kind(model.provider) is None or read <= 0:
            return False
        fit = self.calibration.fit(model)
        expected = self.expected_size(model, estimate)
        share = CUT_BELOW_CALIBRATED if fit.observations or estimate.exact else CUT_BELOW
        if read < share * expected:
            return True
        served = self.served.get(model.id)
        return (
            served is not None
            and read >= FULL_WINDOW * served.window
            and max(expected, estimate.total) > served.window
        )

    def expected_size(self, model: ModelSpec, estimate: RequestEstimate) -> int:
        """What the request most likely came to: the server's count, else the fit's, without
        the margin estimates carry."""
        return estimate.exact or round(self.calibration.expected(model, estimate))

    def learn_cut(self, model: ModelSpec, usage: Usage, served: Served | None) -> int:
        """A request the server cut: its window is what it says it has loaded when that is
        smaller than the window believed in (a `contextWindow` set included), else at most what
        it read and wrote (a lower bound that holds); the window learned."""
        window = budget.effective_window(model, self.window_limit(model))
        if served is not None:
            self.apply_served(model, served)
        if served is not None and served.window < window:
            learned = served.window
        else:
            learned = max(2, usage.total_input_tokens + usage.output_tokens)
        if learned < window:
            self.ledger.set_limit(model.id, learned)
            self.calibration.changed(model.id)
        return min(learned, window)

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

    def max_input_tokens(self, model: ModelSpec) -> int:
        """The model's input budget, after what overflows have taught us and the context size
        picked for it."""
        return budget.max_input_tokens(model, self.window_limit(model))

    def choose_context_size(self, model: ModelSpec, size: int) -> bool:
        """A context size picked for a model; whether its window changed (VS Code must ask for
        the models again)."""
        return self.context_sizes.choose(model, size)

    def declared(self, model: ModelSpec) -> Declared:
        """What VS Code is told of the model's window (`models.declared`): the last
        declaration while the true sizes are those it was made for, else a new one."""
        current = self._declared.get(model.id)
        if current is None:
            current = Declared.from_document(self.ledger.get_document(_declared_key(model.id)))
            if current is not None:
                self._declared[model.id] = current
        basis = self._basis(model)
        if current is None or (current.true_max_input, current.true_window) != (
            basis.max_input,
            basis.window,
        ):
            current = self._declare(model, damped(None, basis))
        return current

    def redeclare(self, model: ModelSpec) -> bool:
        """Move the model's declaration if calibration has taken its ideal out of the band;
        whether it moved (VS Code must ask for the models again)."""
        current = self.declared(model)
        moved = damped(current, self._basis(model))
        if moved == current:
            return False
        self._declare(model, moved)
        log.info(
            "%s: declared maxInputTokens %s, window %s (was %s, %s) in Copilot's units",
            model.id,
            f"{moved.max_input:,}",
            f"{moved.window:,}",
            f"{current.max_input:,}",
            f"{current.window:,}",
        )
        return True

    def _declare(self, model: ModelSpec, declared: Declared) -> Declared:
        """Keep `declared` as the model's declaration (in the ledger too); counts follow a
        declaration that replaces another."""
        before = self._declared.get(model.id)
        if before != declared:
            self._declared[model.id] = declared
            self.ledger.set_document(_declared_key(model.id), declared.to_document())
            if before is not None:
                self.calibration.changed(model.id)
        return declared

    def _basis(self, model: ModelSpec) -> Basis:
        limit = self.window_limit(model)
        window = budget.effective_window(model, limit)
        max_input = budget.max_input_tokens(model, limit)
        least_output = min(budget.LEAST_OUTPUT_FLOOR, window - max_input)
        return self.calibration.basis(model, window, max_input, least_output)

    def client_prompt(self, model: ModelSpec, tokens: int) -> int:
        """A request's input of `tokens` true tokens in the units VS Code is told the model's
        window in (what Copilot's compaction compares with `maxInputTokens`)."""
        return round(tokens * self.declared(model).scale)

    def model_info(self, model: ModelSpec) -> ModelInfo:
        """The model as VS Code should see it: its sizes in Copilot's units (`declared`), the
        true ones in the tooltip."""
        limit = self.window_limit(model)
        window = budget.effective_window(model, limit)
        declared = self.declared(model)
        shown = f"{compact(window)}-token window"
        served = self.served.get(model.id) if served_kind(model.provider) else None
        if limit is not None and limit < model.context_window:
            listed = compact(model.context_window)
            if limit == self.context_sizes.limit(model):
                shown += f" (picked in the model's options; {listed} listed)"
            elif served is not None and limit == served.window:  # read, or learned from a cut
                shown += f" ({served.source}; the model's own is {listed})"
            else:
                shown += f" (smaller than the {listed} listed: the provider's errors showed it)"
        elif served is not None and not model.window_set:
            shown += f" ({served.source})"
        tooltip = (
            f"{model.name} via {model.provider.id} · {shown}, "
            f"up to {compact(min(model.max_output_tokens, window - 1))} output tokens"
        )
        if served is not None and model.window_set and served.window != window:
            tooltip += served_beside_setting(served, window)
        if abs(declared.scale - 1) > CLIENT_UNITS_SHOWN:
            tooltip += (
                f". Copilot counts with its own tokenizer: it is told of "
                f"{compact(declared.max_input)} input tokens in a {compact(declared.window)} "
                "window of its count"
            )
        return ModelInfo(
            id=model.id,
            name=model.name,
            family=model.family,
            version=model.id,
            provider_id=model.provider.id,
            max_input_tokens=declared.max_input,
            # VS Code's Agent Host takes maxInputTokens + maxOutputTokens as the window.
            max_output_tokens=declared.max_output,
            context_window=window,
            capabilities=Capabilities(
                tool_calling=model.tool_calling, image_input=model.image_input
            ),
            tooltip=tooltip,
            detail=f"Token Gauge · {model.provider.id}",
            pricing=price_text(model.pricing),
            choices=model_choices(model),
        )

    def models(self) -> list[ModelInfo]:
        """Every configured model (new declarations stored together, in one transaction)."""
        with self.ledger.batched():
            return [self.model_info(model) for model in self.catalog]

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

    def tool_docs_used(self, model: ModelSpec) -> None:
        """`model.tool_docs` is what its latest chat sent (a pick in VS Code's model picker may
        differ from the settings): the status names it."""
        self._tool_docs[model.id] = model.tool_docs

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

    def record_usage(
        self,
        params: RecordUsageParams,
        estimate: RequestEstimate | None = None,
        *,
        log_request: bool = True,
        given: Sequence[Tool] | None = None,
    ) -> RecordResult:
        """Learn from the usage the API reported for a request, as counted when it was sent;
        `log_request`: add it to the usage history as answered (the chat logs its own); `given`:
        the tools in full, when the request sent a reduced form."""
        model = self.model(params.model_id)
        estimate = estimate or self.estimate(model, params.messages, params.tools)
        self._learn_usage(model, estimate, params.usage, params.messages, given or params.tools)
        cost, source = request_cost_of(params.usage, model.pricing)
        used, output = params.usage.total_input_tokens, params.usage.output_tokens
        self.latest = LastRequest(model.id, estimate, used, output, cost, source)
        if request_kind(params.messages, len(params.tools), HELPER_MAX_MESSAGES) != "helper":
            self.last = self.latest
            remembered = LastConversation(model.id, used, output)
            self.ledger.set_document(LAST_CONVERSATION, remembered.to_document())
        if log_request:
            self.log_request(
                model, params.messages, params.tools, estimate, "answered", usage=params.usage
            )
        moved = self.redeclare(model)
        return RecordResult(
            epoch=self.epoch,
            estimate=self.breakdown(model, estimate),
            models_changed=moved,
            client_prompt=self.client_prompt(model, params.usage.total_input_tokens),
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

    def record_error(
        self,
        params: RecordErrorParams,
        estimate: RequestEstimate | None = None,
        *,
        log_request: bool = True,
    ) -> RecordResult:
        """Classify an API error body; learn from it when it is an overflow; `log_request`: add
        the request to the usage history as failed (the chat logs its own)."""
        model = self.model(params.model_id)
        estimate = estimate or self.estimate(model, params.messages, params.tools)
        error = classify_error(params.status, params.body)
        learned = None
        if error.kind is ErrorKind.OVERFLOW:  # the API's own window, whatever size was picked
            window = budget.effective_window(model, self.calibration.learned_limit(model.id))
            copilot = self.copilot_view.messages(params.messages)
            learned = self.calibration.learn_overflow(model, estimate, error, window, copilot)
        if log_request:
            failure = error.kind.value.replace("_", " ")
            self.log_request(
                model, params.messages, params.tools, estimate, "failed", error=failure
            )
        moved = self.redeclare(model)
        return RecordResult(
            epoch=self.epoch,
            estimate=self.breakdown(model, estimate),
            error=error.report(),
            learned_limit=learned,
            models_changed=learned is not None or moved,
        )

    def ahead(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        estimate: RequestEstimate,
        held: Sequence[Message] | None,
        *,
        conversation: bool,
    ) -> tuple[RequestKind, str | None]:
        """A request's kind and, if asked, the conversation it will be placed in (`log_request`
        given it keeps it), told before it is sent (arguments as `log_request`'s)."""
        kind, held, digests = self._placing(messages, tools, estimate, held)
        return kind, self.conversations.ahead(held, digests, kind) if conversation else None

    def _placing(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        estimate: RequestEstimate,
        held: Sequence[Message] | None,
    ) -> tuple[RequestKind, Sequence[Message], list[str]]:
        """The request's kind, and the messages its conversation holds with their digests."""
        kind = request_kind(messages, len(tools), HELPER_MAX_MESSAGES)
        if held is None:
            return kind, messages, list(estimate.features.digests)
        return kind, held, [message_digest(message) for message in held]

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
        """Add a request to the usage history: its conversation, sizes, usage, cost and fate
        (`answer_text`, `answer_calls`: the beginning of its answer and its tool calls' ids;
        `held`: the messages the conversation holds, when the recovery ladder sent fewer; `cut`:
        the server cut the prompt without an error; `ahead`: the conversation `ahead` told)."""
        kind, held, digests = self._placing(messages, tools, estimate, held)
        placement = self.conversations.place(
            held, digests, kind, answer_text, answer_calls, ahead=ahead
        )
        limit = self.window_limit(model)
        cost, source = request_cost_of(usage, model.pricing) if usage else (None, "estimate")
        record = RequestRecord(
            time=self._clock(),
            model_id=model.id,
            kind=kind,
            outcome=outcome,
            estimated_tokens=estimate.total,
            window=budget.effective_window(model, limit),
            max_input_tokens=budget.max_input_tokens(model, limit),
            conversation=placement.conversation,
            error=error,
            input_tokens=None if usage is None else usage.total_input_tokens,
            cached_tokens=0 if usage is None else usage.cache_read_tokens,
            cache_write_tokens=0 if usage is None else usage.cache_write_tokens,
            output_tokens=None if usage is None else usage.output_tokens,
            reasoning_tokens=0 if usage is None else usage.reasoning_tokens,
            cost_usd=cost,
            cost_source=source,
            trimmed_tokens=trimmed_tokens,
            ladder=dict(ladder or {}),
            tool_docs_saved=estimate.tools_saved,
            retries=retries,
            summarized=placement.summarized,
            ratios=self.calibration.ratios(model),
            cut=cut,
        )
        self.ledger.append_usage(record.to_json())
        self._drop_old_usage()
        if record.conversation is not None:
            self.conversation = record.conversation
        return record

    def _drop_old_usage(self) -> None:
        """Forget the usage records older than the retention (at most once an hour)."""
        now = self._clock()
        if now - self._dropped >= DROP_INTERVAL:
            self._dropped = now
            self.ledger.drop_usage_before(
                dashboard.kept_since(now, self.settings.usage_retention_days)
            )

    def requests(self) -> list[RequestRecord]:
        """The usage history's requests within the retention, oldest first."""
        since = dashboard.kept_since(self._clock(), self.settings.usage_retention_days)
        records = (read_record(data) for data in self.ledger.recent_usage(since=since))
        return [record for record in records if record is not None and record.time >= since]

    def dashboard(self) -> Callable[[], dashboard.DashboardData]:
        """The dashboard's data, to be made: the models' rows are taken now; reading the requests
        kept and summing them per day, model and conversation is left to the caller's thread
        (it reads only the ledger, which any thread may)."""
        models = [
            dashboard.ModelRow(
                model.id,
                model.name,
                budget.effective_window(model, self.window_limit(model)),
                self.max_input_tokens(model),
                _pricing_row(model),
            )
            for model in self.catalog
        ]
        now, days = self._clock(), self.settings.usage_retention_days
        return lambda: dashboard.build(self.requests(), models, now, days)

    def status(self) -> Status:
        """Status-bar content: the last conversation request, else how many models are ready."""
        return self.conversation_status() or ready_status([model.name for model in self.catalog])

    def conversation_status(self) -> Status | None:
        """The status of the last conversation request of this session, else of the one the
        ledger remembers from an earlier session; None when there is none."""
        if self.last is not None:
            model = self.model(self.last.model_id)
            figures = self._figures(model, self.last.input_tokens, self.last.output_tokens)
            saved = self.last.estimate.tools_saved
            if saved:
                figures = attrs.evolve(
                    figures,
                    tool_docs=self._tool_docs.get(model.id, model.tool_docs),
                    tool_docs_total=round(self._history_sum("tool_docs_saved") or 0),
                )
            if self.last.cost_usd is not None:
                today = start_of_day(self._clock())
                conversation = self.conversation
                figures = attrs.evolve(
                    figures,
                    cost_usd=self.last.cost_usd,
                    cost_source=self.last.cost_source,
                    today_usd=self._cost_sum(today, model_id=model.id),
                    conversation_usd=None
                    if conversation is None
                    else self._cost_sum(conversation=conversation),
                )
            return render_status(figures, self.last.estimate, self.calibration.ratios(model))
        earlier = LastConversation.from_document(self.ledger.get_document(LAST_CONVERSATION))
        try:
            if earlier is not None:
                model = self.model(earlier.model_id)
                figures = self._figures(model, earlier.input_tokens, earlier.output_tokens)
                return render_status(figures, earlier=True)
        except UnknownModelError:
            pass  # a model no longer offered
        return None

    def _history_sum(self, field: str, since: float = 0.0, **fields: str) -> float | None:
        """The sum of a numeric field of the usage history's records within the retention (and
        since `since`) whose named fields have the given values; None if none has a number."""
        kept = dashboard.kept_since(self._clock(), self.settings.usage_retention_days)
        where = {record_field(name): value for name, value in fields.items()}
        name = record_field(field)
        return self.ledger.usage_sums([name], since=max(kept, since), fields=where)[name]

    def _cost_sum(self, since: float = 0.0, **fields: str) -> CostSum | None:
        """The known costs of the usage history's records `_history_sum` would take, with the
        part of them the API reported; None when none is known."""
        total = self._history_sum("cost_usd", since, **fields)
        if total is None:
            return None
        reported = self._history_sum("cost_usd", since, cost_source="reported", **fields)
        return CostSum(total, reported)

    def _figures(self, model: ModelSpec, used: int, output: int | None) -> Figures:
        """A request's figures against the model's sizes as `model_info` reports them."""
        window = budget.effective_window(model, self.window_limit(model))
        return Figures(model.name, used, self.max_input_tokens(model), window, output)

    def _cost_totals(self) -> dict[str, CostTotal]:
        """Known costs per model over the ledger's usage history, and since local midnight."""
        records = [record.to_json() for record in self.requests()]
        return cost_totals(records, start_of_day(self._clock()))

    def usage_report(self) -> UsageResult:
        """Latest breakdown, per-model calibration and recent history, for the dashboard."""
        latest = None
        if self.latest is not None:
            model = self.model(self.latest.model_id)
            latest = LatestRequest(
                model.id,
                self.latest.input_tokens,
                self.latest.output_tokens,
                self.breakdown(model, self.latest.estimate),
            )
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
        totals = self._cost_totals()
        return UsageResult(
            epoch=self.epoch,
            pid=os.getpid(),
            persistent=self.ledger.persistent,
            latest=latest,
            status=self.status(),
            models=models,
            history=self.ledger.recent_usage(HISTORY_IN_REPORT),
            costs=[
                ModelCost(
                    model_id,
                    total.total_usd,
                    total.today_usd,
                    total.requests,
                    total.reported_usd,
                    total.today_reported_usd,
                )
                for model_id, total in totals.items()
            ],
            today_usd=sum(total.today_usd for total in totals.values()) if totals else None,
            today_reported_usd=sum(total.today_reported_usd for total in totals.values())
            if totals
            else None,
        )


def served_beside_setting(served: Served, window: int) -> str:
    """The tooltip's word on a server's window that differs from the `contextWindow` set."""
    if served.window < window:
        return (
            f". ⚠ The server has it loaded with only {compact(served.window)} tokens "
            f"({served.source}): longer requests are cut or refused; set contextWindow to "
            f"{served.window} or load the model with more"
        )
    return f". The server has it loaded with {compact(served.window)} tokens ({served.source})"


def request_key(messages: Sequence[Message], tools: Sequence[Tool]) -> str:
    """What tells one request from another: its messages' digests and its tools' JSON."""
    parts = [message_digest(message) for message in messages] + [tool_json(t) for t in tools]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _declared_key(model_id: str) -> str:
    return f"declared/{model_id}"


def _pricing_row(model: ModelSpec) -> dashboard.PricingRow | None:
    pricing = model.pricing
    if pricing is None:
        return None
    return dashboard.PricingRow(
        input=pricing.input_per_m_tok,
        output=pricing.output_per_m_tok,
        cached_input=pricing.cached_input_per_m_tok,
        cache_write=pricing.cache_write_per_m_tok,
        reasoning=pricing.reasoning_per_m_tok,
    )
