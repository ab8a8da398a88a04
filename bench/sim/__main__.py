"""Summarization simulator: Copilot's agent loop against a model whose true tokenizer is skewed.

    .venv/bin/python -m bench.sim [--sweep] [--skew S] [--turns N] [--seed N] ...
    .venv/bin/python -m bench.sim --scenario host [--compare-host [DIR]]

Copilot Chat 0.67's agent mode (`tests.harness.copilot.agent`: its budget, its own o200k count of
what it renders, background compaction and Simple-mode summarization, read from its bundle) runs a
conversation against the fake upstream (`tests/harness/fake_upstream`, real HTTP on 127.0.0.1),
whose model counts with its own true tokenizer: the encoding, a hidden per-message / per-tool /
fixed overhead, and a scale of `1 + skew` on the message tokens and on the tools' JSON. It returns
real usage, and real 400 errors for what does not fit its window. Scenarios: `seeded` (default;
`tests.harness.copilot.conversation`: code edits, long tool results, CJK, JSON, stack traces,
images; 60 tool schemas; the same seed gives the same conversation) and `host`
(`tests.harness.copilot.host_scenario`: the Copilot host suite's 12 turns per skew as recorded, with
its window, model and true tokenizer: o200k_base × skew + 7/message + 3, 40,000 tokens, Anthropic's
overflow error; skews -30%, 0, +30%, +60%). Counters take Copilot's place side by side (`run`):
tokengauge over LSP with its chats through `tokenGauge/chat` (calibrating as in production), perfect
counts ("exact", chats through tokengauge too), the same server never calibrated (pure tiktoken +
margins), and `ceil(chars / 4)`.

Prints, per skew and counter: turns, summarizations, overflows, the true fill at which each
summarization fired, the estimate error (p50 / p95 / worst) and the turns it takes to settle
(`report`); draws the true fill per request to `bench/out/*.svg` (`plot`).
`--sweep` runs the skews -25%, -10%, 0, +10%, +25%. `--compare-host [DIR]` checks the host
scenario against the suite's dumps (`DIR/skew-<scale>/`) or, without DIR, against the figures
recorded with the scenario (`check`); `--server-path` runs the servers from another source
tree (the commit the dumps were made with).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs
from rich.console import Console
from rich.status import Status

from bench import benchlib
from bench.benchlib import SMOKE_HELP
from bench.sim.check import print_comparison
from bench.sim.plot import write_svg
from bench.sim.report import print_report
from bench.sim.run import SCENARIOS, VARIANTS, RunResult, Setup, run
from tests.harness.copilot.host_scenario import host_setup, recorded_scales
from tests.harness.fake_upstream.config import ModelBehavior, UpstreamConfig
from tests.harness.fake_upstream.server import running_upstream

SWEEP: Final = (-0.25, -0.10, 0.0, 0.10, 0.25)
SMOKE: Final = (
    ("--turns=1", "--tools=5"),
    ("--scenario=host", "--skew=0", "--turns=1", "--variants=tokengauge", "--compare-host"),
)
"""`--smoke`: both scenarios and every counter, one turn each."""
OUT: Final = Path(__file__).resolve().parents[1] / "out"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.sim", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument(
        "--skew", type=float, help="true scale − 1 (default 0; host: every recorded skew)"
    )
    parser.add_argument("--sweep", action="store_true", help="skews -25%%, -10%%, 0, +10%%, +25%%")
    parser.add_argument("--skews", help="comma-separated skews, e.g. -0.25,0,0.25")
    parser.add_argument("--scales", help="comma-separated true scales (1 + skew), e.g. 0.6,1,1.8")
    parser.add_argument("--scenario", choices=SCENARIOS, default="seeded", help="(seeded)")
    parser.add_argument(
        "--variants", help=f"comma-separated counters ({', '.join(VARIANTS)}; host: first two)"
    )
    parser.add_argument("--turns", type=int, help="user requests per run (40; host: 12)")
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
    parser.add_argument(
        "--smoke", action="store_true", help=f"{SMOKE_HELP}: {' / '.join(map(' '.join, SMOKE))}"
    )
    parser.add_argument(
        "--compare-host",
        type=Path,
        nargs="?",
        const=Path(),
        help="check against host dumps (DIR/skew-<scale>/; no DIR: the figures recorded in "
        "bench/data)",
    )
    parser.add_argument(
        "--server-path",
        type=Path,
        help="run the servers from this source tree (a `server/` folder, e.g. the commit the "
        "host dumps were made with: git archive <commit> server | tar -x -C DIR)",
    )
    args = parser.parse_args(argv)
    host = args.scenario == "host"
    if args.compare_host is not None and not host:
        parser.error("--compare-host needs --scenario host")
    if args.sweep:
        args.skew_list = list(SWEEP)
    elif args.scales:
        args.skew_list = [round(float(s) - 1, 6) for s in args.scales.split(",")]
    elif args.skews:
        args.skew_list = [float(s) for s in args.skews.split(",")]
    elif host and args.skew is None:
        args.skew_list = [round(scale - 1, 6) for scale in recorded_scales()]
    else:
        args.skew_list = [args.skew or 0.0]
    if host:
        missing = [s for s in args.skew_list if round(1 + s, 6) not in recorded_scales()]
        if missing:
            parser.error(f"no host recording for skews {missing}; recorded: {recorded_scales()}")
        _host_defaults(args)
    args.turns = args.turns if args.turns is not None else 40
    variants = args.variants or ("tokengauge,exact" if host else ",".join(VARIANTS))
    args.variant_list = [v.strip() for v in variants.split(",") if v.strip()]
    unknown = set(args.variant_list) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; choose from {', '.join(VARIANTS)}")
    if any(not -0.9 < s < 3 for s in args.skew_list):
        parser.error("skews must be within (-0.9, 3)")
    return args


def _host_defaults(args: argparse.Namespace) -> None:
    """The host suite's window, model and true tokenizer (what the recording says)."""
    setup = host_setup(1 + args.skew_list[0])
    args.window, args.max_output, args.family = setup.window, setup.max_output_tokens, setup.family
    args.encoding, args.fixed_overhead = setup.encoding, setup.fixed_overhead
    args.per_message_overhead, args.per_tool_overhead = (
        setup.per_message_overhead,
        setup.per_tool_overhead,
    )
    args.error_style = setup.error_style
    args.turns = args.turns if args.turns is not None else setup.turns


