"""How fast tokengauge streams a chat response: prints figures, asserts nothing about time.

    python bench/stream_bench.py [--quick]

The bench process is both ends of the pipe: a small aiohttp upstream on 127.0.0.1 that writes real
OpenAI Chat Completions / Anthropic Messages SSE events (shapes from the wire fixtures; each text
delta carries its sequence number, and the upstream stamps `perf_counter_ns` right after writing
it), and pygls' client, which stamps each `tokenGauge/chatPart` notification as it is handled.
In between runs `python -m tokengauge` over stdio. Same machine, same clock: a chunk's added
latency is its arrival at the client minus its write at the upstream. For both dialects:
1. paced stream: events 2 ms apart → added latency per chunk, p50 / p99 / max;
2. burst: events written as fast as possible → parts per second at the client, total time, and
   the server's CPU per part;
3. time to first part after sending `tokenGauge/chat` (counting, request body, HTTP connect),
   with a tiny request and with the Copilot-sized one of `workload.py`;
4. in process, for comparison: the stream parser alone, SSE framing + parser as the server runs
   them, the `chatPart` notification's encoding, and the bench client's own cost per part.
Sections 1 and 2 also run with a bare asyncio JSON-RPC client (the server's share without pygls'
client, which costs more per notification than the server does) and with `ChatRun` in this
process over HTTP (no LSP hop at all).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import importlib.metadata
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import attrs
import cattrs
import httpx
from aiohttp import web
from lsprotocol import converters, types
from pygls.lsp.client import LanguageClient
from rich.console import Console
from rich.table import Table

from tokengauge.chat import ChatRun
from tokengauge.gauge import Gauge
from tokengauge.ledger import Ledger
from tokengauge.protocol import CHAT, CHAT_PART, COUNT_TOKENS, MODELS_CHANGED, STATUS, ChatParams
from tokengauge.server import ServerChatSink, create_server
from tokengauge.settings import parse_settings
from tokengauge.status import Status
from tokengauge.upstream.anthropic_stream import AnthropicStreamParser
from tokengauge.upstream.events import StreamParser, TextDelta, event_json
from tokengauge.upstream.http import Timeouts, make_client
from tokengauge.upstream.openai_stream import OpenAIStreamParser
from tokengauge.upstream.sse import aiter_events, iter_file_events
from tokengauge.wire import structure
from workload import build_workload

HOST: Final = "127.0.0.1"
API_KEY: Final = "bench"
STOP_TIMEOUT_S: Final = 10.0
WARM_UP_CHATS: Final = 5
SHORT_STREAM: Final = 5
"""Text deltas per response in the time-to-first-part runs."""
SEQ: Final = re.compile(r"w(\d+)")
"""A text delta is ` w00042`: its sequence number identifies the SSE event it came from."""
OVER_LSP: Final = "over LSP"
OVER_LSP_BARE: Final = "over LSP, bare client"
IN_PROCESS: Final = "in process (ChatRun, no LSP)"


@attrs.frozen
class Plan:
    """How many events and repetitions each measurement gets."""

    paced_events: int
    paced_delay_ms: float
    burst_events: int
    burst_runs: int
    first_part_runs: int
    parser_reps: int


QUICK: Final = Plan(
    paced_events=150,
    paced_delay_ms=2.0,
    burst_events=1_000,
    burst_runs=1,
    first_part_runs=10,
    parser_reps=3,
)
FULL: Final = Plan(
    paced_events=500,
    paced_delay_ms=2.0,
    burst_events=5_000,
    burst_runs=3,
    first_part_runs=40,
    parser_reps=5,
)


# --- reporting ------------------------------------------------------------------------------------


@attrs.define
class Report:
    """Rows of (measurement, value, detail), grouped by section, printed as rich tables."""

    sections: dict[str, list[tuple[str, str, str]]] = attrs.field(factory=dict)

    def add(self, section: str, measurement: str, value: str, detail: str = "") -> None:
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


def now() -> int:
    return time.perf_counter_ns()


def ms(ns: float) -> str:
    return f"{ns / 1e6:,.1f} ms" if ns >= 1e7 else f"{ns / 1e6:,.2f} ms"


def us(ns: float) -> str:
    return f"{ns / 1e3:,.0f} µs" if ns >= 1e5 else f"{ns / 1e3:,.1f} µs"


def p99(samples: Sequence[int]) -> float:
    if len(samples) < 2:
        return float(samples[0])
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


def latency(samples: Sequence[int]) -> str:
    """`p50 / p99` in µs."""
    return f"{us(statistics.median(samples))} / {us(p99(samples))}"


def rate(count: int, ns: float) -> str:
    return f"{count / (ns / 1e9):,.0f}/s" if ns > 0 else "n/a"


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
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def machine(report: Report, plan: Plan) -> None:
    section = "machine and setup"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    report.add(section, "platform", platform.platform())
    report.add(section, "CPU", cpu_model(), f"{os.cpu_count()} cores, {usable} usable")
    report.add(section, "Python", platform.python_version(), sys.executable)
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


# --- the wire: SSE events as the APIs send them ---------------------------------------------------


@attrs.frozen
class Dialect:
    """One wire dialect: its model, its endpoint, and how to write its events."""

    name: str
    label: str
    model_id: str
    path: str
    parser: Callable[[], StreamParser]


OPENAI: Final = Dialect("openai", "OpenAI", "gpt-4o", "/v1/chat/completions", OpenAIStreamParser)
ANTHROPIC: Final = Dialect(
    "anthropic", "Anthropic", "claude-sonnet-4-5", "/v1/messages", AnthropicStreamParser
)
DIALECTS: Final = (OPENAI, ANTHROPIC)


@attrs.frozen
class Stream:
    """One response's SSE events, encoded: opening events, numbered text deltas, closing ones."""

    head: tuple[bytes, ...]
    deltas: tuple[bytes, ...]
    tail: tuple[bytes, ...]

    def events(self) -> list[bytes]:
        return [*self.head, *self.deltas, *self.tail]


