"""How fast tokengauge counts a Copilot-sized request: prints figures, asserts nothing about time.

    .venv/bin/python -m bench.count_bench [--quick | --smoke]

Measures, on the request of `tests/harness/copilot/workload.py` (1 system message, 100 mixed
messages, 60 tools):
1. whole-request `Counts.estimate`, cold (fresh Gauge, encodings loaded) and warm, both encodings;
2. `Gauge.count` latency per input over the strings Copilot counts one by one (and per message):
   in process; through a real `python -m tokengauge` over stdio, one request at a time as Copilot
   sends them (with pygls' client, and with a bare asyncio client to tell the client's share from
   the server's); and all strings in one batched request;
3. tokenization throughput of a fresh `TextCounter` against raw tiktoken `encode_ordinary`;
4. the server's time from spawn to its first `tokenGauge/models` and `countTokens` answers;
5. memory: the server's RSS with both encodings loaded, and what loading them costs in-process.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import tiktoken
from rich.console import Console

from bench.benchlib import (
    Report,
    Size,
    latency,
    machine_rows,
    mib,
    ms,
    now,
    proc_status,
    repeat,
    run_bench,
    us,
)
from tests.harness.copilot.workload import (
    MESSAGE_COUNT,
    TOOL_COUNT,
    Workload,
    build_workload,
)
from tests.harness.lsp import Endpoint, bare_server, init_options, spawn_server
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.text import TextCounter
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import CountInput
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings

MODELS: Final = ("gpt-4o", "claude-sonnet-4-5")
"""One model per encoding: o200k_base and cl100k_base."""
ENCODINGS: Final = ("o200k_base", "cl100k_base")
LSP_MODEL: Final = "gpt-4o"
COUNT_TOKENS: Final = "tokenGauge/countTokens"
MODELS_METHOD: Final = "tokenGauge/models"
WARM_UP_REQUESTS: Final = 50


@attrs.frozen
class Plan:
    """How many repetitions each measurement gets."""

    cold_runs: int
    warm_runs: int
    throughput_reps: int
    spawns: int
    empty_calls: int
    messages: int = MESSAGE_COUNT
    tools: int = TOOL_COUNT
    """The workload's size."""


PLANS: Final[dict[Size, Plan]] = {
    "full": Plan(cold_runs=8, warm_runs=30, throughput_reps=6, spawns=3, empty_calls=500),
    "quick": Plan(cold_runs=3, warm_runs=5, throughput_reps=2, spawns=3, empty_calls=100),
    "smoke": Plan(
        cold_runs=1, warm_runs=1, throughput_reps=1, spawns=1, empty_calls=1, messages=6, tools=4
    ),
}

# --- machine ------------------------------------------------------------------------------------


def machine(report: Report, workload: Workload, strings: Sequence[str]) -> None:
    section = "machine and workload"
    machine_rows(report, section)
    report.add(section, "tiktoken", tiktoken.__version__)
    chat = len(workload.messages) - 1
    corpus = workload.corpus().encode()
    report.add(
        section,
        "request",
        f"1 system + {chat} messages, {len(workload.tools)} tools",
        f"{len(corpus) / 1024:,.0f} KiB of text",
    )
    report.add(
        section,
        "Copilot string list",
        f"{len(strings):,} strings",
        f"{len(set(strings)):,} distinct; {len(workload.schema_strings()):,} from schemas",
    )


# --- in process -----------------------------------------------------------------------------------


def make_gauge(registry: EncodingRegistry, ledger: Ledger | None = None) -> Gauge:
    """A gauge with both models and an in-memory ledger, unless given one."""
    settings = ServerSettings(
        providers=(ProviderSettings(id="bench"),),
        models=tuple(ModelSettings(id=model, provider="bench") for model in MODELS),
    )
    return Gauge(settings, ledger or Ledger(None), registry)


def load_encodings(report: Report) -> EncodingRegistry:
    """Load both bundled encodings, timing each and measuring the RSS they add."""
    registry = EncodingRegistry()
    gc.collect()
    before = proc_status("VmRSS")
    for name in ENCODINGS:
        start = now()
        registry.get(name)
        report.add(
            "1. whole request (in process)",
            f"load {name}",
            ms(now() - start),
            "bundled rank file: read, SHA-256, parse, build",
        )
    gc.collect()
    after = proc_status("VmRSS")
    report.add(
        "5. memory",
        "in-process RSS added by loading both encodings",
        mib(after - before),
        f"RSS {mib(before)} → {mib(after)}; peak {mib(proc_status('VmHWM'))}",
    )
    return registry


