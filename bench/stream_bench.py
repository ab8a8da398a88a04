"""How fast tokengauge streams a chat response: prints figures, asserts nothing about time.

    .venv/bin/python -m bench.stream_bench [--quick | --smoke]

The bench process is both ends of the pipe: the test harness's fake upstream (aiohttp on
127.0.0.1) writing real OpenAI Chat Completions / Anthropic Messages SSE events, one per write
(each text delta carries its sequence number, and the upstream records when each write was done),
and pygls' client, which stamps each `tokenGauge/chatPart` notification as it is handled. In
between runs `python -m tokengauge` over stdio. Same machine, same clock: a chunk's added latency
is its arrival at the client minus its write at the upstream. For both dialects:
1. paced stream: events 2 ms apart → added latency per chunk, p50 / p99 / max;
2. burst: events written as fast as possible → parts per second at the client, total time, and
   the server's CPU per part;
3. time to first part after sending `tokenGauge/chat` (counting, request body, HTTP connect),
   with a tiny request and with the Copilot-sized one of `tests/harness/copilot/workload.py`;
4. in process, for comparison: the stream parser alone, SSE framing + parser as the server runs
   them, the `chatPart` notification's encoding, and the bench client's own cost per part.
Sections 1 and 2 also run with a bare asyncio JSON-RPC client (the server's share without pygls'
client, which costs more per notification than the server does) and with `ChatRunner` in this
process over HTTP (no LSP hop at all); sections 1–3 also with a direct client of the same upstream
(`stream_client`: httpx + httpx-sse and nothing of tokengauge, as a provider in the editor's own
process would call the API), the reference the LSP hop's cost is read against.

Beside it in `bench/`: `stream_script` (what the upstream sends, what it saw),
`stream_inprocess` (section 4) and `benchlib` (shared helpers); the upstream and the clients
are the test harness's (`tests/harness/`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import httpx
from rich.console import Console

from bench.benchlib import (
    Report,
    Size,
    cpu_ticks_ns,
    latency,
    machine_rows,
    ms,
    now,
    rate,
    run_bench,
    us,
    version,
)
from bench.stream_client import stream_chat
from bench.stream_inprocess import in_process
from bench.stream_script import (
    ANTHROPIC,
    MODELS,
    OPENAI,
    SEQ,
    Script,
    StreamModel,
    Trace,
    expect,
    make_stream,
    traced,
)
from tests.harness.copilot.workload import build_workload
from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import (
    Endpoint,
    bare_server,
    init_options,
    plain,
    plain_client,
    spawn_server,
)
from tokengauge.chat import ChatRunner
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import structure, unstructure
from tokengauge.protocol import CHAT, CHAT_PART, COUNT_TOKENS, ChatParams, ChatPart, Status
from tokengauge.settings import parse_settings
from tokengauge.upstream.http import Timeouts, make_client

API_KEY: Final = "bench"
WARM_UP_CHATS: Final = 5
SHORT_STREAM: Final = 5
"""Text deltas per response in the time-to-first-part runs."""
OVER_LSP: Final = "over LSP"
OVER_LSP_BARE: Final = "over LSP, bare client"
IN_PROCESS: Final = "in process (ChatRunner, no LSP)"
DIRECT_CLIENT: Final = "direct client (httpx + httpx-sse)"


@attrs.frozen
class Plan:
    """How many events and repetitions each measurement gets."""

    paced_events: int
    paced_delay_ms: float
    burst_events: int
    burst_runs: int
    first_part_runs: int
    parser_reps: int


PLANS: Final[dict[Size, Plan]] = {
    "full": Plan(
        paced_events=500,
        paced_delay_ms=2.0,
        burst_events=5_000,
        burst_runs=3,
        first_part_runs=40,
        parser_reps=5,
    ),
    "quick": Plan(
        paced_events=150,
        paced_delay_ms=2.0,
        burst_events=1_000,
        burst_runs=1,
        first_part_runs=10,
        parser_reps=3,
    ),
    "smoke": Plan(
        paced_events=5,
        paced_delay_ms=2.0,
        burst_events=20,
        burst_runs=1,
        first_part_runs=2,
        parser_reps=1,
    ),
}


# --- machine --------------------------------------------------------------------------------------


def machine(report: Report, plan: Plan) -> None:
    section = "machine and setup"
    machine_rows(report, section)
    libraries = ("tokengauge", "pygls", "httpx", "httpx-sse", "aiohttp")
    report.add(section, "libraries", ", ".join(f"{name} {version(name)}" for name in libraries))
    report.add(
        section,
        "setup",
        "upstream + client in this process",
        "aiohttp upstream and pygls client share one event loop; "
        "`python -m tokengauge` is the subprocess in between (stdio)",
    )
    report.add(
        section,
        "plan",
        f"paced {plan.paced_events} × {plan.paced_delay_ms:g} ms, "
        f"burst {plan.burst_events:,} × {plan.burst_runs}",
        f"{plan.first_part_runs} first-part runs per variant",
    )


# --- the clients ----------------------------------------------------------------------------------

Arrival = tuple[int, Any]
"""(`now()` when the client had parsed it, the `chatPart` notification's params)."""


def server_options(storage: Path, base_url: str) -> dict[str, Any]:
    """`initializationOptions`: one provider per dialect, both on the bench upstream."""
    return init_options(
        storage,
        [
            {"id": "bench-openai", "dialect": "openai", "baseUrl": f"{base_url}/v1"},
            {"id": "bench-anthropic", "dialect": "anthropic", "baseUrl": base_url},
        ],
        [
            {"id": OPENAI.model_id, "provider": "bench-openai"},
            {"id": ANTHROPIC.model_id, "provider": "bench-anthropic"},
        ],
    )


@attrs.frozen
class Stamped:
    """A way of talking to the server, and the `chatPart` notifications it has handled."""

    endpoint: Endpoint
    arrivals: list[Arrival]


@contextlib.asynccontextmanager
async def pygls_session(options: dict[str, Any]) -> AsyncIterator[Stamped]:
    """The server with pygls' client, initialized; each part stamped in the client's handler."""
    arrivals: list[Arrival] = []

    def on_part(params: Any) -> None:
        arrivals.append((now(), params))

    async with spawn_server(plain_client({CHAT_PART: on_part})) as server:
        await server.initialize(options)
        yield Stamped(server, arrivals)


@contextlib.asynccontextmanager
async def bare_session(options: dict[str, Any]) -> AsyncIterator[Stamped]:
    """The server with the bare client, initialized; each part stamped as soon as it is parsed."""
    arrivals: list[Arrival] = []

    def on_message(message: dict[str, Any]) -> None:
        if message.get("method") == CHAT_PART:
            arrivals.append((now(), message["params"]))

    async with bare_server(options, on_message) as client:
        yield Stamped(client, arrivals)


# --- one chat -------------------------------------------------------------------------------------

_request_ids = iter(range(1, 1 << 62))


def hi() -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "value": "hi"}]}]