def delta_text(seq: int) -> str:
    return f" w{seq:05d}"


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE event: `event:` line if named, one `data:` line, blank line."""
    body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {body}\n\n".encode()


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """A `chat.completion.chunk` as in openai-chat-stream-usage-text.sse."""
    return {
        "id": "chatcmpl-bench0000000000000000000000",
        "object": "chat.completion.chunk",
        "created": 1747148050,
        "model": "gpt-4o-2024-08-06",
        "service_tier": "default",
        "system_fingerprint": "fp_bench0000",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "usage": None,
    }


def openai_stream(count: int) -> Stream:
    usage = {
        **openai_chunk({}),
        "choices": [],
        "usage": {
            "prompt_tokens": 12,
            "completion_tokens": count,
            "total_tokens": 12 + count,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
    }
    return Stream(
        head=(sse(openai_chunk({"role": "assistant", "content": "", "refusal": None})),),
        deltas=tuple(sse(openai_chunk({"content": delta_text(k)})) for k in range(count)),
        tail=(sse(openai_chunk({}, "stop")), sse(usage), sse("[DONE]")),
    )


def anthropic_stream(count: int) -> Stream:
    """Events as in anthropic-stream-text.sse."""
    usage = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 2,
        "service_tier": "standard",
    }
    message: dict[str, Any] = {
        "model": "claude-sonnet-4-5-20250929",
        "id": "msg_bench00000000000000000000",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }

    def delta(seq: int) -> bytes:
        text = {"type": "text_delta", "text": delta_text(seq)}
        return sse(
            {"type": "content_block_delta", "index": 0, "delta": text}, "content_block_delta"
        )

    end = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {**usage, "output_tokens": count},
    }
    return Stream(
        head=(
            sse({"type": "message_start", "message": message}, "message_start"),
            sse(block, "content_block_start"),
            sse({"type": "ping"}, "ping"),
        ),
        deltas=tuple(delta(k) for k in range(count)),
        tail=(
            sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            sse(end, "message_delta"),
            sse({"type": "message_stop"}, "message_stop"),
        ),
    )


def make_stream(dialect: Dialect, count: int) -> Stream:
    return openai_stream(count) if dialect is OPENAI else anthropic_stream(count)


# --- the upstream ---------------------------------------------------------------------------------


@attrs.frozen
class Script:
    """How the upstream answers the next request."""

    stream: Stream
    delay_ns: int = 0
    """Between two text deltas (0: as fast as possible)."""
    close: bool = False
    """Answer `Connection: close`, so that the next request opens a new connection."""


@attrs.define
class Trace:
    """What the upstream saw and did for one request; times are `perf_counter_ns`."""

    received: int = 0
    body_bytes: int = 0
    writes: list[int] = attrs.field(factory=list)
    """After each text delta's write, by sequence number."""
    last_write: int = 0
    """After the closing events."""
    peer: str = ""
    """The client's address and port: one per TCP connection."""


