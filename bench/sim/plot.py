"""The per-request true fill of each run, drawn as an SVG (hand-written: no plotting dependency).

One panel per skew; in each, one line per variant: the true prompt size of every request that
reached the model (Copilot's helper requests left out) ÷ the window, at x = turn + its place in the
turn. Rings mark the summarizations (at the true fill of the last successful main request before
each), crosses the overflows (at the true size the upstream refused), and dashed lines the window
(1.0) and `maxInputTokens`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Final

from bench.sim.run import RunResult

WIDTH: Final = 960
PANEL: Final = 280
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 34, 30
Y_MAX: Final = 1.2
COLOURS: Final = {
    "tokengauge": "#1f77b4",
    "exact": "#9467bd",
    "calibration-off": "#ff7f0e",
    "chars/4": "#2ca02c",
}


def _x_positions(result: RunResult) -> list[float]:
    per_turn = Counter(r.turn for r in result.log.requests)
    return [r.turn + r.seq / per_turn[r.turn] for r in result.log.requests]


class _Panel:
    """Coordinates of one panel."""

    def __init__(self, top: float, turns: int) -> None:
        self.top = top
        self.turns = max(turns, 1)
        self.height = PANEL - TOP - BOTTOM
        self.width = WIDTH - LEFT - RIGHT

    def x(self, turn: float) -> float:
        return LEFT + self.width * turn / self.turns

    def y(self, fill: float) -> float:
        return self.top + TOP + self.height * (1 - min(fill, Y_MAX) / Y_MAX)


def _axes(panel: _Panel, title: str, max_input_share: float) -> list[str]:
    out = [f'<text x="{LEFT}" y="{panel.top + 20}" font-weight="bold">{escape(title)}</text>']
    for fill in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = panel.y(fill)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#eee"/>'
        )
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{fill:.2f}</text>')
    for fill, label in ((1.0, "window"), (max_input_share, "maxInputTokens")):
        y = panel.y(fill)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#888" '
            'stroke-dasharray="5,4"/>'
        )
        out.append(
            f'<text x="{WIDTH - RIGHT - 4}" y="{y - 4:.1f}" text-anchor="end" '
            f'fill="#666">{label}</text>'
        )
    step = max(1, panel.turns // 10)
    for turn in range(0, panel.turns + 1, step):
        x = panel.x(turn)
        out.append(
            f'<text x="{x:.1f}" y="{panel.top + PANEL - 12}" text-anchor="middle">{turn}</text>'
        )
    return out


def _series(panel: _Panel, result: RunResult) -> list[str]:
    colour = COLOURS.get(result.variant, "#444")
    xs = _x_positions(result)
    segments: list[list[str]] = [[]]  # a failed request breaks the line
    for x, r in zip(xs, result.log.requests, strict=True):
        if r.kind == "helper":
            continue
        if r.outcome.ok and r.outcome.true_tokens:
            segments[-1].append(
                f"{panel.x(x):.1f},{panel.y(r.outcome.true_tokens / result.window):.1f}"
            )
        elif segments[-1]:
            segments.append([])
    out = [
        f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{" ".join(points)}"/>'
        for points in segments
        if points
    ]
    starts = {(r.turn, r.seq): x for x, r in zip(xs, result.log.requests, strict=True)}
    for s in result.log.summaries:
        if s.fill_before is None or not s.sent:
            continue
        x = starts.get((s.turn, s.seq), s.turn)
        out.append(
            f'<circle cx="{panel.x(x):.1f}" cy="{panel.y(s.fill_before):.1f}" r="5" fill="none" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
    for x, r in zip(xs, result.log.requests, strict=True):
        if r.outcome.overflow:
            cx, cy = panel.x(x), panel.y((r.outcome.true_tokens or result.window) / result.window)
            out.append(
                f'<path d="M{cx - 5:.1f},{cy - 5:.1f}L{cx + 5:.1f},{cy + 5:.1f}M{cx - 5:.1f},'
                f'{cy + 5:.1f}L{cx + 5:.1f},{cy - 5:.1f}" stroke="#d62728" stroke-width="2"/>'
            )
    return out


def _legend(variants: Sequence[str]) -> list[str]:
    out: list[str] = []
    x = LEFT
    for variant in variants:
        colour = COLOURS.get(variant, "#444")
        out.append(
            f'<line x1="{x}" y1="14" x2="{x + 24}" y2="14" stroke="{colour}" stroke-width="3"/>'
        )
        out.append(f'<text x="{x + 30}" y="18">{escape(variant)}</text>')
        x += 150
    out.append(f'<circle cx="{x + 6}" cy="14" r="5" fill="none" stroke="#444" stroke-width="2"/>')
    out.append(f'<text x="{x + 16}" y="18">summarized</text>')
    out.append(
        f'<path d="M{x + 115},9L{x + 125},19M{x + 115},19L{x + 125},9" stroke="#d62728" '
        'stroke-width="2"/>'
    )
    out.append(f'<text x="{x + 132}" y="18">overflow</text>')
    return out


def write_svg(path: Path, results: Sequence[RunResult], caption: str) -> Path:
    """Draw the runs (grouped by skew, one panel each) to `path`."""
    skews = sorted({r.skew for r in results})
    height = 30 + PANEL * len(skews)
    body = _legend(list(dict.fromkeys(r.variant for r in results)))
    for index, skew in enumerate(skews):
        runs = [r for r in results if r.skew == skew]
        panel = _Panel(30 + PANEL * index, max(r.turns for r in runs))
        share = runs[0].max_input_tokens / runs[0].window
        body += _axes(panel, f"skew {skew * 100:+.0f}%: true fill per request · {caption}", share)
        for run in runs:
            body += _series(panel, run)
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'font-family="sans-serif" font-size="12">\n'
        '<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg, encoding="utf-8")
    return path