def _show_progress(status: Status, label: str, turns: int, turn: int) -> None:
    status.update(f"{label}: turn {turn}/{turns}")


def true_model(args: argparse.Namespace, setup: Setup) -> ModelBehavior:
    """The upstream's model at skew 0."""
    return ModelBehavior(
        encoding=args.encoding,
        per_message_overhead=args.per_message_overhead,
        per_tool_overhead=args.per_tool_overhead,
        fixed_overhead=args.fixed_overhead,
        image_tokens=args.image_tokens,
        error_style=getattr(args, "error_style", "openai"),
        context_window=setup.window,
    )


async def simulate(args: argparse.Namespace, setup: Setup, console: Console) -> list[RunResult]:
    """Every variant at every skew, one after the other, against one upstream."""
    base = true_model(args, setup)
    results: list[RunResult] = []
    async with running_upstream(UpstreamConfig(model=base)) as upstream:
        for skew in args.skew_list:
            true = dataclasses.replace(base, scale=1 + skew, tool_scale=1 + skew)
            upstream.config.model = true
            for variant in args.variant_list:
                label = f"skew {skew * 100:+.0f}% · {variant}"
                with console.status(f"{label}: starting") as status:
                    progress = functools.partial(_show_progress, status, label, setup.turns)
                    results.append(await run(variant, skew, setup, upstream, true, progress))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Run, print the tables, draw the SVG; exit 1 if tokengauge overflowed."""
    args = parse_args(argv)
    if args.smoke:
        return max(main([*options, f"--out={args.out}"]) for options in SMOKE)
    if args.server_path is not None:
        # the spawned servers import tokengauge from there first
        server = str((args.server_path / "server").resolve())
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (server, os.environ.get("PYTHONPATH")) if p
        )
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 240)
    setup = Setup(
        seed=args.seed,
        turns=args.turns,
        window=args.window,
        max_output_tokens=args.max_output,
        family=args.family,
        tool_count=args.tools,
        scenario=args.scenario,
    )
    tools = "39 recorded tools" if args.scenario == "host" else f"{setup.tool_count} tools"
    console.print(
        f"[bold]summarization simulator[/bold] ({args.scenario}): "
        f"{setup.turns} turns, seed "
        f"{setup.seed}, window {setup.window:,}, maxOutputTokens {setup.max_output_tokens:,}, "
        f"{tools}; true tokenizer {args.encoding} × (1 + skew) + "
        f"{args.per_message_overhead}/message, "
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
    name = f"{name}-host" if args.scenario == "host" else name
    svg = write_svg(args.out / f"{name}.svg", results, f"{setup.turns} turns, seed {setup.seed}")
    console.print(f"plot: {svg}")
    if args.json is not None:
        payload = {"setup": attrs.asdict(setup), "runs": [row.to_json() for row in rows]}
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    if args.compare_host is not None:
        print_comparison(console, results, args.compare_host)
    console.print(f"[dim]took {benchlib.now() / 1e9 - started / 1e9:.0f} s[/dim]")
    overflowed = any(r.overflows for r in rows if r.variant == "tokengauge")
    return 1 if overflowed else 0


if __name__ == "__main__":
    sys.exit(main())