@attrs.define
class Upstream:
    """An aiohttp server speaking both dialects; answers requests from a queue of scripts."""

    queue: collections.deque[tuple[Script, Trace]] = attrs.field(factory=collections.deque)
    base_url: str = ""

    def expect(self, script: Script) -> Trace:
        """Queue the answer to the next request; its trace fills in as it is served."""
        trace = Trace()
        self.queue.append((script, trace))
        return trace

    async def handle(self, request: web.Request) -> web.StreamResponse:
        received = now()
        body = await request.read()
        if not self.queue:
            return web.json_response({"error": {"message": "unexpected request"}}, status=500)
        script, trace = self.queue.popleft()
        trace.received, trace.body_bytes = received, len(body)
        transport = request.transport
        trace.peer = str(transport.get_extra_info("peername")) if transport else "?"
        response = web.StreamResponse(
            headers={"content-type": "text/event-stream", "cache-control": "no-cache"}
        )
        if script.close:
            response.force_close()
        await response.prepare(request)
        for event in script.stream.head:
            await response.write(event)
        start = now()
        for seq, event in enumerate(script.stream.deltas):
            if script.delay_ns:
                wait = start + seq * script.delay_ns - now()
                if wait > 0:
                    await asyncio.sleep(wait / 1e9)
            await response.write(event)
            trace.writes.append(now())
        for event in script.stream.tail:
            await response.write(event)
        trace.last_write = now()
        await response.write_eof()
        return response


