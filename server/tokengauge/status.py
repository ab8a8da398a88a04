"""The status-bar text, tooltip and severity: the last conversation request of a model.

Text like `$(pulse) 18.4k / 28.7k · 64%`: the input tokens of the last request over the model's
input budget (the window less the output kept for the answer), both in true tokens (VS Code is
told them in Copilot's units: `models.declared`); its severity follows the same share:
`warning` at 75%, `error` at 90%. The tooltip (markdown, shown as-is by the extension) labels
the shares of the budget and of the window and gives the breakdown (with the model's reasoning
sent back, where there is some), the request's cost and today's for the model (where prices are
known), the tokens a reduced tool documentation saved (`toolDocs`), and, folded away, the
correction factors in use, as the log prints them. Before any request the status names the number
of models ready. `StatusBar` says which: the last conversation request of this session, else the
one the usage history remembers from an earlier session (`activity.history`). What the chat says
while it waits to retry is made here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from tokengauge.activity.cost import CostSource, CostSum
from tokengauge.activity.history import History
from tokengauge.calibration.estimates import Calibration
from tokengauge.calibration.ladder import Fitted
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.formatting import compact, format_usd, percent
from tokengauge.models.catalog import ModelSpec, UnknownModelError
from tokengauge.models.offer import Offer
from tokengauge.protocol import Severity, Status
from tokengauge.settings import ToolDocs

WARNING_AT: Final = 0.75
ERROR_AT: Final = 0.90
ICON: Final = "$(pulse)"
NAMED_MODELS: Final = 8
"""Models named in the tooltip before any request; the others are counted."""


def severity_for(fill: float) -> Severity:
    """`info` below 75%, `warning` below 90%, `error` above."""
    if fill >= ERROR_AT:
        return "error"
    if fill >= WARNING_AT:
        return "warning"
    return "info"


@attrs.frozen
class Figures:
    """One request's figures for the status bar: the API's input count against the model's
    sizes as reported to VS Code."""

    model_name: str
    used: int
    max_input: int
    """`maxInputTokens`: the input budget Copilot fills."""
    window: int
    """`maxInputTokens + maxOutputTokens`: the window VS Code's context widget shows."""
    output_tokens: int | None = None
    cost_usd: float | None = None
    """What the request cost in US dollars; None: unknown (not shown)."""
    cost_source: CostSource = "estimate"
    """Whether the API reported `cost_usd` or the price table estimated it."""
    cached_tokens: int = 0
    """Of `used`, what the API read from its cache (as it reported)."""
    cache_saved_usd: float | None = None
    """What the cache reads saved against fresh input at the model's prices; None: not shown."""
    today_usd: CostSum | None = None
    """The known costs of today's requests to this model; None: not shown."""
    conversation_usd: CostSum | None = None
    """The known costs of the request's conversation so far; None: not shown."""
    tool_docs: ToolDocs = "full"
    """How much tool documentation the model's requests carry (`toolDocs`)."""
    tool_docs_total: int = 0
    """Tokens the reduced tool documentation saved over the usage history."""
    compaction: int | None = None
    """The smaller window Copilot is told of (`Windows.compaction`); None: the window itself."""