def chat_params(
    model: StreamModel, messages: list[Any], tools: list[Any] | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "requestId": f"bench-{next(_request_ids)}",
        "modelId": model.model_id,
        "messages": messages,
        "credentials": {"apiKey": API_KEY},
    }
    if tools:
        params["tools"] = tools
    return params


@attrs.frozen
class Sample:
    """One chat: when it was sent and answered, what the upstream did, and the parts that came."""

    sent: int
    done: int
    trace: Trace
    parts: list[tuple[int, dict[str, Any]]]
    """(arrival ns, part) in arrival order."""
    cpu_server: int = 0
    cpu_bench: int = 0

    def seq_arrivals(self) -> dict[int, int]:
        """Arrival time of each text delta, by sequence number (the first if it came twice)."""
        seen: dict[int, int] = {}
        for arrived, part in self.parts:
            if part.get("type") == "text":
                for match in SEQ.findall(str(part.get("value", ""))):
                    seen.setdefault(int(match), arrived)
        return seen

    def latencies(self) -> list[int]:
        """Per text delta: client arrival minus upstream write."""
        seen = self.seq_arrivals()
        return [seen[k] - wrote for k, wrote in enumerate(self.trace.writes) if k in seen]

    def first_text(self) -> int:
        return min(self.seq_arrivals().values())

    def last_text(self) -> int:
        return max(self.seq_arrivals().values())

    def missing(self) -> int:
        return len(self.trace.writes) - len(self.seq_arrivals())