@contextlib.asynccontextmanager
async def running_upstream() -> AsyncIterator[Upstream]:
    upstream = Upstream()
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post(OPENAI.path, upstream.handle)
    app.router.add_post(ANTHROPIC.path, upstream.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, HOST, 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        upstream.base_url = f"http://{host}:{port}"
        yield upstream
    finally:
        await runner.cleanup()


# --- the language server --------------------------------------------------------------------------


def init_options(storage: Path, base_url: str) -> dict[str, Any]:
    """`initializationOptions`: one provider per dialect, both on the bench upstream."""
    return {
        "storageDir": str(storage),
        "providers": [
            {"id": "bench-openai", "dialect": "openai", "baseUrl": f"{base_url}/v1"},
            {"id": "bench-anthropic", "dialect": "anthropic", "baseUrl": base_url},
        ],
        "models": [
            {"id": OPENAI.model_id, "provider": "bench-openai"},
            {"id": ANTHROPIC.model_id, "provider": "bench-anthropic"},
        ],
    }


def plain_converter() -> cattrs.Converter:
    """lsprotocol's converter without pygls' namedtuple hooks: custom params stay plain JSON."""
    return converters.get_converter()


def as_json(value: Any) -> Any:
    """Plain JSON from what pygls hands over (dicts, or namedtuples with some converters)."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: as_json(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [as_json(item) for item in value]
    return value


Arrival = tuple[int, Any]
"""(perf_counter_ns when handled, the notification's params)."""


@attrs.define
class Session:
    """A running `python -m tokengauge` and the pygls client talking to it over stdio."""

    client: LanguageClient
    process: asyncio.subprocess.Process
    arrivals: list[Arrival]
    stderr: list[bytes] = attrs.field(factory=list)

    async def request(self, method: str, params: Any) -> Any:
        return await self.client.protocol.send_request_async(method, params)


async def drain(stream: asyncio.StreamReader | None, sink: list[bytes]) -> None:
    """Read the server's stderr so it never blocks on a full pipe; keep the last lines."""
    if stream is None:
        return
    while line := await stream.readline():
        sink.append(line)
        del sink[:-50]


async def stop(session: Session) -> None:
    """shutdown + exit, then wait for the process; kill it only if it does not go."""
    client, process = session.client, session.process
    with contextlib.suppress(Exception):
        if process.returncode is None and not client.stopped:
            await asyncio.wait_for(client.shutdown_async(None), STOP_TIMEOUT_S)
            client.exit(None)
    try:
        await asyncio.wait_for(client.stop(), STOP_TIMEOUT_S)  # type: ignore[no-untyped-call]
    except Exception:
        if process.returncode is None:
            process.kill()
            await process.wait()


@contextlib.asynccontextmanager
async def spawn_server(storage: Path, base_url: str) -> AsyncIterator[Session]:
    """Start and initialize `python -m tokengauge` with a pygls client; always stop it cleanly."""
    client = LanguageClient("tokengauge-bench", "0", converter_factory=plain_converter)
    arrivals: list[Arrival] = []

    def on_part(params: Any) -> None:  # pygls registers plain functions, not bound methods.
        arrivals.append((now(), params))

    client.feature(CHAT_PART)(on_part)
    for method in (STATUS, MODELS_CHANGED, types.WINDOW_LOG_MESSAGE):
        client.feature(method)(lambda params: None)
    await client.start_io(sys.executable, "-m", "tokengauge")
    process = client._server
    if process is None:
        raise RuntimeError("the server process did not start")
    session = Session(client, process, arrivals)
    reader = asyncio.create_task(drain(process.stderr, session.stderr))
    try:
        params = types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options=init_options(storage, base_url),
        )
        await client.initialize_async(params)
        client.initialized(types.InitializedParams())
        yield session
    except BaseException:
        tail = b"".join(session.stderr[-20:]).decode(errors="replace")
        print(f"server stderr (last lines):\n{tail}", file=sys.stderr)
        raise
    finally:
        await stop(session)
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(reader, STOP_TIMEOUT_S)


@attrs.define
class BareClient:
    """Just JSON-RPC framing over asyncio pipes: the server's figures without pygls' client cost.

    A reader task stamps each `tokenGauge/chatPart` as soon as its body is parsed.
    """

    process: asyncio.subprocess.Process
    arrivals: list[Arrival] = attrs.field(factory=list)
    pending: dict[int, asyncio.Future[Any]] = attrs.field(factory=dict)
    last_id: int = 0

    def send(self, message: dict[str, Any]) -> None:
        if self.process.stdin is None:
            raise RuntimeError("the server has no stdin")
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any) -> Any:
        self.last_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.last_id] = future
        self.send({"id": self.last_id, "method": method, "params": params})
        return await future

    async def read_messages(self) -> None:
        """Until the server closes its output: stamp parts, resolve requests."""
        stdout = self.process.stdout
        if stdout is None:
            raise RuntimeError("the server has no stdout")
        while True:
            length = 0
            while (line := await stdout.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if not length:
                break
            message = json.loads(await stdout.readexactly(length))
            if message.get("method") == CHAT_PART:
                self.arrivals.append((now(), message["params"]))
            elif "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            elif "id" in message and "method" not in message:
                self.settle(message)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the server closed its output"))

    def settle(self, message: dict[str, Any]) -> None:
        future = self.pending.pop(message["id"], None)
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(RuntimeError(f"{message['error']}"))
        else:
            future.set_result(message.get("result"))


@contextlib.asynccontextmanager
async def spawn_bare(storage: Path, base_url: str) -> AsyncIterator[BareClient]:
    """Start and initialize `python -m tokengauge` for a `BareClient`; always stop it cleanly."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tokengauge",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    client = BareClient(process)
    reader = asyncio.create_task(client.read_messages())
    try:
        options = init_options(storage, base_url)
        await client.request("initialize", {"capabilities": {}, "initializationOptions": options})
        client.send({"method": "initialized", "params": {}})
        yield client
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.request("shutdown", None), STOP_TIMEOUT_S)
            client.send({"method": "exit"})
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, ConnectionError):
            await asyncio.wait_for(reader, STOP_TIMEOUT_S)


class Endpoint(Protocol):
    """What a chat needs of a client: `Session` (pygls) or `BareClient`."""

    process: asyncio.subprocess.Process
    arrivals: list[Arrival]

    async def request(self, method: str, params: Any) -> Any: ...


# --- one chat -------------------------------------------------------------------------------------

_request_ids = iter(range(1, 1 << 62))


def hi() -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "value": "hi"}]}]


def chat_params(
    dialect: Dialect, messages: list[Any], tools: list[Any] | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "requestId": f"bench-{next(_request_ids)}",
        "modelId": dialect.model_id,
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
    session: Endpoint, upstream: Upstream, dialect: Dialect, script: Script, params: dict[str, Any]
) -> Sample:
    """One `tokenGauge/chat` over LSP; parts are stamped by the client's handler."""
    trace = upstream.expect(script)
    session.arrivals.clear()
    pid = session.process.pid
    cpu_server, cpu_bench = cpu_ticks_ns(pid), time.process_time_ns()
    sent = now()
    await session.request(CHAT, params)
    done = now()
    cpu_server, cpu_bench = cpu_ticks_ns(pid) - cpu_server, time.process_time_ns() - cpu_bench
    parts = []
    for arrived, raw in session.arrivals:
        notification = as_json(raw)
        if notification.get("requestId") == params["requestId"]:
            parts.append((arrived, notification["part"]))
    return Sample(sent, done, trace, parts, cpu_server, cpu_bench)


@attrs.define
class StampSink:
    """`ChatSink` for in-process chats: stamps each part as `ServerChatSink` would send it."""

    parts: list[tuple[int, dict[str, Any]]] = attrs.field(factory=list)

    def part(self, request_id: str, part: dict[str, Any]) -> None:
        self.parts.append((now(), part))

    def status(self, status: Status) -> None:
        pass

    def models_changed(self) -> None:
        pass


async def direct_chat(
    runner: ChatRun, sink: StampSink, upstream: Upstream, script: Script, params: dict[str, Any]
) -> Sample:
    """One chat through `ChatRun` in this process (HTTP + SSE + parser, no LSP)."""
    trace = upstream.expect(script)
    sink.parts.clear()
    request = structure(params, ChatParams, "params")
    cpu = time.process_time_ns()
    sent = now()
    await runner.run(request)
    done = now()
    return Sample(sent, done, trace, list(sink.parts), 0, time.process_time_ns() - cpu)


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
    report: Report, session: Endpoint, upstream: Upstream, dialect: Dialect, plan: Plan, how: str
) -> None:
    script = Script(make_stream(dialect, plan.paced_events), int(plan.paced_delay_ms * 1e6))
    sample = await lsp_chat(session, upstream, dialect, script, chat_params(dialect, hi()))
    paced_rows(report, f"{dialect.label} {how}", sample, plan)


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
            f"upstream + ChatRun share this process: {100 * sample.cpu_bench / wall:.0f}% of wall",
        )


