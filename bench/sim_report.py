"""Figures of simulation runs and the rich tables (and JSON) that show them side by side.

Per run: turns that completed, requests, summarizations (and failed attempts), overflows (requests
the upstream refused as too long, after the sender's own resize retry), resized requests (refused
at first for input + max_tokens > window, then sent with a smaller max_tokens: near misses where
only the output room was cut), turns that failed, the
true fill at which each summarization fired (true prompt tokens of the last successful request ÷
the window), and the estimate error of every request whose true size is known, two ways (negative
is an under-count): of the whole request (Copilot's count of messages and tools ÷ the upstream's
count − 1: what decides an overflow) and of its messages alone (Copilot's message count ÷ the true
size less the true cost of the tools and the fixed overhead − 1: what the counter controls; the
tools are Copilot's own formula over our string counts). For both: p50 and p95 of its size; the
worst whole-request under-count; and the turns that pass before every later request's message
error stays within the band ("never" if the last turn's does not).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import attrs
from rich.console import Console
from rich.table import Table

from sim_run import RunResult


@attrs.frozen
class Figures:
    """The numbers of one run."""

    variant: str
    skew: float
    turns: int
    turns_ok: int
    requests: int
    summaries: int
    summary_failures: int
    overflows: int
    resized: int
    failed_turns: int
    render_failures: int
    fills: tuple[float, ...]
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
        if not true:
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


def figures(result: RunResult, band: float) -> Figures:
    """Reduce a run to its figures."""
    log = result.log
    made = [s for s in log.summaries if s.outcome in ("full", "simple")]
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
        summary_failures=len(log.summaries) - len(made),
        overflows=sum(1 for r in log.requests if r.outcome.overflow),
        resized=sum(1 for r in log.requests if r.outcome.resized),
        failed_turns=len(set(log.failed_turns)),
        render_failures=log.render_failures,
        fills=tuple(s.fill_before for s in made if s.fill_before is not None),
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
        "summaries",
        "overflows",
        "resized",
        "fill at summary\nmin / med / max",
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
            f"{row.summaries}{failed}",
            f"[{overflow_style}]{row.overflows}[/]",
            str(row.resized),
            _fills(row.fills),
            f"{_pct(row.error_p50)} / {_pct(row.error_p95, signed=False)}",
            _pct(row.worst_under),
            f"{_pct(row.message_error_p50)} / {_pct(row.message_error_p95, signed=False)}",
            "never" if row.settle is None else str(row.settle),
            f"{row.seconds:.0f} s",
        )
    return table


def summaries_table(results: Sequence[RunResult]) -> Table:
    """Each summarization of each run: turn, outcome, true fill before it, Copilot's render."""
    table = Table(title="summarizations", title_justify="left")
    for name in ("skew", "counter", "turn", "outcome", "true fill before", "render / budget"):
        table.add_column(name, justify="left" if name in ("counter", "outcome") else "right")
    for result in results:
        for s in result.log.summaries:
            table.add_row(
                f"{result.skew * 100:+.0f}%",
                result.variant,
                str(s.turn + 1),
                s.outcome,
                "–" if s.fill_before is None else f"{s.fill_before:.3f}",
                f"{s.render:,} / {s.budget:,}",
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
