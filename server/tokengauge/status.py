"""The status-bar text, tooltip and severity for the last request of a model.

Text like `$(pulse) 41.2k / 120k · 34%`: input tokens of the last request over the model's input
budget. Severity turns to `warning` at 75% and `error` at 90%. The tooltip is a markdown table of
the breakdown, shown as-is by the extension.
"""

from __future__ import annotations

from typing import Final

from tokengauge.calibration.estimates import RequestEstimate
from tokengauge.calibration.trim import Trimmed
from tokengauge.protocol import Severity, Status

WARNING_AT: Final = 0.75
ERROR_AT: Final = 0.90


def compact(n: int) -> str:
    """`950` → `950`, `41234` → `41.2k`, `120000` → `120k`, `1048576` → `1.05M`."""
    if n < 1000:
        return str(n)
    unit, value = ("M", n / 1_000_000) if n >= 999_500 else ("k", n / 1000)
    digits = 0 if value >= 100 else 1 if value >= 10 or unit == "k" else 2
    text = f"{value:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text + unit


def severity_for(fill: float) -> Severity:
    """`info` below 75%, `warning` below 90%, `error` above."""
    if fill >= ERROR_AT:
        return "error"
    if fill >= WARNING_AT:
        return "warning"
    return "info"


def render_status(
    model_name: str,
    used: int,
    max_input: int,
    estimate: RequestEstimate | None = None,
    output_tokens: int | None = None,
) -> Status:
    """Status for `used` input tokens of a `max_input` budget, with an optional breakdown."""
    fill = used / max_input if max_input > 0 else 1.0
    text = f"$(pulse) {compact(used)} / {compact(max_input)} · {round(fill * 100)}%"
    rows = [f"**{model_name}** — last request", "", "| | tokens |", "|---|---:|"]
    if estimate is not None:
        roles = estimate.features.roles
        chat = [m for m, role in zip(estimate.messages, roles, strict=True) if role != "system"]
        actuals = sum(1 for m in chat if m.source == "actual")
        rows += [
            f"| system | {estimate.system:,} |",
            f"| tools | {estimate.tools:,} |",
            f"| messages ({len(chat)}, {actuals} from API actuals) "
            f"| {sum(m.tokens for m in chat):,} |",
            f"| request overhead | {estimate.fixed:,} |",
            f"| our estimate | {estimate.total:,} |",
        ]
    rows.append(f"| **input (API)** | **{used:,}** |")
    if output_tokens is not None:
        rows.append(f"| output | {output_tokens:,} |")
    rows.append(f"| input budget | {max_input:,} |")
    if estimate is not None:
        ratios = estimate.ratios
        rows += [
            f"| API ÷ tiktoken: text, CJK, tools | {ratios['text']:.3f}, {ratios['cjk']:.3f}, "
            f"{ratios['tools']:.3f} |",
            f"| overhead per message, per request | {ratios['message']:.1f}, "
            f"{ratios['fixed']:.1f} |",
        ]
    return Status(text=text, tooltip="\n".join(rows), severity=severity_for(fill))


def with_trim(status: Status, trimmed: Trimmed) -> Status:
    """The status of a request the safety net had to shrink: says what went."""
    what = f"trimmed {trimmed.describe()} · {compact(trimmed.tokens)} tokens"
    tooltip = (
        f"{status.tooltip}\n\nThe request did not fit the window: tokengauge {what} before "
        "sending it (tool results cut in the middle, oldest messages left out)."
    )
    return Status(text=f"{status.text} · {what}", tooltip=tooltip, severity="warning")


def request_ended(model_name: str, outcome: str, severity: Severity) -> Status:
    """The status of a request that ended with no usage to show (it failed, or was cancelled
    while waiting to retry): what became of it, in a few words such as `rate limited (429)`."""
    icon = "$(error)" if severity == "error" else "$(pulse)"
    return Status(
        text=f"{icon} {model_name}: {outcome}",
        tooltip=f"**{model_name}** — last request: {outcome}",
        severity=severity,
    )