async def lsp_chat(
    session: Stamped, upstream: Upstream, model: StreamModel, script: Script, params: dict[str, Any]
) -> Sample:
    """One `tokenGauge/chat` over LSP; parts are stamped by the client's handler."""
    expect(upstream, script)
    session.arrivals.clear()
    pid = session.endpoint.process.pid
    cpu_server, cpu_bench = cpu_ticks_ns(pid), time.process_time_ns()
    sent = now()
    await session.endpoint.request(CHAT, params)
    done = now()
    cpu_server, cpu_bench = cpu_ticks_ns(pid) - cpu_server, time.process_time_ns() - cpu_bench
    trace = await traced(upstream, script)
    parts = []
    for arrived, raw in session.arrivals:
        notification = plain(raw)
        if notification.get("requestId") == params["requestId"]:
            parts.append((arrived, notification["part"]))
    return Sample(sent, done, trace, parts, cpu_server, cpu_bench)


@attrs.define
class StampSink:
    """`ChatSink` for in-process chats: stamps each part as `ServerChatSink` would send it."""

    parts: list[tuple[int, dict[str, Any]]] = attrs.field(factory=list)

    def part(self, request_id: str, part: ChatPart) -> None:
        self.parts.append((now(), unstructure(part, ChatPart)))

    def status(self, status: Status) -> None:
        pass

    def models_changed(self) -> None:
        pass

    def activity(self) -> None:
        pass

    def calibration_changed(self, model_id: str) -> None:
        pass

    def notice(self, message: str, setting: str | None) -> None:
        pass


async def direct_chat(
    runner: ChatRunner, sink: StampSink, upstream: Upstream, script: Script, params: dict[str, Any]
) -> Sample:
    """One chat through `ChatRunner` in this process (HTTP + SSE + parser, no LSP)."""
    expect(upstream, script)
    sink.parts.clear()
    request = structure(params, ChatParams, "params")
    cpu = time.process_time_ns()
    sent = now()
    await runner.run(request)
    done = now()
    cpu = time.process_time_ns() - cpu
    return Sample(sent, done, await traced(upstream, script), list(sink.parts), 0, cpu)


# --- 1. paced stream ------------------------------------------------------------------------------


def paced_rows(report: Report, label: str, sample: Sample, plan: Plan) -> None:
    section = "1. paced stream: added latency per chunk (upstream write → client)"
    samples = sample.latencies()
    gaps = [b - a for a, b in zip(sample.trace.writes, sample.trace.writes[1:], strict=False)]
    report.add(
        section,
        f"{label}: p50 / p99",
        latency(samples),
        f"max {us(max(samples))}, mean {us(statistics.fmean(samples))}, min {us(min(samples))}; "
        f"{len(samples)} of {len(sample.trace.writes)} deltas"
        + (f", {sample.missing()} MISSING" if sample.missing() else ""),
    )
    report.add(
        section,
        f"{label}: pacing achieved",
        us(statistics.fmean(gaps)),
        f"mean gap between writes (asked {plan.paced_delay_ms:g} ms; median "
        f"{us(statistics.median(gaps))}); whole chat {ms(sample.done - sample.sent)}",
    )
    report.add(
        section,
        f"{label}: last write → chat result",
        us(sample.done - sample.trace.last_write),
        "stream end, usage recorded (on-disk ledger, calibration), status + usage part, result",
    )


async def paced(
    report: Report, session: Stamped, upstream: Upstream, model: StreamModel, plan: Plan, how: str
) -> None:
    script = Script(make_stream(model, plan.paced_events), int(plan.paced_delay_ms * 1e6))
    sample = await lsp_chat(session, upstream, model, script, chat_params(model, hi()))
    paced_rows(report, f"{model.label} {how}", sample, plan)