async def burst(
    report: Report, session: Endpoint, upstream: Upstream, dialect: Dialect, plan: Plan, how: str
) -> None:
    stream = make_stream(dialect, plan.burst_events)
    runs = [
        await lsp_chat(session, upstream, dialect, Script(stream), chat_params(dialect, hi()))
        for _ in range(plan.burst_runs)
    ]
    burst_rows(report, f"{dialect.label} {how}", runs, over_lsp=True)


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
    session: Session,
    upstream: Upstream,
    dialect: Dialect,
    plan: Plan,
    workload: dict[str, Any],
) -> None:
    stream = make_stream(dialect, SHORT_STREAM)
    variants = (("keep-alive offered", False), ("upstream sends Connection: close", True))
    for label, close in variants:
        samples = [
            await lsp_chat(
                session, upstream, dialect, Script(stream, close=close), chat_params(dialect, hi())
            )
            for _ in range(plan.first_part_runs)
        ]
        first_part_row(report, f"{dialect.label} over LSP, “hi”, {label} p50 / p99", samples)
        if not close:
            connections = len({sample.trace.peer for sample in samples})
            report.add(
                "3. time to first part (request sent → first text part at the client)",
                f"{dialect.label}: connection reuse",
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
            dialect,
            Script(stream),
            chat_params(dialect, workload["messages"], workload["tools"]),
        )
        for _ in range(runs)
    ]
    size = len(json.dumps(chat_params(dialect, workload["messages"], workload["tools"])))
    first_part_row(report, f"{dialect.label} over LSP, Copilot-sized request, first", big[:1])
    first_part_row(report, f"{dialect.label} over LSP, Copilot-sized request p50 / p99", big[1:])
    report.add(
        "3. time to first part (request sent → first text part at the client)",
        f"{dialect.label}: Copilot-sized request",
        f"{size / 1024:,.0f} KiB",
        f"LSP params; upstream body {big[-1].trace.body_bytes / 1024:,.0f} KiB "
        f"(workload.py: {len(workload['messages'])} messages, {len(workload['tools'])} tools)",
    )


