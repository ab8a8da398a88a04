"""The usage history under load and under kills: what one more record costs as the history grows,
and what SIGKILLs mid-write (one window, and two on one ledger) leave of what was acknowledged.

    .venv/bin/python -m bench.ledger_bench [--quick | --smoke]

Run it with `PYTHONPATH=<a server folder>` to measure another version of the ledger (the kill
loop's writers and checker use the same one). Prints what it measured; asserts nothing.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from bench.benchlib import Size, bench_parser, size_of
from tests.harness import kill_loop
from tokengauge.ledger.store import Ledger

RECORD = {
    "modelId": "gpt-4o",
    "kind": "turn",
    "outcome": "answered",
    "estimatedTokens": 31_250,
    "window": 128_000,
    "maxInputTokens": 111_616,
    "conversation": "0f6c9a1e",
    "inputTokens": 30_912,
    "outputTokens": 412,
    "costUsd": 0.0812,
    "toolDocsSaved": 1_480,
    "ratios": {"text": 1.02, "cjk": 1.0, "tools": 1.11, "message": 4.1, "fixed": 3.2},
}


def append_costs(sizes: list[int], samples: int) -> None:
    """The median time of one `append_usage` once the history holds each of `sizes` records."""
    with tempfile.TemporaryDirectory() as folder:
        ledger = Ledger(Path(folder) / "ledger")
        held = 0
        for size in sizes:
            now = time.time()
            while held < size:
                ledger.append_usage({**RECORD, "time": now - (size - held)})
                held += 1
            costs = []
            for _ in range(samples):
                start = time.perf_counter()
                ledger.append_usage({**RECORD, "time": time.time()})
                costs.append(time.perf_counter() - start)
                held += 1
            print(
                f"append at {size:>6,} records: median {statistics.median(costs) * 1000:.2f} ms, "
                f"max {max(costs) * 1000:.2f} ms ({samples} appends)"
            )
        ledger.close()


def kills(rounds: int) -> None:
    """The kill loop, one writer and two at once; the writers inherit this process's environment,
    so they use its ledger (`PYTHONPATH` included)."""
    for writers, count in ((1, rounds), (2, rounds // 2)):
        with tempfile.TemporaryDirectory() as folder:
            tally = kill_loop.run(Path(folder) / "ledger", count, writers, seed=writers)
            print(kill_loop.summary(tally, f"{writers} writer{'s' * (writers > 1)}"))


SIZES: Final[dict[Size, tuple[list[int], int, int]]] = {
    "full": ([0, 2_000, 10_000], 50, 50),
    "quick": ([0, 200], 5, 4),
    "smoke": ([0, 10], 1, 2),
}
"""History sizes, appends timed at each, and kill rounds."""


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and print."""
    args = bench_parser(__doc__, "a few records and kills").parse_args(argv)
    sizes, samples, rounds = SIZES[size_of(args)]
    append_costs(sizes, samples)
    kills(rounds)


if __name__ == "__main__":
    main()
