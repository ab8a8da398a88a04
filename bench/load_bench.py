"""Load benchmark: 20 concurrent chats and 1,000 counts a second against one server, for 60 s.

    .venv/bin/python -m bench.load_bench [--quick | --smoke]

One `python -m tokengauge` on pipes (a bare JSON-RPC client, so the figures are the server's), the
fake upstream (`tests/harness/fake_upstream`) as a second process streaming each chat's answer in
small chunks.
Twenty chat loops send one chat after another; a pacer sends a `countTokens` of one string every
millisecond, whatever the answers (most strings asked before, one in five new, as in Copilot's
agent loop). It prints the server's RSS at 10 s and at the end (and its peak), count latency
percentiles, chat times, and every error. A benchmark, not a test: it fails nothing.
`--quick` runs 10 s; `--smoke` 1 s of 2 chat loops and 50 counts a second.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
from collections.abc import Sequence
from typing import Any, Final

import attrs
from rich.console import Console

from bench import benchlib
from bench.benchlib import Report, Size, mib, ms, now, proc_status, us
from tests.harness.fake_upstream.config import Chunking, ModelBehavior, Reply, UpstreamConfig
from tests.harness.fake_upstream.process import SubprocessUpstream
from tests.harness.lsp import BareClient, bare_server, init_options


@attrs.frozen
class Load:
    """How long the load lasts and how heavy it is."""

    seconds: float
    chats: int
    """Chat loops at once."""
    counts_per_second: int


LOADS: Final[dict[Size, Load]] = {
    "full": Load(60.0, 20, 1000),
    "quick": Load(10.0, 20, 1000),
    "smoke": Load(1.0, 2, 50),
}
NEW_STRING_SHARE: Final = 5  # one count in five asks a string never seen before
WINDOW: Final = 128_000
TOOL_STRINGS: Final = [
    f"{key} of the {thing}" for key in ("path", "query", "pattern", "description", "command")
    for thing in ("file", "workspace", "terminal", "notebook", "test", "symbol", "search")
]  # fmt: skip


def options(storage: str, base_url: str) -> dict[str, Any]:
    """`initializationOptions`: one provider on the upstream, one model."""
    provider = {"id": "up", "dialect": "openai", "baseUrl": base_url + "/v1"}
    return init_options(storage, [provider], [{"id": "gpt-4o", "provider": "up"}], "warning")


def conversation(index: int) -> list[dict[str, Any]]:
    def text(role: str, value: str) -> dict[str, Any]:
        return {"role": role, "content": [{"type": "text", "value": value}]}

    turns = [text("system", "You are a careful coding assistant. " * 20)]
    for turn in range(5):
        turns.append(
            text("user", f"Question {turn} of chat {index}: " + "explain this code. " * 40)
        )
        turns.append(text("assistant", "It reads the file and counts the words. " * 30))
    turns.append(text("user", f"And now chat {index} asks the last question."))
    return turns


@attrs.define
class Tally:
    """What the run measured."""

    count_latency: list[int] = attrs.field(factory=list)
    chat_time: list[int] = attrs.field(factory=list)
    errors: dict[str, int] = attrs.field(factory=dict)
    rss_kib: dict[str, int] = attrs.field(factory=dict)
    server_cpu_ns: int = 0
    bench_cpu_ns: int = 0
    upstream_cpu_ns: int = 0

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


async def chat_loop(server: BareClient, index: int, end: int, tally: Tally) -> None:
    serial = 0
    while now() < end:
        serial += 1
        params = {
            "requestId": f"load-{index}-{serial}",
            "modelId": "gpt-4o",
            "messages": conversation(index),
            "credentials": {"apiKey": "sk-load-bench"},
        }
        started = now()
        answer = await server.call("tokenGauge/chat", params)
        if "error" in answer:
            tally.error(f"chat {answer['error'].get('code')}")
        else:
            tally.chat_time.append(now() - started)


async def count_pacer(server: BareClient, end: int, per_second: int, tally: Tally) -> None:
    interval = 1_000_000_000 // per_second
    tasks: set[asyncio.Task[None]] = set()
    serial = 0

    async def count(text: str) -> None:
        started = now()
        answer = await server.call(
            "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": [text]}
        )
        if "error" in answer:
            tally.error(f"count {answer['error'].get('code')}")
        else:
            tally.count_latency.append(now() - started)

    next_at = now()
    while next_at < end:
        serial += 1
        fresh = serial % NEW_STRING_SHARE == 0
        text = (
            f"a string never asked before, number {serial}"
            if fresh
            else TOOL_STRINGS[serial % len(TOOL_STRINGS)]
        )
        task = asyncio.create_task(count(text))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        next_at += interval
        await asyncio.sleep(max(0.0, (next_at - now()) / 1e9))
    await asyncio.gather(*tasks)


async def sample_rss(pid: int, started: int, tally: Tally) -> None:
    await asyncio.sleep(10)
    tally.rss_kib[f"RSS at {(now() - started) / 1e9:.0f} s"] = proc_status("VmRSS", pid)


async def run(load: Load) -> tuple[Tally, int]:
    tally = Tally()
    upstream = UpstreamConfig(
        model=ModelBehavior(context_window=WINDOW),
        reply=Reply(text="word ", repeat=150),
        chunking=Chunking(min_bytes=20, max_bytes=80, min_delay=0.002, max_delay=0.008),
    )
    # The upstream is a process of its own, so that its CPU is not the client's.
    with (
        tempfile.TemporaryDirectory(prefix="tokengauge-load-") as storage,
        SubprocessUpstream(upstream) as up,
    ):
        async with bare_server(options(storage, up.base_url)) as server:
            process = server.process
            # Load the encoding first: the clock measures a running server, not its start.
            await server.request("tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["x"]})
            started = now()
            cpu_before = benchlib.cpu_ticks_ns(process.pid)
            upstream_before = benchlib.cpu_ticks_ns(up.pid)
            bench_before = benchlib.cpu_ticks_ns(os.getpid())
            end = started + int(load.seconds * 1e9)
            sampler = asyncio.create_task(sample_rss(process.pid, started, tally))
            work = [chat_loop(server, i, end, tally) for i in range(load.chats)]
            await asyncio.gather(count_pacer(server, end, load.counts_per_second, tally), *work)
            elapsed = now() - started
            tally.rss_kib[f"RSS at {elapsed / 1e9:.0f} s"] = proc_status("VmRSS", process.pid)
            tally.rss_kib["peak RSS"] = proc_status("VmHWM", process.pid)
            tally.server_cpu_ns = benchlib.cpu_ticks_ns(process.pid) - cpu_before
            tally.upstream_cpu_ns = benchlib.cpu_ticks_ns(up.pid) - upstream_before
            tally.bench_cpu_ns = benchlib.cpu_ticks_ns(os.getpid()) - bench_before
            if not sampler.done():
                sampler.cancel()
    return tally, elapsed


def percentiles(samples: Sequence[int]) -> str:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return f"p50 {us(cuts[49])} · p90 {us(cuts[89])} · p99 {us(cuts[98])} · max {us(max(samples))}"


def measure(report: Report, console: Console, size: Size) -> None:
    load = LOADS[size]
    benchlib.machine_rows(report, "machine")
    with console.status(
        f"{load.chats} chats and {load.counts_per_second} counts/s for {load.seconds:.0f} s"
    ):
        tally, elapsed = asyncio.run(run(load))
    section = "1 load"
    report.add(
        section,
        "duration",
        ms(elapsed),
        f"{load.chats} chat loops, counts paced at {load.counts_per_second}/s",
    )
    for name, kib in tally.rss_kib.items():
        report.add(section, name, mib(kib))
    report.add(
        section,
        "server CPU",
        f"{tally.server_cpu_ns / elapsed:.0%}",
        f"of one core; upstream {tally.upstream_cpu_ns / elapsed:.0%}, "
        f"this client {tally.bench_cpu_ns / elapsed:.0%}",
    )
    counts = tally.count_latency
    report.add(section, "counts answered", f"{len(counts):,}", benchlib.rate(len(counts), elapsed))
    if counts:
        report.add(section, "count latency", us(statistics.median(counts)), percentiles(counts))
    chats = tally.chat_time
    report.add(section, "chats completed", f"{len(chats):,}", benchlib.rate(len(chats), elapsed))
    if chats:
        cuts = (
            statistics.quantiles(chats, n=100, method="inclusive")
            if len(chats) > 1
            else [chats[0]] * 99
        )
        report.add(
            section,
            "chat time",
            ms(statistics.median(chats)),
            f"p90 {ms(cuts[89])} · p99 {ms(cuts[98])}",
        )
    report.add(
        section,
        "errors",
        str(sum(tally.errors.values())),
        ", ".join(f"{k}: {v}" for k, v in tally.errors.items()),
    )


def main(argv: Sequence[str] | None = None) -> int:
    return benchlib.run_bench(__doc__, "run 10 s instead of 60", measure, argv)


if __name__ == "__main__":
    raise SystemExit(main())