def whole_request(
    report: Report, registry: EncodingRegistry, workload: Workload, plan: Plan
) -> None:
    """`Counts.estimate` of the whole request: fresh gauges (cold) and one gauge again (warm)."""
    section = "1. whole request (in process)"
    for model_id in MODELS:
        cold: list[int] = []
        for _ in range(plan.cold_runs):
            gauge = make_gauge(registry)
            model = gauge.offer.model(model_id)
            start = now()
            estimate = gauge.counts.estimate(model, workload.messages, workload.tools)
            cold.append(now() - start)
        warm: list[int] = []
        for _ in range(plan.warm_runs):
            start = now()
            gauge.counts.estimate(model, workload.messages, workload.tools)
            warm.append(now() - start)
        encoding = f"{model_id} ({model.encoding})"
        report.add(
            section,
            f"estimate cold · {encoding}",
            ms(statistics.median(cold)),
            f"median of {plan.cold_runs} fresh gauges; {estimate.total:,} tokens "
            f"(raw {estimate.raw_total:,}; system {estimate.system:,}, tools {estimate.tools:,})",
        )
        report.add(
            section,
            f"estimate warm · {encoding}",
            ms(statistics.median(warm)),
            f"median of {plan.warm_runs}; min {ms(min(warm))}",
        )
        report.add(
            section,
            f"estimate warm, on-disk ledger · {encoding}",
            ms(warm_on_disk(registry, workload, model_id, plan.warm_runs)),
            "as the server runs it: actuals read from SQLite in one batch",
        )


def warm_on_disk(registry: EncodingRegistry, workload: Workload, model_id: str, runs: int) -> float:
    """Median warm `estimate` with a diskcache ledger, like the server's."""
    with tempfile.TemporaryDirectory(prefix="tokengauge-bench-") as tmp:
        ledger = Ledger(Path(tmp) / "ledger")
        try:
            gauge = make_gauge(registry, ledger)
            model = gauge.offer.model(model_id)
            gauge.counts.estimate(model, workload.messages, workload.tools)
            samples: list[int] = []
            for _ in range(runs):
                start = now()
                gauge.counts.estimate(model, workload.messages, workload.tools)
                samples.append(now() - start)
        finally:
            ledger.close()
    return statistics.median(samples)


def direct_counts(
    report: Report, registry: EncodingRegistry, workload: Workload, model_id: str
) -> None:
    """`gauge.count(model_id, [item])` per string, then per message, on a fresh gauge, twice."""
    section = "2. count per input, direct `Gauge.count` (in process)"
    gauge = make_gauge(registry)
    gauge.count(model_id, ["warm-up"])
    inputs: tuple[tuple[str, Sequence[CountInput]], ...] = (
        ("strings", workload.copilot_strings()),
        ("messages", workload.messages),
    )
    for what, items in inputs:
        for label in ("cold", "warm"):
            samples: list[int] = []
            for item in items:
                start = now()
                gauge.count(model_id, [item])
                samples.append(now() - start)
            report.add(
                section,
                f"{what} {label} · {model_id} p50 / p99",
                latency(samples),
                f"total {ms(sum(samples))} for {len(samples):,}; max {us(max(samples))}",
            )


