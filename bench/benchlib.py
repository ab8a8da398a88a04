"""What the bench scripts share: the report, time formats, the machine rows, /proc figures.

The scripts run from the repository's root as modules (`python -m bench.<script>`), so `bench`
and the test harness (`tests.harness`, which runs the server and the fake upstream) import as
packages. Times are integer nanoseconds throughout; the formatters turn them into the strings of
the report's value and detail columns.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Literal

import attrs
from rich.console import Console
from rich.table import Table

# --- reporting ------------------------------------------------------------------------------------


@attrs.define
class Report:
    """Rows of (measurement, value, detail), grouped by section, printed as rich tables."""

    sections: dict[str, list[tuple[str, str, str]]] = attrs.field(factory=dict)

    def add(self, section: str, measurement: str, value: str, detail: str = "") -> None:
        """Append a row to `section`, which is created on its first row."""
        self.sections.setdefault(section, []).append((measurement, value, detail))

    def print(self, console: Console) -> None:
        """Machine first, then the numbered sections in order."""
        for title, rows in sorted(
            self.sections.items(), key=lambda kv: (kv[0][0].isdigit(), kv[0])
        ):
            table = Table(title=title, title_justify="left", expand=False)
            table.add_column("measurement")
            table.add_column("value", justify="right")
            table.add_column("detail", style="dim")
            for row in rows:
                table.add_row(*row)
            console.print(table)


Size = Literal["full", "quick", "smoke"]
"""How much a bench measures: everything, fewer repetitions, or each step once at its smallest."""
SMOKE_HELP: Final = "each step once at its smallest: only that it runs (scripts/check.sh)"


def bench_parser(doc: str | None, quick_help: str | None) -> argparse.ArgumentParser:
    """A bench's command line: `--quick` (where `quick_help` says what it does) or `--smoke`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    sizes = parser.add_mutually_exclusive_group()
    if quick_help is not None:
        sizes.add_argument("--quick", action="store_true", help=quick_help)
    sizes.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    return parser


def size_of(args: argparse.Namespace) -> Size:
    """The size `bench_parser`'s options chose."""
    if args.smoke:
        return "smoke"
    return "quick" if getattr(args, "quick", False) else "full"


def run_bench(
    doc: str | None,
    quick_help: str,
    measure: Callable[[Report, Console, Size], None],
    argv: Sequence[str] | None = None,
) -> int:
    """A bench script's `main`: parse its size, measure into a report, print it and the run time.

    `measure(report, console, size)` fills the report; the console is for its status spinners.
    """
    size = size_of(bench_parser(doc, quick_help).parse_args(argv))
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 132)
    report = Report()
    started = now()
    measure(report, console, size)
    report.print(console)
    console.print(f"[dim]{size} run took {ms(now() - started)}[/dim]")
    return 0


# --- time and size formats ------------------------------------------------------------------------


def now() -> int:
    """`time.monotonic_ns()`: the one clock of every measurement, the fake upstream's too (its
    records are in `time.monotonic()` seconds)."""
    return time.monotonic_ns()


def repeat(run: Callable[[], int], reps: int) -> tuple[list[int], int]:
    """Wall times of `reps` runs of `run`, and the last run's result."""
    times: list[int] = []
    result = 0
    for _ in range(reps):
        start = now()
        result = run()
        times.append(now() - start)
    return times, result


def ms(ns: float) -> str:
    """Nanoseconds as milliseconds: one decimal from 10 ms up, two below."""
    return f"{ns / 1e6:,.1f} ms" if ns >= 1e7 else f"{ns / 1e6:,.2f} ms"


def us(ns: float) -> str:
    """Nanoseconds as microseconds: no decimal from 100 µs up, one below."""
    return f"{ns / 1e3:,.0f} µs" if ns >= 1e5 else f"{ns / 1e3:,.1f} µs"


def p99(samples: Sequence[int]) -> float:
    """The 99th percentile (inclusive method); the sample itself when there is only one."""
    if len(samples) < 2:
        return float(samples[0])
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


def latency(samples: Sequence[int]) -> str:
    """`p50 / p99` in µs."""
    return f"{us(statistics.median(samples))} / {us(p99(samples))}"


def rate(count: int, ns: float) -> str:
    """`count` per second over `ns`, as `12,345/s`; `n/a` for no time at all."""
    return f"{count / (ns / 1e9):,.0f}/s" if ns > 0 else "n/a"


def mib(kib: int) -> str:
    """KiB (as /proc reports them) as MiB."""
    return f"{kib / 1024:,.1f} MiB"


# --- /proc ----------------------------------------------------------------------------------------


def proc_status(field: str, pid: int | str = "self") -> int:
    """A `kB` field of /proc/<pid>/status (VmRSS, VmHWM), in KiB; 0 where there is no /proc."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_ticks_ns(pid: int) -> int:
    """User + system CPU time of a process from /proc (10 ms ticks), in ns; 0 without /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    ticks = int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat(5).
    return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


# --- machine --------------------------------------------------------------------------------------


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else `platform.processor()`."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def version(package: str) -> str:
    """An installed distribution's version, `?` if it is not installed."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def machine_rows(report: Report, section: str) -> None:
    """The platform, CPU (cores, usable cores) and Python rows that open both reports."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    report.add(section, "platform", platform.platform())
    report.add(section, "CPU", cpu_model(), f"{os.cpu_count()} cores, {usable} usable")
    report.add(section, "Python", platform.python_version(), sys.executable)