def render_status(
    figures: Figures,
    estimate: RequestEstimate | None = None,
    ratios: Mapping[str, float] | None = None,
    *,
    earlier: bool = False,
) -> Status:
    """The status of a request's `figures`, with the breakdown of its `estimate` and the model's
    correction factors `ratios` (those in use now) when known; `earlier`: the request was made
    in an earlier session (read from the ledger)."""
    used, window, max_input = figures.used, figures.window, figures.max_input
    share = percent(used, max_input)
    text = f"{ICON} {compact(used)} / {compact(max_input)} · {share}%"
    when = "last request (in an earlier session)" if earlier else "last request"
    rows = [f"**{figures.model_name}** — {when}", "", "| | tokens |", "|---|---:|"]
    if estimate is not None:
        roles = estimate.features.roles
        chat = [m for m, role in zip(estimate.messages, roles, strict=True) if role != "system"]
        counted = sum(1 for m in chat if m.source == "actual")
        tools = (
            f"tool definitions ({figures.tool_docs})"
            if estimate.tools_saved
            else "tool definitions"
        )
        rows += [
            f"| system prompt | {estimate.system:,} |",
            f"| {tools} | {estimate.tools:,} |",
            f"| messages ({len(chat)}, {counted} counted by the API before) "
            f"| {sum(m.tokens for m in chat):,} |",
        ]
        if estimate.features.reasoning:
            reasoning = round(estimate.features.reasoning * estimate.ratios["text"])
            rows.append(f"| of which the model's reasoning, sent back | ~{reasoning:,} |")
        rows += [
            f"| overhead per request | {estimate.fixed:,} |",
            f"| our estimate | {estimate.total:,} |",
        ]
    rows.append(f"| **input, as the API counted it** | **{used:,}** |")
    if figures.cached_tokens:
        cached = figures.cached_tokens
        rows.append(f"| of which read from the cache | {cached:,} ({percent(cached, used)}%) |")
    if figures.output_tokens is not None:
        rows.append(f"| output | {figures.output_tokens:,} |")
    if figures.cost_usd is not None:
        said = "reported by the API" if figures.cost_source == "reported" else "estimated"
        rows.append(f"| cost ({said}) | {format_usd(figures.cost_usd)} |")
    if figures.cache_saved_usd is not None:
        rows.append(f"| saved by the cache (estimated) | {format_usd(figures.cache_saved_usd)} |")
    paragraphs = [
        "\n".join(rows),
        f"{compact(used)} of the input budget ({compact(max_input)}): {share}%  \n"
        f"{compact(used)} of the model's window ({compact(window)} = {compact(max_input)} input "
        f"+ {compact(window - max_input)} output): {percent(used, window)}%",
    ]
    if figures.compaction is not None:
        paragraphs[-1] += (
            f"  \nCopilot is told of a {compact(figures.compaction)} window: it summarizes the "
            "chat against that"
        )
    costs = [
        f"{label}: {amount.text()}"
        for label, amount in (
            ("This conversation", figures.conversation_usd),
            ("Today on this model", figures.today_usd),
        )
        if amount is not None
    ]
    if costs:
        paragraphs.append("  \n".join(costs))
    if estimate is not None and estimate.tools_saved:
        paragraphs.append(
            f"Tool documentation `{figures.tool_docs}` saved about "
            f"{estimate.tools_saved:,} tokens on this request, "
            f"{max(figures.tool_docs_total, estimate.tools_saved):,} in total (the usage history)"
        )
    if ratios is not None:
        # Folded away: the calibration's internals, for those who want them (the extension's
        # tooltip renders this HTML).
        paragraphs.append(
            "<details><summary>Calibration</summary>\n\n"
            "Correction factors (measured ÷ estimated): "
            f"text {ratios['text']:.3f}, CJK text {ratios['cjk']:.3f}, "
            f"tool definitions {ratios['tools']:.3f}  \n"
            f"Overhead the API adds: {ratios['message']:.1f} tokens per message, "
            f"{ratios['fixed']:.1f} per request\n\n</details>"
        )
    # The colour speaks of the share the text shows, as rounded there.
    return Status(text=text, tooltip="\n\n".join(paragraphs), severity=severity_for(share / 100))


def ready_status(model_names: list[str]) -> Status:
    """The status before any request: how many models are ready."""
    count = len(model_names)
    if count == 0:
        return Status(
            text=f"{ICON} no models",
            tooltip="Token Gauge has no models yet. Add a provider with your API key: "
            "**Chat: Manage Language Models** → **Add Models…** → **Token Gauge**, or run "
            "**Token Gauge: Add Provider** to keep it in settings.json.",
            severity="warning",
        )
    ready = f"{count} model{'s' if count != 1 else ''} ready"
    named = ", ".join(model_names[:NAMED_MODELS])
    if count > NAMED_MODELS:
        named += f" and {count - NAMED_MODELS} more"
    return Status(
        text=f"{ICON} {ready}",
        tooltip=f"Token Gauge: {ready} ({named}).\n\n"
        "After the first answer in a chat, this shows how much of the model's input budget "
        "the conversation uses.",
        severity="info",
    )


