"""The simulator's host scenario checked against the real Copilot host suite, skew by skew.

    .venv/bin/python -m bench.sim --scenario host --compare-host [DIR]

Host figures come from each `DIR/skew-<scale>/` dump (`requests.json`: every upstream request with
its true size and status; `result.json`: the turns that failed), or without DIR from the figures
`host_extract` recorded with the scenario. Both sides are reduced the same way: failed turns;
overflows (requests refused as too long); summarizations, in order, with their kind (a foreground
Simple-mode summary request, or a background compaction request) and the true fill of the last
successful main agent request sent before it; the largest true fill of any request. One rule differs
from the suite's own `summarizations()`: a background compaction runs concurrently with the main
request rendered with it, and the upstream sees them in either order; here "before" never counts
that sibling main request (the one just before it with the same messages but the last; the suite's
figure then names the sibling's fill), so that the same decision gives the same figure. A skew
matches when the overflows are the same, the summarizations are as many and each pair's fills are
within ±0.03. Beside it: the "exact" variant (perfect counts), and tokengauge's fills as a share of
its (goal ≥ 0.97).
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import attrs
from rich.console import Console
from rich.table import Table

from bench.sim.run import RunResult
from tests.harness.copilot.host_scenario import data_path

TOLERANCE: Final = 0.03
GOAL: Final = 0.97
COMPACT_MARK: Final = "must be compacted now"
SUMMARIZE_MARK: Final = "Summarize the conversation history so far"
_TOO_LONG = re.compile(r"context|too long|maximum|exceed", re.IGNORECASE)


@attrs.frozen
class Summary:
    """One summarization: its kind and the true fill of the last main request before it."""

    kind: str
    fill: float | None


@attrs.frozen
class Side:
    """What one side (the host, or a simulator run) did at one skew."""

    failed_turns: int
    overflows: int
    summaries: tuple[Summary, ...]
    largest_fill: float

    @property
    def fills(self) -> list[float]:
        """The fills before each summarization (those that have one)."""
        return [s.fill for s in self.summaries if s.fill is not None]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


def _messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    body = request.get("json") or {}
    messages = body.get("messages") or []
    return [m for m in messages if isinstance(m, dict)]


def _kind(request: dict[str, Any]) -> str | None:
    users = [m for m in _messages(request) if m.get("role") == "user"]
    last = _text(users[-1].get("content")) if users else ""
    if COMPACT_MARK in last:
        return "background"
    if SUMMARIZE_MARK in last:
        return "foreground"
    return None


def _is_main(request: dict[str, Any]) -> bool:
    tools = (request.get("json") or {}).get("tools") or []
    return bool(tools) and _kind(request) is None and request.get("status") == 200


def host_side(skew_dir: Path) -> Side:
    """The host's figures from one skew's dump."""
    requests: list[dict[str, Any]] = json.loads((skew_dir / "requests.json").read_text("utf-8"))
    result = json.loads((skew_dir / "result.json").read_text("utf-8"))
    window = int(result["window"])
    by_id = {r["id"]: r for r in requests}
    summaries: list[Summary] = []
    for request in requests:
        kind = _kind(request)
        if kind is None:
            continue
        limit = request["id"]
        sibling = by_id.get(limit - 1)
        if kind == "background" and sibling is not None and _is_main(sibling):
            ours = [m.get("role") for m in _messages(request)[:-1]]
            if ours == [m.get("role") for m in _messages(sibling)]:
                limit = sibling["id"]  # the main request rendered with it went out first
        before = [r for r in requests if r["id"] < limit and _is_main(r)]
        fill = before[-1]["prompt_tokens"] / window if before else None
        summaries.append(Summary(kind, fill))
    overflows = sum(
        1 for r in requests if r.get("status") == 400 and _TOO_LONG.search(r.get("body_text") or "")
    )
    largest = max((r.get("prompt_tokens") or 0 for r in requests), default=0)
    return Side(int(result.get("failedTurns", 0)), overflows, tuple(summaries), largest / window)


def recorded_side(scale: float) -> Side | None:
    """The host's figures as recorded with the scenario (`host_extract`), if any."""
    path = data_path(scale)
    if not path.exists():
        return None
    figures = json.loads(gzip.decompress(path.read_bytes())).get("host")
    if not isinstance(figures, dict):
        return None
    summaries = tuple(Summary(s["kind"], s["fill"]) for s in figures["summaries"])
    return Side(figures["failed_turns"], figures["overflows"], summaries, figures["largest_fill"])


