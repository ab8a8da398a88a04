"""Summarization simulator: Copilot's agent loop against a model whose true tokenizer is skewed.

    .venv/bin/python bench/simulate.py [--sweep] [--skew S] [--turns N] [--seed N] ...

Copilot Chat's agent mode (`sim_copilot.py`: its counting rules, render budget and summarization,
read from its source) runs a seeded agent conversation (`sim_conversation.py`: code edits, long
tool results, CJK, JSON, stack traces, images; 60 tool schemas) against the test upstream
(`tests/upstream`, real HTTP on 127.0.0.1), whose model counts with its own true tokenizer: the
encoding, a hidden per-message / per-tool / fixed overhead, and a scale of `1 + skew` on the
message tokens. It returns real usage, and real OpenAI 400 errors for what does not fit its window.
Three counters take Copilot's place side by side (`sim_run.py`): tokengauge over LSP with its
chats through `tokenGauge/chat` (calibrating as in production), the same server never calibrated
(pure tiktoken + margins), and a plain `ceil(chars / 4)`.

Prints, per skew and counter: turns, summarizations, overflows, the true fill at which each
summarization fired, the estimate error (p50 / p95 / worst) and the turns it takes to settle
(`sim_report.py`); draws the true fill per request to `bench/out/*.svg` (`sim_plot.py`).
`--sweep` runs the skews -25%, -10%, 0, +10%, +25%. The same seed gives the same conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs
from rich.console import Console
from rich.status import Status

import benchlib
from sim_plot import write_svg
from sim_report import print_report
from sim_run import VARIANTS, RunResult, Setup, run
from sim_upstream import TrueTokenizer, running_upstream

SWEEP: Final = (-0.25, -0.10, 0.0, 0.10, 0.25)
OUT: Final = Path(__file__).resolve().parent / "out"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--skew", type=float, default=0.0, help="true scale − 1 (default 0)")
    parser.add_argument("--sweep", action="store_true", help="skews -25%%, -10%%, 0, +10%%, +25%%")
    parser.add_argument("--skews", help="comma-separated skews, e.g. -0.25,0,0.25")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated counters")
    parser.add_argument("--turns", type=int, default=40, help="user requests per run (40)")
    parser.add_argument("--seed", type=int, default=20_250_214, help="conversation seed")
    parser.add_argument("--window", type=int, default=65_536, help="true context window (65536)")
    parser.add_argument(
        "--max-output", type=int, default=8_192, help="model's maxOutputTokens (8192)"
    )
    parser.add_argument("--tools", type=int, default=60, help="tool schemas sent (60)")
    parser.add_argument("--family", default="sim", help="family tokengauge sees (sim: cl100k_base)")
    parser.add_argument("--encoding", default="cl100k_base", help="the model's true encoding")
    parser.add_argument("--per-message-overhead", type=int, default=5, help="true (5)")
    parser.add_argument("--per-tool-overhead", type=int, default=4, help="true (4)")
    parser.add_argument("--fixed-overhead", type=int, default=3, help="true (3)")
    parser.add_argument("--image-tokens", type=int, default=765, help="true cost of an image")
    parser.add_argument("--settle-band", type=float, default=0.05, help="settled: |error| ≤ this")
    parser.add_argument("--out", type=Path, default=OUT, help="where the SVG goes (bench/out)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--detail", action="store_true", help="list every summarization")
    args = parser.parse_args(argv)
    if args.sweep:
        args.skew_list = list(SWEEP)
    elif args.skews:
        args.skew_list = [float(s) for s in args.skews.split(",")]
    else:
        args.skew_list = [args.skew]
    args.variant_list = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = set(args.variant_list) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; choose from {', '.join(VARIANTS)}")
    if any(not -0.9 < s < 3 for s in args.skew_list):
        parser.error("skews must be within (-0.9, 3)")
    return args


def _show_progress(status: Status, label: str, turns: int, turn: int) -> None:
    status.update(f"{label}: turn {turn}/{turns}")


async def simulate(args: argparse.Namespace, setup: Setup, console: Console) -> list[RunResult]:
    """Every variant at every skew, one after the other, against one upstream."""
    base = TrueTokenizer(
        encoding=args.encoding,
        per_message_overhead=args.per_message_overhead,
        per_tool_overhead=args.per_tool_overhead,
        fixed_overhead=args.fixed_overhead,
        image_tokens=args.image_tokens,
    )
    results: list[RunResult] = []
    async with running_upstream(base, setup.window, sys.executable) as upstream:
        for skew in args.skew_list:
            await upstream.configure(attrs.evolve(base, scale=1 + skew), setup.window)
            for variant in args.variant_list:
                label = f"skew {skew * 100:+.0f}% · {variant}"
                with console.status(f"{label}: starting") as status:
                    progress = functools.partial(_show_progress, status, label, setup.turns)
                    results.append(await run(variant, skew, setup, upstream, progress))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Run, print the tables, draw the SVG; exit 1 if tokengauge overflowed."""
    args = parse_args(argv)
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 200)
    setup = Setup(
        seed=args.seed,
        turns=args.turns,
        window=args.window,
        max_output_tokens=args.max_output,
        family=args.family,
        tool_count=args.tools,
    )
    console.print(
        f"[bold]summarization simulator[/bold]: {setup.turns} turns, seed {setup.seed}, window "
        f"{setup.window:,}, maxOutputTokens {setup.max_output_tokens:,}, {setup.tool_count} tools; "
        f"true tokenizer {args.encoding} × (1 + skew) + {args.per_message_overhead}/message, "
        f"+ {args.per_tool_overhead}/tool, + {args.fixed_overhead}, {args.image_tokens}/image; "
        f"tokengauge sees family {args.family!r}"
    )
    started = benchlib.now()
    results = asyncio.run(simulate(args, setup, console))
    title = "sweep" if len(args.skew_list) > 1 else f"skew {args.skew_list[0] * 100:+.0f}%"
    rows = print_report(
        console, results, args.settle_band, title, args.detail or len(args.skew_list) == 1
    )
    skews = "_".join(f"{s * 100:+.0f}" for s in args.skew_list)
    name = "simulate-sweep" if args.sweep else f"simulate-skew{skews}"
    svg = write_svg(args.out / f"{name}.svg", results, f"{setup.turns} turns, seed {setup.seed}")
    console.print(f"plot: {svg}")
    if args.json is not None:
        payload = {"setup": attrs.asdict(setup), "runs": [row.to_json() for row in rows]}
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    console.print(f"[dim]took {benchlib.now() / 1e9 - started / 1e9:.0f} s[/dim]")
    overflowed = any(r.overflows for r in rows if r.variant == "tokengauge")
    return 1 if overflowed else 0


if __name__ == "__main__":
    sys.exit(main())
