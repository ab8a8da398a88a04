"""What OpenTelemetry costs: per request on the chat path, across 1,000 requests with a collector up
and with it down, and what telemetry off costs a server (start and chats) against one without it.

    .venv/bin/python -m bench.telemetry_bench [--quick | --smoke] [--before SERVER_DIR]

1. In process, `Telemetry.request_ended` (what a chat pays when it ends: the span made and queued,
   the metrics recorded) 1,000 times against a real OTLP/HTTP collector on loopback
   (`tests/harness/otlp.py`), then the spans the collector decoded; the same with no collector
   listening (nothing may block) and the warnings said.
2. Real servers over stdio (a bare JSON-RPC client), 5 times each (`--quick`: once): spawn →
   `initialize` answered → models answered, then 20 chats to the test upstream; telemetry off,
   telemetry on (to the collector), and, with `--before`, a server from another tree (`SERVER_DIR`,
   e.g. a checkout of the commit before telemetry) for "off costs nothing".
A benchmark, not a test: it prints what it measured. Run it on a quiet machine.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any, Final

import attrs
from rich.console import Console

from bench import benchlib
from bench.benchlib import Report, Size, ms, now, us
from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import bare_server, init_options
from tests.harness.otlp import running_collector
from tokengauge.activity.record import RequestRecord
from tokengauge.settings import ProviderSettings, TelemetrySettings
from tokengauge.telemetry.export import Telemetry
from tokengauge.telemetry.request import EndedRequest, TraceParent


@attrs.frozen
class Plan:
    """How much each part measures."""

    requests: int
    """Requests ended in process, with the collector up and with it down."""
    runs: int
    """Starts of each kind of server."""
    chats: int
    """Chats each server answers."""


PLANS: Final[dict[Size, Plan]] = {
    "full": Plan(1_000, 5, 20),
    "quick": Plan(100, 1, 20),
    "smoke": Plan(10, 1, 2),
}
PARENT: Final = TraceParent(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7, True)


def ended(i: int) -> EndedRequest:
    """A finished request as the chat path hands it to telemetry."""
    start = time.time_ns()
    record = RequestRecord(
        time=time.time(),
        model_id="gpt-4o",
        kind="turn",
        outcome="answered",
        estimated_tokens=12_300,
        window=128_000,
        max_input_tokens=111_616,
        conversation=f"c{i % 7}",
        input_tokens=12_000,
        cached_tokens=9_000,
        output_tokens=420,
        cost_usd=0.012,
    )
    return EndedRequest(
        record=record,
        provider=ProviderSettings(id="openai", preset="openai"),
        url="https://api.openai.com/v1/chat/completions",
        start_ns=start - 2_000_000_000,
        end_ns=start,
        first_chunk_ns=start - 1_500_000_000,
        parent=PARENT,
        max_tokens=4_096,
        finish_reason="stop",
    )


class Warnings(logging.Handler):
    """Counts the warnings said."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def in_process(report: Report, requests: int) -> None:
    """`request_ended`'s cost with the collector up and down; spans lost; warnings said."""
    warnings = Warnings()
    logging.getLogger("tokengauge").addHandler(warnings)
    with running_collector() as collector:
        telemetry = Telemetry(TelemetrySettings(enabled=True, endpoint=collector.url))
        costs = timed(telemetry, requests)
        telemetry.shutdown()
        received, posts = len(collector.spans), collector.posts
    report.add(
        "1 collector up",
        "request_ended, per request",
        us(statistics.median(costs)),
        f"p99 {us(benchlib.p99(costs))}, mean {us(statistics.fmean(costs))}",
    )
    report.add(
        "1 collector up",
        "spans received",
        f"{received:,} of {requests:,}",
        f"in {posts} posts (traces and metrics)",
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"  # nothing listens there
    before = warnings.count
    telemetry = Telemetry(TelemetrySettings(enabled=True, endpoint=endpoint))
    costs = timed(telemetry, requests)
    started = now()
    telemetry.shutdown()
    stopping = now() - started
    time.sleep(4)  # the exporter's retries end in the background
    report.add(
        "2 collector down",
        "request_ended, per request",
        us(statistics.median(costs)),
        f"p99 {us(benchlib.p99(costs))}, max {us(max(costs))}",
    )
    report.add("2 collector down", "shutdown returned after", ms(stopping), "bounded at 2 s")
    report.add("2 collector down", "warnings said", str(warnings.count - before), "")
    logging.getLogger("tokengauge").removeHandler(warnings)


def timed(telemetry: Telemetry, requests: int) -> list[int]:
    costs = []
    for i in range(requests):
        request = ended(i)
        started = now()
        telemetry.request_ended(request)
        costs.append(now() - started)
    return costs


async def serve(
    python_path: str | None, options: dict[str, Any], count: int
) -> tuple[int, int, list[int]]:
    """One server: spawn → initialize answered, spawn → models, and each chat's time."""
    env = dict(os.environ)
    if python_path is not None:
        env["PYTHONPATH"] = python_path
    chats = []
    started = now()
    async with bare_server(options, env=env) as client:
        initialized = now() - started
        await client.request("tokenGauge/models", {})
        models = now() - started
        for i in range(count):
            context = {"traceId": f"{PARENT.trace_id:032x}", "spanId": f"{PARENT.span_id:016x}"}
            params = {
                "requestId": f"r{i}",
                "modelId": "gpt-4o",
                "messages": [{"role": "user", "content": [{"type": "text", "value": f"hi {i}"}]}],
                "credentials": {"apiKey": "sk-bench"},
                "modelOptions": {"_otelTraceContext": context},
            }
            sent = now()
            await client.request("tokenGauge/chat", params)
            chats.append(now() - sent)
    return initialized, models, chats


async def servers(report: Report, plan: Plan, before: str | None) -> None:
    """Start and chat times of servers with telemetry off, on, and another tree's."""
    with running_collector() as collector:
        async with running_upstream(UpstreamConfig()) as upstream:
            provider = {"id": "up", "dialect": "openai", "baseUrl": upstream.base_url + "/v1"}
            kinds: list[tuple[str, str | None, dict[str, Any]]] = [
                ("3 telemetry off", None, {}),
                ("4 telemetry on", None, {"enabled": True, "endpoint": collector.url}),
            ]
            if before is not None:
                kinds.insert(0, ("3 before telemetry", before, {}))
            results: dict[str, list[tuple[int, int, list[int]]]] = {
                name: [] for name, _, _ in kinds
            }
            for _ in range(plan.runs):  # interleaved: a change in the machine's load hits all alike
                for name, path, telemetry in kinds:
                    with tempfile.TemporaryDirectory() as storage:
                        options = init_options(
                            storage, [provider], [{"id": "gpt-4o", "provider": "up"}]
                        )
                        if telemetry:
                            options["telemetry"] = telemetry
                        results[name].append(await serve(path, options, plan.chats))
            spans = len(collector.spans)
    for name, runs_of in results.items():
        initialize = statistics.median(r[0] for r in runs_of)
        models = statistics.median(r[1] for r in runs_of)
        chats = [c for r in runs_of for c in r[2]]
        report.add(
            name,
            "spawn → initialize / models (median)",
            f"{ms(initialize)} / {ms(models)}",
            f"{len(runs_of)} starts",
        )
        report.add(
            name,
            "chat, LSP request → result",
            ms(statistics.median(chats)),
            f"p99 {ms(benchlib.p99(chats))}, {len(chats)} chats",
        )
    report.add("4 telemetry on", "spans received", str(spans), f"of {plan.chats * plan.runs} chats")


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print."""
    parser = benchlib.bench_parser(__doc__, "100 requests, 1 start of each kind")
    parser.add_argument("--before", help="the server folder of another tree (PYTHONPATH)")
    args = parser.parse_args(argv)
    plan = PLANS[benchlib.size_of(args)]
    report = Report()
    benchlib.machine_rows(report, "Machine")
    in_process(report, plan.requests)
    asyncio.run(servers(report, plan, args.before))
    report.print(Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