def host_at(root: Path, scale: float) -> Side | None:
    """The host's figures at this scale: from `root`'s dump, or recorded when `root` is empty."""
    skew_dir = root / f"skew-{scale:.1f}"
    if str(root) not in ("", ".") and (skew_dir / "requests.json").exists():
        return host_side(skew_dir)
    return recorded_side(scale)


def sim_side(result: RunResult) -> Side:
    """A simulator run's figures, reduced as the host's are."""
    log = result.log
    summaries = tuple(Summary(s.kind, s.fill_before) for s in log.summaries if s.sent)
    sizes = [r.outcome.true_tokens or 0 for r in log.requests]
    return Side(
        failed_turns=len(set(log.failed_turns)),
        overflows=sum(1 for r in log.requests if r.outcome.overflow),
        summaries=summaries,
        largest_fill=max(sizes, default=0) / result.window,
    )


def verdict(sim: Side, host: Side) -> tuple[bool, str]:
    """Whether the sides match (same overflows, as many summarizations, fills within ±0.03)."""
    problems: list[str] = []
    if sim.overflows != host.overflows:
        problems.append(f"overflows {sim.overflows} vs {host.overflows}")
    if len(sim.summaries) != len(host.summaries):
        problems.append(f"{len(sim.summaries)} vs {len(host.summaries)} summarizations")
    worst = 0.0
    for ours, theirs in zip(sim.summaries, host.summaries, strict=False):
        if ours.fill is not None and theirs.fill is not None:
            worst = max(worst, abs(ours.fill - theirs.fill))
    if worst > TOLERANCE:
        problems.append(f"fills differ by up to {worst:.3f}")
    return not problems, "; ".join(problems) or f"fills within ±{worst:.3f}"


def _fills(side: Side) -> str:
    return " ".join(
        f"{s.fill:.2f}{'b' if s.kind == 'background' else 'f'}"
        for s in side.summaries
        if s.fill is not None
    )


def _row(table: Table, label: str, side: Side) -> None:
    background = sum(1 for s in side.summaries if s.kind == "background")
    table.add_row(
        label,
        str(side.failed_turns),
        str(side.overflows),
        f"{len(side.summaries)} ({background})",
        _fills(side) or "–",
        f"{side.largest_fill:.3f}",
    )


def print_comparison(console: Console, results: Sequence[RunResult], root: Path) -> None:
    """Per skew: host vs simulator, the verdict, and tokengauge vs perfect counts."""
    source = "recorded" if str(root) in ("", ".") else str(root)
    table = Table(
        title=f"host ({source}) vs simulator: fills before each summarization (b background, "
        "f foreground)",
        title_justify="left",
    )
    for name in ("skew · side", "failed turns", "overflows", "summaries (bg)", "fills", "largest"):
        table.add_column(name, justify="left" if name in ("skew · side", "fills") else "right")
    verdicts: list[str] = []
    for skew in sorted({r.skew for r in results}):
        runs = {r.variant: r for r in results if r.skew == skew}
        table.add_section()
        host = host_at(root, 1 + skew)
        if host is not None:
            _row(table, f"{1 + skew:.1f} · host", host)
        for variant, run in runs.items():
            side = sim_side(run)
            _row(table, f"{1 + skew:.1f} · {variant}", side)
            if host is not None and variant == "tokengauge":
                ok, why = verdict(side, host)
                if not ok and "exact" in runs and verdict(sim_side(runs["exact"]), host)[0]:
                    why += "; perfect counts match the host: tokengauge answers differently than "
                    why += "the server the dumps were made with (--server-path)"
                verdicts.append(
                    f"skew {1 + skew:.1f}: {'[green]match' if ok else '[red]differ'}[/] ({why})"
                )
        if "tokengauge" in runs and "exact" in runs:
            verdicts.append(
                f"skew {1 + skew:.1f}: " + _against_exact(runs["tokengauge"], runs["exact"])
            )
    console.print(table)
    for line in verdicts:
        console.print(line)


def _against_exact(ours: RunResult, exact: RunResult) -> str:
    """tokengauge's fills as a share of perfect counts' (median; the lowest pair)."""
    a, b = sim_side(ours).fills, sim_side(exact).fills
    if not a or not b:
        return "tokengauge vs exact: no fills to compare"
    median = statistics.median(a) / statistics.median(b)
    pairs = [x / y for x, y in zip(a, b, strict=False) if y]
    low = min(pairs) if pairs else median
    good = "[green]" if median >= GOAL else "[red]"
    return (
        f"tokengauge ÷ exact fill: median {good}{median:.3f}[/] (lowest pair {low:.3f}; "
        f"{len(a)} vs {len(b)} summarizations; goal ≥ {GOAL})"
    )