def throughput(report: Report, registry: EncodingRegistry, workload: Workload, plan: Plan) -> None:
    """MB/s of a fresh `TextCounter` against raw `encode_ordinary`, on the request's text."""
    section = "3. tokenization throughput"
    corpus = workload.corpus()
    size_mb = len(corpus.encode()) / 1e6
    strings = workload.copilot_strings()
    for name in ENCODINGS:
        encoding = registry.get(name)

        def run_counter(encoding: tiktoken.Encoding = encoding) -> int:
            return TextCounter(encoding).count(corpus)

        def run_raw(encoding: tiktoken.Encoding = encoding) -> int:
            return len(encoding.encode_ordinary(corpus))

        counter_ns, counted = median_time(run_counter, plan.throughput_reps)
        raw_ns, raw = median_time(run_raw, plan.throughput_reps)
        same = "same count" if counted == raw else f"COUNTS DIFFER: {counted:,} vs {raw:,}"
        report.add(
            section,
            f"TextCounter (fresh) · {name}",
            f"{size_mb / (counter_ns / 1e9):.2f} MB/s",
            f"{ms(counter_ns)} for {size_mb:.2f} MB, {counted:,} tokens; {same}",
        )
        report.add(
            section,
            f"tiktoken encode_ordinary · {name}",
            f"{size_mb / (raw_ns / 1e9):.2f} MB/s",
            f"{ms(raw_ns)}; TextCounter overhead {100 * (counter_ns / raw_ns - 1):+.1f}%",
        )

        def list_counter(encoding: tiktoken.Encoding = encoding) -> int:
            counter = TextCounter(encoding)
            return sum(counter.count(text) for text in strings)

        def list_raw(encoding: tiktoken.Encoding = encoding) -> int:
            return sum(len(encoding.encode_ordinary(text)) for text in strings)

        list_ns, _ = median_time(list_counter, plan.throughput_reps)
        list_raw_ns, _ = median_time(list_raw, plan.throughput_reps)
        report.add(
            section,
            f"Copilot string list, one by one · {name}",
            f"{ms(list_ns)} vs {ms(list_raw_ns)}",
            f"fresh TextCounter vs raw encode over {len(strings):,} strings",
        )


def median_time(run: Callable[[], int], reps: int) -> tuple[float, int]:
    """Median wall time of `reps` runs, and the last run's result."""
    times, result = repeat(run, reps)
    return statistics.median(times), result


# --- over LSP -------------------------------------------------------------------------------------

CountFn = Callable[[str, Sequence[Any]], Awaitable[Any]]


