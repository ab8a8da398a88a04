"""Figures of Agent Host runs (`agent_host_run`) and the rich table that shows them.

Per skew: turns that completed and turns that failed; requests; compactions started (background,
blocking, after an overflow) and how many failed, and how many summaries were applied; requests
sent while blocked; overflows (requests the upstream refused as too long) and refusals
(tokengauge refused to send: nothing reached the upstream); requests the server's safety net
trimmed; the largest true fill of any request (true prompt tokens ÷ the true window), and the
largest before the safety net (true + the tokens it trimmed: what the runtime let through); the
true fill of the last main request before each compaction started, and the runtime's own
utilization then; the runtime's own count ÷ the true size of the main requests the net left whole
(median); the token limits it worked with (the declared input + output), and how many changes
came without the server's models-changed notification. `--json` adds every request.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import attrs
from rich.console import Console
from rich.table import Table

from bench.sim.agent_host_run import AgentHostResult


@attrs.frozen
class AgentHostFigures:
    """The numbers of one run."""

    skew: float
    turns: int
    turns_ok: int
    failed_turns: int
    requests: int
    compactions: int
    background: int
    compaction_failures: int
    applied: int
    blocked: int
    overflows: int
    refused: int
    trimmed: int
    trimmed_tokens: int
    largest_fill: float
    largest_untrimmed: float
    """(True + trimmed tokens) ÷ the true window, at most: the fill without the safety net."""
    fills: tuple[float, ...]
    """True fill of the last main request before each compaction."""
    ratios: tuple[float, ...]
    """The runtime's own utilization when each compaction started."""
    count_ratio: float | None
    windows: tuple[int, ...]
    unannounced: int
    notifications: int
    content_scale: float | None
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (for `--json`)."""
        return attrs.asdict(self)


def figures(result: AgentHostResult) -> AgentHostFigures:
    """Reduce a run to its figures."""
    log = result.log
    requests = log.requests
    sizes = [r.outcome.true_tokens or 0 for r in requests]
    whole = [
        r
        for r in requests
        if r.kind == "main" and r.outcome.ok and r.outcome.true_tokens and not r.outcome.trimmed
    ]
    counts = [r.count / (r.outcome.true_tokens or 1) for r in whole]
    untrimmed = [(r.outcome.true_tokens or 0) + r.outcome.trimmed for r in requests]
    failed = [r for r in requests if not r.outcome.ok]
    return AgentHostFigures(
        skew=result.skew,
        turns=result.turns,
        turns_ok=result.turns - len(set(log.failed_turns)),
        failed_turns=len(set(log.failed_turns)),
        requests=len(requests),
        compactions=len(log.compactions),
        background=sum(1 for c in log.compactions if c.trigger == "threshold"),
        compaction_failures=sum(1 for c in log.compactions if not c.ok),
        applied=log.applied,
        blocked=sum(1 for r in requests if r.blocked),
        overflows=sum(1 for r in failed if r.outcome.overflow and r.outcome.true_tokens),
        refused=sum(1 for r in failed if not r.outcome.true_tokens),
        trimmed=sum(1 for r in requests if r.outcome.trimmed),
        trimmed_tokens=sum(r.outcome.trimmed for r in requests),
        largest_fill=max(sizes, default=0) / result.window,
        largest_untrimmed=max(untrimmed, default=0) / result.window,
        fills=tuple(c.fill_before for c in log.compactions if c.fill_before is not None),
        ratios=tuple(c.ratio for c in log.compactions),
        count_ratio=statistics.median(counts) if counts else None,
        windows=tuple(log.windows),
        unannounced=log.unannounced,
        notifications=result.notifications,
        content_scale=result.content_scale,
        seconds=result.seconds,
    )


def request_rows(result: AgentHostResult) -> list[dict[str, Any]]:
    """Every request of a run as plain JSON: what the runtime counted and what was true."""
    rows = []
    for r in result.log.requests:
        true = r.outcome.true_tokens
        rows.append(
            {
                "turn": r.turn,
                "seq": r.seq,
                "kind": r.kind,
                "count": r.count,
                "window": r.window,
                "ratio": round(r.ratio, 4),
                "true": true,
                "fill": None if true is None else round(true / result.window, 4),
                "ok": r.outcome.ok,
                "overflow": r.outcome.overflow,
                "trimmed": r.outcome.trimmed,
                "compacted": r.compacted,
                "blocked": r.blocked,
                "started": r.started,
                "announced": r.announced,
            }
        )
    return rows


def _list(values: Sequence[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values) if values else "–"


def _windows(windows: Sequence[int]) -> str:
    if not windows:
        return "–"
    if len(windows) == 1:
        return f"{windows[0]:,}"
    return f"{windows[0]:,}→{windows[-1]:,} ({len(windows) - 1} changes)"


def runs_table(rows: Sequence[AgentHostFigures], title: str) -> Table:
    """One row per skew."""
    table = Table(title=title, title_justify="left")
    for name in (
        "true scale",
        "turns ok",
        "failed\nturns",
        "requests",
        "compactions\n(background)",
        "failed\ncompactions",
        "blocked",
        "overflows",
        "refused",
        "trimmed\n(tokens)",
        "largest\nfill",
        "largest fill\nuntrimmed",
        "true fill before\neach compaction",
        "own ratio at\neach compaction",
        "own count\n÷ true",
        "window\n(in + out)",
        "time",
    ):
        table.add_column(name, justify="right")
    for row in rows:
        table.add_row(
            f"{1 + row.skew:.2f}",
            f"{row.turns_ok}/{row.turns}",
            f"[{'bold red' if row.failed_turns else 'green'}]{row.failed_turns}[/]",
            str(row.requests),
            f"{row.compactions} ({row.background})",
            str(row.compaction_failures),
            str(row.blocked),
            f"[{'bold red' if row.overflows else 'green'}]{row.overflows}[/]",
            str(row.refused),
            f"{row.trimmed} ({row.trimmed_tokens:,})",
            f"{row.largest_fill:.3f}",
            f"{row.largest_untrimmed:.3f}",
            _list(row.fills),
            _list(row.ratios),
            "–" if row.count_ratio is None else f"{row.count_ratio:.2f}",
            _windows(row.windows) + (f", {row.unannounced} unannounced" if row.unannounced else ""),
            f"{row.seconds:.0f} s",
        )
    return table


def print_agent_host_report(
    console: Console, results: Sequence[AgentHostResult], title: str
) -> list[AgentHostFigures]:
    """Print the runs table; return the figures."""
    rows = [figures(result) for result in results]
    console.print(runs_table(rows, title))
    return rows