class StatusBar:
    """What the status bar says now, from the usage history and the models offered."""

    def __init__(self, offer: Offer, history: History, calibration: Calibration) -> None:
        self.offer = offer
        self.history = history
        self.calibration = calibration
        self._tool_docs: dict[str, ToolDocs] = {}

    def tool_docs_used(self, model: ModelSpec) -> None:
        """`model.tool_docs` is what its latest chat sent (a pick in VS Code's model picker may
        differ from the settings): the status names it."""
        self._tool_docs[model.id] = model.tool_docs

    def status(self) -> Status:
        """The last conversation request, else how many models are ready."""
        ready = [model.name for model in self.offer.catalog]
        return self.conversation() or ready_status(ready)

    def conversation(self) -> Status | None:
        """The status of the last conversation request of this session, else of the one the
        ledger remembers from an earlier session; None when there is none."""
        last, history = self.history.last, self.history
        if last is not None:
            model = self.offer.model(last.model_id)
            figures = attrs.evolve(
                self._figures(model, last.input_tokens, last.output_tokens),
                cached_tokens=last.cached_tokens,
                cache_saved_usd=last.cache_saved_usd,
            )
            if last.estimate.tools_saved:
                figures = attrs.evolve(
                    figures,
                    tool_docs=self._tool_docs.get(model.id, model.tool_docs),
                    tool_docs_total=history.tool_docs_saved(),
                )
            if last.cost_usd is not None:
                figures = attrs.evolve(
                    figures,
                    cost_usd=last.cost_usd,
                    cost_source=last.cost_source,
                    today_usd=history.cost_today(model.id),
                    conversation_usd=history.conversation_cost(),
                )
            return render_status(figures, last.estimate, self.calibration.ratios(model))
        earlier = history.earlier()
        try:
            if earlier is not None:
                model = self.offer.model(earlier.model_id)
                figures = self._figures(model, earlier.input_tokens, earlier.output_tokens)
                return render_status(figures, earlier=True)
        except UnknownModelError:
            pass  # a model no longer offered
        return None

    def _figures(self, model: ModelSpec, used: int, output: int | None) -> Figures:
        """A request's figures against the model's sizes as its info reports them."""
        windows = self.offer.windows
        sizes = windows.sizes(model)
        return Figures(
            model.name,
            used,
            sizes.max_input,
            sizes.window,
            output,
            compaction=windows.compaction(model),
        )


def with_trim(status: Status, fitted: Fitted) -> Status:
    """The status of a request the recovery ladder had to fit: says what went."""
    what = f"trimmed {fitted.brief()}"
    if fitted.tokens:
        what += f" · {compact(fitted.tokens)} tokens"
    tooltip = (
        f"{status.tooltip}\n\nThe request did not fit the window: before sending it, Token Gauge "
        f"{fitted.describe()} ({compact(fitted.tokens)} tokens in all)."
    )
    return Status(text=f"{status.text} · {what}", tooltip=tooltip, severity="warning")


def request_ended(model_name: str, outcome: str, severity: Severity) -> Status:
    """The status of a request that ended with no usage to show (it failed, or was cancelled
    while waiting to retry): what became of it, in a few words such as `rate limited (429)`."""
    icon = {"error": "$(error)", "warning": "$(warning)"}.get(severity, "$(pulse)")
    return Status(
        text=f"{icon} {model_name}: {outcome}",
        tooltip=f"**{model_name}** — last request: {outcome}",
        severity=severity,
    )


def retrying(model: ModelSpec, reason: str, delay: float, attempt: int, attempts: int) -> Status:
    """The status while a request waits `delay` seconds to be tried again (`attempt` of
    `attempts`), and why."""
    return Status(
        text=f"$(sync~spin) {model.provider.id}: retrying in {delay:.0f}s",
        tooltip=f"{model.name}: {reason}. Try {attempt} of {attempts}.",
        severity="warning",
    )