# --- 4. in process --------------------------------------------------------------------------------


class ChunkStream(httpx.AsyncByteStream):
    """A response body that arrives one SSE event per chunk, as the upstream writes it."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


class NullWriter:
    """Where pygls writes the server's messages in process: counts bytes."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self.bytes += len(data)

    def close(self) -> None:
        pass


def best_of(reps: int, run: Callable[[], int]) -> tuple[int, int]:
    """Fastest wall time of `reps` runs, and the last run's result."""
    times, result = [], 0
    for _ in range(reps):
        start = now()
        result = run()
        times.append(now() - start)
    return min(times), result


async def best_of_async(reps: int, run: Callable[[], Any]) -> tuple[int, int]:
    times, result = [], 0
    for _ in range(reps):
        start = now()
        result = await run()
        times.append(now() - start)
    return min(times), result


def feed_all(parser: StreamParser, pairs: Iterable[tuple[str, str]]) -> int:
    produced = 0
    for event, data in pairs:
        produced += len(parser.feed(event, data))
    return produced + len(parser.finish())


async def frame_and_parse(dialect: Dialect, chunks: Sequence[bytes]) -> int:
    """The server's path minus the network: `aiter_events` over one chunk per event, then parse."""
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=ChunkStream(chunks)
    )
    parser = dialect.parser()
    produced = 0
    async for event in aiter_events(response):
        produced += len(parser.feed(event.event, event.data))
    return produced + len(parser.finish())


def notify_parts(parts: Sequence[dict[str, Any]]) -> int:
    """`ServerChatSink.part` for each part, into a real (unstarted) server's pygls protocol."""
    server = create_server()
    writer = NullWriter()
    server.protocol.set_writer(writer)
    sink = ServerChatSink(server)
    for part in parts:
        sink.part("bench-1", part)
    return writer.bytes