def options(storage: Path) -> dict[str, Any]:
    """`initializationOptions`: a provider nobody listens on, and one model per encoding."""
    provider = {"id": "bench", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1"}
    return init_options(storage, [provider], [{"id": m, "provider": "bench"} for m in MODELS])


def counter(server: Endpoint) -> CountFn:
    """`countTokens` of some inputs for a model, one request through `server`."""

    async def count(model_id: str, inputs: Sequence[Any]) -> Any:
        return await server.request(COUNT_TOKENS, {"modelId": model_id, "inputs": list(inputs)})

    return count


async def timed(count: CountFn, model_id: str, inputs: Sequence[Any]) -> int:
    start = now()
    await count(model_id, inputs)
    return now() - start


async def one_by_one(count: CountFn, inputs: Sequence[Any]) -> tuple[list[int], int]:
    """Each input in its own request, each awaited before the next; per-call times and wall."""
    start = now()
    samples = [await timed(count, LSP_MODEL, [item]) for item in inputs]
    return samples, now() - start


async def warm_up(count: CountFn) -> None:
    """One count per model (both encodings loaded), then a few untimed requests."""
    for model_id in MODELS:
        await count(model_id, ["warm-up"])
    for _ in range(WARM_UP_REQUESTS):
        await count(LSP_MODEL, [])


def add_passes(
    report: Report, section: str, label: str, samples: list[int], wall: int, what: str
) -> None:
    report.add(
        section,
        f"{label} p50 / p99",
        latency(samples),
        f"max {us(max(samples))}, mean {us(statistics.fmean(samples))}; "
        f"{len(samples):,} {what} one by one: {ms(wall)} wall",
    )


async def pygls_round_trips(
    report: Report, root: Path, strings: Sequence[str], messages: Sequence[Any], plan: Plan
) -> None:
    """Strings, then whole messages, one countTokens request each, as Copilot sends them."""
    section = "2a. count over LSP, one request at a time (pygls client, stdio)"
    async with spawn_server() as server:
        await server.initialize(options(Path(tempfile.mkdtemp(dir=root))))
        count = counter(server)
        await warm_up(count)
        rss_loaded = proc_status("VmRSS", server.process.pid)
        empty = [await timed(count, LSP_MODEL, []) for _ in range(plan.empty_calls)]
        report.add(
            section,
            "empty request (inputs: []) p50 / p99",
            latency(empty),
            f"{plan.empty_calls} calls: transport, JSON-RPC and pygls, no counting",
        )
        for label in ("cold", "warm"):
            samples, wall = await one_by_one(count, strings)
            add_passes(report, section, f"strings {label} · {LSP_MODEL}", samples, wall, "strings")
        for label in ("first", "again"):
            samples, wall = await one_by_one(count, messages)
            add_passes(report, section, f"messages {label} · {LSP_MODEL}", samples, wall, "msgs")
        rss_after = proc_status("VmRSS", server.process.pid)
        hwm = proc_status("VmHWM", server.process.pid)
    section = "5. memory"
    report.add(section, "server RSS, both encodings loaded", mib(rss_loaded), "one count each")
    report.add(section, "server RSS after the LSP passes", mib(rss_after), f"peak {mib(hwm)}")


async def bare_round_trips(report: Report, root: Path, strings: Sequence[str], plan: Plan) -> None:
    """The same string passes with `BareClient`, to tell the client's share from the server's."""
    section = "2a. count over LSP, one request at a time (pygls client, stdio)"
    async with bare_server(options(Path(tempfile.mkdtemp(dir=root)))) as client:
        count = counter(client)
        await warm_up(count)
        empty = [await timed(count, LSP_MODEL, []) for _ in range(plan.empty_calls)]
        report.add(section, "bare asyncio client: empty request p50 / p99", latency(empty))
        for label in ("cold", "warm"):
            samples, wall = await one_by_one(count, strings)
            add_passes(report, section, f"bare asyncio client: strings {label}", samples, wall,
                       "strings")  # fmt: skip


@attrs.frozen
class FirstAnswers:
    """Wall times from spawning one server, in ns."""

    initialized: int
    models: int
    count: int
    batch_cold: int
    batch_warm: int


async def first_answers(root: Path, strings: Sequence[str]) -> FirstAnswers:
    """Spawn, initialize, ask for the models, count once; then all strings in one batch."""
    start = now()
    async with spawn_server() as server:
        await server.initialize(options(Path(tempfile.mkdtemp(dir=root))))
        initialized = now() - start
        await server.request(MODELS_METHOD, {})
        models = now() - start
        count = counter(server)
        await count(LSP_MODEL, ["Hello, world"])
        counted = now() - start
        batch_cold = await timed(count, LSP_MODEL, strings)
        batch_warm = await timed(count, LSP_MODEL, strings)
    return FirstAnswers(initialized, models, counted, batch_cold, batch_warm)


async def startup(report: Report, root: Path, strings: Sequence[str], plan: Plan) -> None:
    """Section 4, and the batched requests of section 2 (cold: the server's first real request)."""
    runs = [await first_answers(root, strings) for _ in range(plan.spawns)]
    section = "4. server start (spawn → answer, wall time)"
    for label, field in (
        ("initialize answered", "initialized"),
        ("first tokenGauge/models answered", "models"),
        ("first tokenGauge/countTokens answered", "count"),
    ):
        values = [getattr(run, field) for run in runs]
        spread = ", ".join(ms(v) for v in values)
        report.add(section, label, ms(statistics.median(values)), f"median of {spread}")
    section = "2b. batched count over LSP (one request with every string)"
    for label, field in (("cold (new server)", "batch_cold"), ("warm (same again)", "batch_warm")):
        values = [getattr(run, field) for run in runs]
        report.add(
            section,
            f"{label} · {LSP_MODEL}",
            ms(statistics.median(values)),
            f"{len(strings):,} strings; median of {plan.spawns} spawns",
        )


async def over_lsp(report: Report, workload: Workload, plan: Plan) -> None:
    strings = workload.copilot_strings()
    messages = workload.to_json()["messages"]
    with tempfile.TemporaryDirectory(prefix="tokengauge-bench-") as tmp:
        root = Path(tmp)
        await pygls_round_trips(report, root, strings, messages, plan)
        await bare_round_trips(report, root, strings, plan)
        await startup(report, root, strings, plan)


# --- main -----------------------------------------------------------------------------------------


def measure(report: Report, console: Console, size: Size) -> None:
    """Every section, in process first, then over LSP."""
    plan = PLANS[size]
    workload = build_workload(message_count=plan.messages, tool_count=plan.tools)
    strings = workload.copilot_strings()
    registry = load_encodings(report)  # First, so its RSS delta is about the encodings alone.
    machine(report, workload, strings)
    with console.status("whole request…"):
        whole_request(report, registry, workload, plan)
    with console.status("per-input counts…"):
        for model_id in MODELS:
            direct_counts(report, registry, workload, model_id)
    with console.status("throughput…"):
        throughput(report, registry, workload, plan)
    with console.status("language server…"):
        asyncio.run(over_lsp(report, workload, plan))


def main(argv: Sequence[str] | None = None) -> int:
    return run_bench(__doc__, "fewer repetitions (~30 s)", measure, argv)


if __name__ == "__main__":
    raise SystemExit(main())
