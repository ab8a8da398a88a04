"""Figures of simulation runs and the rich tables (and JSON) that show them side by side.

Per run: turns that completed, requests, summarizations (requests sent: Simple-mode "foreground"
ones and background compactions; and failed attempts), overflows (requests the upstream refused as
too long, after the sender's own resize retry), resized requests (refused at first for input +
max_tokens > window, then sent with a smaller max_tokens: near misses where only the output room
was cut), turns that failed, the true fill at which each summarization fired (true prompt tokens of
the last successful main request before it ÷ the window), the largest true fill of any request,
and for the agent's main requests: what decides Copilot's budget, as shares of the truth (medians;
`toolTokens` after the first turn): `toolTokens` (from the provider's string answers) ÷ the tools'
true cost, and Copilot's own o200k count of the messages ÷ their true cost. Then the estimate
error two ways (negative is an under-count): of the whole request (Copilot's sum of the provider's
answers, tools by its formula and messages + 3 each, ÷ the upstream's count − 1) and of its
messages alone (that message sum ÷ the true size less the true cost of the tools and the fixed
overhead − 1: what the counter controls). For both: p50 and p95 of its size; the worst
whole-request under-count; and the turns that pass before every later request's message error
stays within the band ("never" if the last turn's does not).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import attrs
from rich.console import Console
from rich.table import Table

from bench.sim.run import RunResult


@attrs.frozen
class Figures:
    """The numbers of one run."""

    variant: str
    skew: float
    turns: int
    turns_ok: int
    requests: int
    summaries: int
    background: int
    summary_failures: int
    overflows: int
    resized: int
    trimmed: int
    """Requests the server's safety net shrank before sending."""
    trimmed_tokens: int
    failed_turns: int
    render_failures: int
    fills: tuple[float, ...]
    kinds: tuple[str, ...]
    """Each summarization's kind ("foreground" or "background"), in order."""
    largest_fill: float
    tool_ratio: float | None
    render_ratio: float | None
    error_p50: float | None
    error_p95: float | None
    message_error_p50: float | None
    message_error_p95: float | None
    worst_under: float | None
    settle: int | None
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (for `--json`)."""
        return attrs.asdict(self)


def errors_by_turn(result: RunResult, messages_only: bool) -> list[tuple[int, float]]:
    """(turn, estimate ÷ true − 1) of every request whose true size is known: of the whole
    request, or of its messages alone."""
    errors: list[tuple[int, float]] = []
    for r in result.log.requests:
        true = r.outcome.true_tokens
        if not true or r.kind != "main":
            continue
        if messages_only:
            true = result.true_messages(true, r.tool_estimate > 0)
            errors.append((r.turn, r.message_estimate / true - 1))
        else:
            errors.append((r.turn, r.estimate / true - 1))
    return errors


def settle_turns(errors: Sequence[tuple[int, float]], band: float) -> int | None:
    """Turns before every later request stays within ±band; None if the last one is outside."""
    settled: int | None = 0
    for turn, error in errors:
        if abs(error) > band:
            settled = turn + 1
    if settled is not None and errors and settled > errors[-1][0]:
        return None
    return settled


def percentile(values: Sequence[float], share: float) -> float:
    """Inclusive percentile; the value itself for a single sample."""
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def tool_ratios(result: RunResult) -> list[float]:
    """`toolTokens` ÷ the tools' true cost, for each main request after the first turn."""
    true_tools = result.true_tools - result.true_fixed
    return [
        r.tool_estimate / true_tools
        for r in result.log.requests
        if r.kind == "main" and r.turn > 0 and true_tools > 0
    ]


def render_ratios(result: RunResult) -> list[float]:
    """Copilot's own count of the messages ÷ their true cost, for each main request."""
    ratios: list[float] = []
    for r in result.log.requests:
        true = r.outcome.true_tokens
        if r.kind == "main" and true and result.true_messages(true, True) > 0:
            ratios.append(r.render / result.true_messages(true, True))
    return ratios