def client_dispatch(bodies: Sequence[bytes]) -> int:
    """What the bench's pygls client does per notification: parse, structure, call the handler."""
    client = LanguageClient("tokengauge-bench", "0", converter_factory=plain_converter)
    handled = 0

    def on_part(params: Any) -> None:
        nonlocal handled
        handled += 1

    client.feature(CHAT_PART)(on_part)
    protocol = client.protocol
    for body in bodies:
        protocol.handle_message(json.loads(body, object_hook=protocol.structure_message))
    return handled


async def in_process(report: Report, dialect: Dialect, plan: Plan) -> None:
    section = "4. in process, per event (no network, no LSP)"
    stream = make_stream(dialect, plan.burst_events)
    chunks = stream.events()
    pairs = [(e.event, e.data) for e in iter_file_events(b"".join(chunks))]
    count = len(stream.deltas)
    parse_ns, produced = best_of(plan.parser_reps, lambda: feed_all(dialect.parser(), pairs))
    report.add(
        section,
        f"{dialect.label}: parser alone ({dialect.parser.__name__}.feed)",
        f"{us(parse_ns / len(pairs))}/event",
        f"{rate(len(pairs), parse_ns)}; {len(pairs):,} events → {produced:,} stream events",
    )
    frame_ns, _ = await best_of_async(plan.parser_reps, lambda: frame_and_parse(dialect, chunks))
    report.add(
        section,
        f"{dialect.label}: SSE framing + parser (aiter_events, one chunk per event)",
        f"{us(frame_ns / len(chunks))}/event",
        f"{rate(len(chunks), frame_ns)}; framing alone ≈ {us((frame_ns - parse_ns) / len(chunks))}"
        "/event",
    )
    parts = [event_json(TextDelta(delta_text(k))) or {} for k in range(count)]
    notify_ns, written = best_of(plan.parser_reps, lambda: notify_parts(parts))
    report.add(
        section,
        f"{dialect.label}: chatPart notification (ServerChatSink.part → pygls → bytes)",
        f"{us(notify_ns / count)}/part",
        f"{rate(count, notify_ns)}; {written / count:,.0f} bytes per notification",
    )
    report.add(
        section,
        f"{dialect.label}: sum (framing + parse + notification)",
        f"{us((frame_ns + notify_ns) / count)}/part",
        "compare with the server's CPU per part in section 2 (which adds HTTP and stdout writes)",
    )
    bodies = [
        json.dumps(
            {"jsonrpc": "2.0", "method": CHAT_PART, "params": {"requestId": "b", "part": p}}
        ).encode()
        for p in parts
    ]
    client_ns, _ = best_of(plan.parser_reps, lambda: client_dispatch(bodies))
    report.add(
        section,
        f"{dialect.label}: the bench's pygls client, per chatPart",
        f"{us(client_ns / count)}/part",
        f"{rate(count, client_ns)}; JSON parse + structure + handler, without reading the pipe "
        "(the client side of sections 1–2; VS Code's client is vscode-jsonrpc)",
    )


async def direct(report: Report, upstream: Upstream, storage: Path, plan: Plan) -> None:
    """`ChatRun` in this process over HTTP: sections 1–3 without the LSP hop."""
    settings = parse_settings(init_options(storage, upstream.base_url))
    gauge = Gauge(settings, Ledger(storage / "direct-ledger"))
    client = make_client(Timeouts())
    sink = StampSink()
    runner = ChatRun(gauge, client, sink)

    async def chat(dialect: Dialect, script: Script) -> Sample:
        return await direct_chat(runner, sink, upstream, script, chat_params(dialect, hi()))

    try:
        for dialect in DIALECTS:
            label = f"{dialect.label} {IN_PROCESS}"
            short = Script(make_stream(dialect, SHORT_STREAM))
            for _ in range(WARM_UP_CHATS):
                await chat(dialect, short)
            stream = make_stream(dialect, plan.paced_events)
            sample = await chat(dialect, Script(stream, int(plan.paced_delay_ms * 1e6)))
            paced_rows(report, label, sample, plan)
            stream = make_stream(dialect, plan.burst_events)
            runs = [await chat(dialect, Script(stream)) for _ in range(plan.burst_runs)]
            burst_rows(report, label, runs, over_lsp=False)
            firsts = [await chat(dialect, short) for _ in range(plan.first_part_runs)]
            first_part_row(report, f"{label}, “hi”, keep-alive offered p50 / p99", firsts)
    finally:
        await client.aclose()
        gauge.ledger.close()