# --- 2. burst -------------------------------------------------------------------------------------


def burst_rows(report: Report, label: str, runs: Sequence[Sample], over_lsp: bool) -> None:
    """The median run by parts/s; CPU shares from /proc and `process_time`."""
    section = "2. burst: events written as fast as possible"
    by_rate = sorted(runs, key=lambda s: s.last_text() - s.first_text())
    sample = by_rate[len(by_rate) // 2]
    count = len(sample.trace.writes)
    spread = sample.last_text() - sample.first_text()
    rates = ", ".join(rate(count - 1, s.last_text() - s.first_text()) for s in runs)
    report.add(
        section,
        f"{label}: parts/s at the client",
        rate(count - 1, spread),
        f"first → last text part {ms(spread)} for {count:,} parts; runs: {rates}"
        + (f"; {sample.missing()} MISSING" if sample.missing() else ""),
    )
    writes = sample.trace.writes
    report.add(
        section,
        f"{label}: total, request → result",
        ms(sample.done - sample.sent),
        f"upstream wrote the {count:,} deltas in {ms(writes[-1] - writes[0])} "
        f"({rate(count - 1, writes[-1] - writes[0])}); last part arrived "
        f"{ms(sample.last_text() - writes[-1])} after its write",
    )
    wall = sample.done - sample.sent
    if over_lsp and sample.cpu_server:
        report.add(
            section,
            f"{label}: server CPU per part",
            us(sample.cpu_server / count),
            f"server CPU {ms(sample.cpu_server)} = {100 * sample.cpu_server / wall:.0f}% of the "
            f"wall time (10 ms ticks); bench process (upstream + client) "
            f"{100 * sample.cpu_bench / wall:.0f}%",
        )
    elif not over_lsp:
        report.add(
            section,
            f"{label}: CPU per part (whole process)",
            us(sample.cpu_bench / count),
            f"the upstream and this client share the process: "
            f"{100 * sample.cpu_bench / wall:.0f}% of wall",
        )


async def burst(
    report: Report, session: Stamped, upstream: Upstream, model: StreamModel, plan: Plan, how: str
) -> None:
    stream = make_stream(model, plan.burst_events)
    runs = [
        await lsp_chat(session, upstream, model, Script(stream), chat_params(model, hi()))
        for _ in range(plan.burst_runs)
    ]
    burst_rows(report, f"{model.label} {how}", runs, over_lsp=True)


# --- 3. time to first part ------------------------------------------------------------------------


def first_part_row(report: Report, label: str, samples: Sequence[Sample], note: str = "") -> None:
    """Time to the first text part, split at the upstream's receipt and its first write."""
    section = "3. time to first part (request sent → first text part at the client)"
    ttfp = [s.first_text() - s.sent for s in samples]
    reach = [s.trace.received - s.sent for s in samples]
    hop = [s.first_text() - s.trace.writes[0] for s in samples]
    upstream_side = [s.trace.writes[0] - s.trace.received for s in samples]
    value = us(ttfp[0]) if len(samples) == 1 else latency(ttfp)
    connections = len({s.trace.peer for s in samples})
    report.add(
        section,
        label,
        value,
        f"sent → upstream has the request {us(statistics.median(reach))}; upstream to its first "
        f"write {us(statistics.median(upstream_side))}; write → client "
        f"{us(statistics.median(hop))}"
        + (
            f" (p50 of {len(samples)}); {connections} TCP connection"
            + ("s" if connections > 1 else "")
            if len(samples) > 1
            else ""
        )
        + note,
    )


async def first_parts(
    report: Report,
    session: Stamped,
    upstream: Upstream,
    model: StreamModel,
    plan: Plan,
    workload: dict[str, Any],
    how: str = OVER_LSP,
) -> None:
    stream = make_stream(model, SHORT_STREAM)
    variants = (("keep-alive offered", False), ("upstream sends Connection: close", True))
    for label, close in variants:
        samples = [
            await lsp_chat(
                session, upstream, model, Script(stream, close=close), chat_params(model, hi())
            )
            for _ in range(plan.first_part_runs)
        ]
        first_part_row(report, f"{model.label} {how}, “hi”, {label} p50 / p99", samples)
        if not close:
            connections = len({sample.trace.peer for sample in samples})
            report.add(
                "3. time to first part (request sent → first text part at the client)",
                f"{model.label} {how}: connection reuse",
                f"{connections} TCP for {len(samples)} chats",
                "upstream offered keep-alive; 1 would mean the server's pool reused it"
                + (
                    " (the server drops it: it stops reading at the terminal event)"
                    if connections == len(samples)
                    else ""
                ),
            )
    runs = max(3, plan.first_part_runs // 4)
    big = [
        await lsp_chat(
            session,
            upstream,
            model,
            Script(stream),
            chat_params(model, workload["messages"], workload["tools"]),
        )
        for _ in range(runs)
    ]
    size = len(json.dumps(chat_params(model, workload["messages"], workload["tools"])))
    first_part_row(report, f"{model.label} {how}, Copilot-sized request, first", big[:1])
    first_part_row(report, f"{model.label} {how}, Copilot-sized request p50 / p99", big[1:])
    report.add(
        "3. time to first part (request sent → first text part at the client)",
        f"{model.label} {how}: Copilot-sized request",
        f"{size / 1024:,.0f} KiB",
        f"LSP params; upstream body {big[-1].trace.body_bytes / 1024:,.0f} KiB "
        f"(workload: {len(workload['messages'])} messages, {len(workload['tools'])} tools)",
    )


# --- in process over HTTP -----------------------------------------------------------------------


async def direct(report: Report, upstream: Upstream, storage: Path, plan: Plan) -> None:
    """`ChatRunner` in this process over HTTP: sections 1–3 without the LSP hop."""
    settings = parse_settings(server_options(storage, upstream.base_url))
    gauge = Gauge(settings, Ledger(storage / "direct-ledger"))
    client = make_client(Timeouts())
    sink = StampSink()
    runner = ChatRunner(gauge, client, sink)

    async def chat(model: StreamModel, script: Script) -> Sample:
        return await direct_chat(runner, sink, upstream, script, chat_params(model, hi()))

    try:
        await without_lsp(report, IN_PROCESS, plan, chat)
    finally:
        await client.aclose()
        gauge.ledger.close()


# --- a direct client of the upstream --------------------------------------------------------------


async def client_chat(
    client: httpx.AsyncClient, upstream: Upstream, model: StreamModel, script: Script
) -> Sample:
    """One “hi” straight to the upstream (`stream_client`), stamped as it is parsed."""
    expect(upstream, script)
    cpu = time.process_time_ns()
    sent = now()
    parts = await stream_chat(client, model, upstream.base_url, API_KEY)
    done = now()
    cpu = time.process_time_ns() - cpu
    return Sample(sent, done, await traced(upstream, script), parts, 0, cpu)


async def direct_client(report: Report, upstream: Upstream, plan: Plan) -> None:
    """Sections 1–3 with no tokengauge between the client and the upstream."""
    async with httpx.AsyncClient(timeout=30) as client:

        async def chat(model: StreamModel, script: Script) -> Sample:
            return await client_chat(client, upstream, model, script)

        await without_lsp(report, DIRECT_CLIENT, plan, chat)


async def without_lsp(
    report: Report, how: str, plan: Plan, chat: Callable[[StreamModel, Script], Awaitable[Sample]]
) -> None:
    """Sections 1–3 for each model through `chat`, a way to the upstream with no LSP hop."""
    for model in MODELS:
        label = f"{model.label} {how}"
        short = Script(make_stream(model, SHORT_STREAM))
        for _ in range(WARM_UP_CHATS):
            await chat(model, short)
        stream = make_stream(model, plan.paced_events)
        sample = await chat(model, Script(stream, int(plan.paced_delay_ms * 1e6)))
        paced_rows(report, label, sample, plan)
        stream = make_stream(model, plan.burst_events)
        runs = [await chat(model, Script(stream)) for _ in range(plan.burst_runs)]
        burst_rows(report, label, runs, over_lsp=False)
        firsts = [await chat(model, short) for _ in range(plan.first_part_runs)]
        first_part_row(report, f"{label}, “hi”, keep-alive offered p50 / p99", firsts)


# --- main -----------------------------------------------------------------------------------------


async def cold_first(
    report: Report, session: Stamped, upstream: Upstream, model: StreamModel
) -> None:
    """The server's first chat with this model."""
    script = Script(make_stream(model, SHORT_STREAM))
    sample = await lsp_chat(session, upstream, model, script, chat_params(model, hi()))
    first_part_row(
        report,
        f"{model.label} over LSP, “hi”, first chat of the server",
        [sample],
        "; sent right after initialize: counting may wait for the encoding that the server "
        "loads in a background thread (encodings.py EncodingRegistry.get, under its lock)",
    )


async def lsp_baseline(report: Report, session: Stamped, plan: Plan) -> None:
    """A request that does nothing: what stdio, JSON-RPC and pygls cost on their own."""
    samples = []
    for _ in range(plan.first_part_runs * 5):
        start = now()
        await session.endpoint.request(COUNT_TOKENS, {"modelId": OPENAI.model_id, "inputs": []})
        samples.append(now() - start)
    report.add(
        "3. time to first part (request sent → first text part at the client)",
        "baseline: empty countTokens round trip p50 / p99",
        latency(samples),
        f"{len(samples)} calls; stdio + JSON-RPC + pygls both ways, no counting, no HTTP",
    )


async def over_lsp(report: Report, upstream: Upstream, root: Path, plan: Plan) -> None:
    workload = build_workload().to_json()
    async with pygls_session(
        server_options(Path(tempfile.mkdtemp(dir=root)), upstream.base_url)
    ) as session:
        for model in MODELS:
            await cold_first(report, session, upstream, model)
        await lsp_baseline(report, session, plan)
        for model in MODELS:
            await warm_up(session, upstream, model)
            await paced(report, session, upstream, model, plan, OVER_LSP)
            await burst(report, session, upstream, model, plan, OVER_LSP)
            await first_parts(report, session, upstream, model, plan, workload)
    async with bare_session(
        server_options(Path(tempfile.mkdtemp(dir=root)), upstream.base_url)
    ) as bare:
        for model in MODELS:
            await warm_up(bare, upstream, model)
            await paced(report, bare, upstream, model, plan, OVER_LSP_BARE)
            await burst(report, bare, upstream, model, plan, OVER_LSP_BARE)
            await first_parts(report, bare, upstream, model, plan, workload, OVER_LSP_BARE)


async def warm_up(session: Stamped, upstream: Upstream, model: StreamModel) -> None:
    for _ in range(WARM_UP_CHATS):
        script = Script(make_stream(model, SHORT_STREAM))
        await lsp_chat(session, upstream, model, script, chat_params(model, hi()))


async def run_all(report: Report, plan: Plan, console: Console) -> None:
    with tempfile.TemporaryDirectory(prefix="tokengauge-bench-") as tmp:
        async with running_upstream(UpstreamConfig()) as upstream:
            with console.status("over LSP…"):
                await over_lsp(report, upstream, Path(tmp), plan)
            with console.status("a direct client…"):
                await direct_client(report, upstream, plan)
            with console.status("in process…"):
                await direct(report, upstream, Path(tmp), plan)
                for model in MODELS:
                    await in_process(report, model, plan.burst_events, plan.parser_reps)


def measure(report: Report, console: Console, size: Size) -> None:
    """The machine rows, then every section."""
    plan = PLANS[size]
    machine(report, plan)
    asyncio.run(run_all(report, plan, console))


def main(argv: Sequence[str] | None = None) -> int:
    return run_bench(__doc__, "fewer events (< 20 s)", measure, argv)


if __name__ == "__main__":
    raise SystemExit(main())