def figures(result: RunResult, band: float) -> Figures:
    """Reduce a run to its figures."""
    log = result.log
    made = [s for s in log.summaries if s.sent]
    sizes = [r.outcome.true_tokens or 0 for r in log.requests if r.kind != "helper"]
    tools, renders = tool_ratios(result), render_ratios(result)
    values = [e for _, e in errors_by_turn(result, messages_only=False)]
    message_errors = errors_by_turn(result, messages_only=True)
    message_values = [e for _, e in message_errors]
    return Figures(
        variant=result.variant,
        skew=result.skew,
        turns=result.turns,
        turns_ok=result.turns - len(set(log.failed_turns)),
        requests=len(log.requests),
        summaries=len(made),
        background=sum(1 for s in made if s.kind == "background"),
        summary_failures=sum(1 for s in log.summaries if not s.ok),
        overflows=sum(1 for r in log.requests if r.outcome.overflow),
        resized=sum(1 for r in log.requests if r.outcome.resized),
        trimmed=sum(1 for r in log.requests if r.outcome.trimmed),
        trimmed_tokens=sum(r.outcome.trimmed for r in log.requests),
        failed_turns=len(set(log.failed_turns)),
        render_failures=log.render_failures,
        fills=tuple(s.fill_before for s in made if s.fill_before is not None),
        kinds=tuple(s.kind for s in made if s.fill_before is not None),
        largest_fill=max(sizes, default=0) / result.window,
        tool_ratio=statistics.median(tools) if tools else None,
        render_ratio=statistics.median(renders) if renders else None,
        error_p50=statistics.median(values) if values else None,
        error_p95=percentile([abs(v) for v in values], 0.95) if values else None,
        message_error_p50=statistics.median(message_values) if message_values else None,
        message_error_p95=(
            percentile([abs(v) for v in message_values], 0.95) if message_values else None
        ),
        worst_under=min(values) if values else None,
        settle=settle_turns(message_errors, band),
        seconds=result.seconds,
    )


def _pct(value: float | None, signed: bool = True) -> str:
    if value is None:
        return "–"
    return f"{value * 100:+.1f}%" if signed else f"{value * 100:.1f}%"


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _fills(fills: Sequence[float]) -> str:
    if not fills:
        return "–"
    return f"{min(fills):.2f}/{statistics.median(fills):.2f}/{max(fills):.2f}"


def runs_table(rows: Sequence[Figures], title: str, band: float) -> Table:
    """Every run side by side: one row per skew and variant."""
    table = Table(title=title, title_justify="left")
    for name in (
        "skew",
        "counter",
        "turns ok",
        "requests",
        "overflows",
        "resized",
        "trimmed\n(tokens)",
        "summaries\n(background)",
        "fill at summary\nmin / med / max",
        "largest\nfill",
        "toolTokens\n÷ true",
        "render\n÷ true",
        "request error\np50 / p95 |·|",
        "worst request\nunder-count",
        "message error\np50 / p95 |·|",
        f"turns to settle\n(messages ±{band * 100:.0f}%)",
        "time",
    ):
        table.add_column(name, justify="left" if name == "counter" else "right")
    previous: float | None = None
    for row in rows:
        if previous is not None and row.skew != previous:
            table.add_section()
        previous = row.skew
        failed = f" ({row.summary_failures} failed)" if row.summary_failures else ""
        overflow_style = "bold red" if row.overflows else "green"
        table.add_row(
            f"{row.skew * 100:+.0f}%",
            row.variant,
            f"{row.turns_ok}/{row.turns}",
            str(row.requests),
            f"[{overflow_style}]{row.overflows}[/]",
            str(row.resized),
            f"{row.trimmed} ({row.trimmed_tokens:,})",
            f"{row.summaries} ({row.background}){failed}",
            _fills(row.fills),
            f"{row.largest_fill:.3f}",
            _ratio(row.tool_ratio),
            _ratio(row.render_ratio),
            f"{_pct(row.error_p50)} / {_pct(row.error_p95, signed=False)}",
            _pct(row.worst_under),
            f"{_pct(row.message_error_p50)} / {_pct(row.message_error_p95, signed=False)}",
            "never" if row.settle is None else str(row.settle),
            f"{row.seconds:.0f} s",
        )
    return table


def summaries_table(results: Sequence[RunResult]) -> Table:
    """Each summarization of each run: turn, kind, true fill before it, Copilot's render."""
    table = Table(title="summarizations", title_justify="left")
    columns = ("skew", "counter", "turn", "kind", "true fill before", "render / budget", "ratio")
    for name in columns:
        table.add_column(name, justify="left" if name in ("counter", "kind") else "right")
    for result in results:
        for s in result.log.summaries:
            state = "" if s.ok else (" (failed)" if s.sent else " (not sent)")
            table.add_row(
                f"{result.skew * 100:+.0f}%",
                result.variant,
                str(s.turn + 1),
                s.kind + state,
                "–" if s.fill_before is None else f"{s.fill_before:.3f}",
                f"{s.render:,} / {s.budget:,}",
                f"{s.ratio:.3f}",
            )
    return table


def print_report(
    console: Console, results: Sequence[RunResult], band: float, title: str, detail: bool
) -> list[Figures]:
    """Print the runs table (and, if asked, every summarization); return the figures."""
    rows = [figures(result, band) for result in results]
    console.print(runs_table(rows, title, band))
    if detail:
        console.print(summaries_table(results))
    return rows