# --- main -----------------------------------------------------------------------------------------


async def cold_first(
    report: Report, session: Session, upstream: Upstream, dialect: Dialect
) -> None:
    """The server's first chat in this dialect."""
    script = Script(make_stream(dialect, SHORT_STREAM))
    sample = await lsp_chat(session, upstream, dialect, script, chat_params(dialect, hi()))
    first_part_row(
        report,
        f"{dialect.label} over LSP, “hi”, first chat of the server",
        [sample],
        "; sent right after initialize: counting may wait for the encoding that the server "
        "loads in a background thread (encodings.py EncodingRegistry.get, under its lock)",
    )


async def lsp_baseline(report: Report, session: Session, plan: Plan) -> None:
    """A request that does nothing: what stdio, JSON-RPC and pygls cost on their own."""
    samples = []
    for _ in range(plan.first_part_runs * 5):
        start = now()
        await session.request(COUNT_TOKENS, {"modelId": OPENAI.model_id, "inputs": []})
        samples.append(now() - start)
    report.add(
        "3. time to first part (request sent → first text part at the client)",
        "baseline: empty countTokens round trip p50 / p99",
        latency(samples),
        f"{len(samples)} calls; stdio + JSON-RPC + pygls both ways, no counting, no HTTP",
    )


async def over_lsp(report: Report, upstream: Upstream, root: Path, plan: Plan) -> None:
    workload = build_workload().to_json()
    async with spawn_server(Path(tempfile.mkdtemp(dir=root)), upstream.base_url) as session:
        for dialect in DIALECTS:
            await cold_first(report, session, upstream, dialect)
        await lsp_baseline(report, session, plan)
        for dialect in DIALECTS:
            await warm_up(session, upstream, dialect)
            await paced(report, session, upstream, dialect, plan, OVER_LSP)
            await burst(report, session, upstream, dialect, plan, OVER_LSP)
            await first_parts(report, session, upstream, dialect, plan, workload)
    async with spawn_bare(Path(tempfile.mkdtemp(dir=root)), upstream.base_url) as bare:
        for dialect in DIALECTS:
            await warm_up(bare, upstream, dialect)
            await paced(report, bare, upstream, dialect, plan, OVER_LSP_BARE)
            await burst(report, bare, upstream, dialect, plan, OVER_LSP_BARE)


async def warm_up(session: Endpoint, upstream: Upstream, dialect: Dialect) -> None:
    for _ in range(WARM_UP_CHATS):
        script = Script(make_stream(dialect, SHORT_STREAM))
        await lsp_chat(session, upstream, dialect, script, chat_params(dialect, hi()))


async def run_all(report: Report, plan: Plan, console: Console) -> None:
    with tempfile.TemporaryDirectory(prefix="tokengauge-bench-") as tmp:
        async with running_upstream() as upstream:
            with console.status("over LSP…"):
                await over_lsp(report, upstream, Path(tmp), plan)
            with console.status("in process…"):
                await direct(report, upstream, Path(tmp), plan)
                for dialect in DIALECTS:
                    await in_process(report, dialect, plan)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer events (< 20 s)")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 132)
    report = Report()
    started = now()
    machine(report, plan)
    asyncio.run(run_all(report, plan, console))
    report.print(console)
    console.print(f"[dim]{'quick' if args.quick else 'full'} run took {ms(now() - started)}[/dim]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
