"""Memory under a stream of strings never counted before: the server's RSS over time.

    .venv/bin/python -m bench.rss_bench [--quick | --smoke]

One `python -m tokengauge` on pipes counts one new string per request, 1,000 requests a second,
for 5 minutes (`--quick`: 1 minute). Every cache the server keeps per string (the text LRU, the
table of the most asked strings) must stay bounded: RSS is sampled every 10 s, and the report
gives its growth per minute over the whole run and over its second half.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Sequence
from typing import Final

from rich.console import Console

from bench import benchlib
from bench.benchlib import Report, Size, mib, now, proc_status
from tests.harness.lsp import bare_server, init_options

MINUTES: Final[dict[Size, float]] = {"full": 5.0, "quick": 1.0, "smoke": 0.05}
PER_SECOND = 1000
SAMPLE_EVERY_S = 10


async def run(minutes: float) -> list[tuple[float, int]]:
    """(seconds since the start, RSS in KiB) samples."""
    samples: list[tuple[float, int]] = []
    with tempfile.TemporaryDirectory(prefix="tokengauge-rss-") as storage:
        provider = {"id": "p", "baseUrl": "http://127.0.0.1:9/v1"}
        options = init_options(storage, [provider], [{"id": "gpt-4o", "provider": "p"}], "warning")
        async with bare_server(options) as server:
            process = server.process
            started = now()
            end = started + int(minutes * 60e9)
            serial = 0
            next_sample = started
            while now() < end:
                batch = [
                    server.call(
                        "tokenGauge/countTokens",
                        {"modelId": "gpt-4o", "inputs": [f"string {serial + i} never seen before"]},
                    )
                    for i in range(PER_SECOND // 10)
                ]
                serial += len(batch)
                tick = now()
                for answer in await asyncio.gather(*batch):
                    if "error" in answer:
                        raise RuntimeError(answer["error"])
                if now() >= next_sample:
                    samples.append(((now() - started) / 1e9, proc_status("VmRSS", process.pid)))
                    next_sample += SAMPLE_EVERY_S * 1_000_000_000
                await asyncio.sleep(max(0.0, 0.1 - (now() - tick) / 1e9))
            samples.append(((now() - started) / 1e9, proc_status("VmRSS", process.pid)))
    return samples


def growth(samples: list[tuple[float, int]]) -> float:
    """MiB per minute between the first and the last sample."""
    (t0, r0), (t1, r1) = samples[0], samples[-1]
    return (r1 - r0) / 1024 / ((t1 - t0) / 60) if t1 > t0 else 0.0


def measure(report: Report, console: Console, size: Size) -> None:
    minutes = MINUTES[size]
    benchlib.machine_rows(report, "machine")
    with console.status(f"{PER_SECOND} new strings/s for {minutes:g} min"):
        samples = asyncio.run(run(minutes))
    section = "1 memory under new strings"
    for seconds, kib in samples:
        report.add(section, f"RSS at {seconds:.0f} s", mib(kib))
    half = [s for s in samples if s[0] >= samples[-1][0] / 2]
    report.add(section, "growth, whole run", f"{growth(samples):.2f} MiB/min")
    report.add(section, "growth, second half", f"{growth(half):.2f} MiB/min")


def main(argv: Sequence[str] | None = None) -> int:
    return benchlib.run_bench(__doc__, "run 1 minute instead of 5", measure, argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
