"""What the bench scripts share: the report, time formats, the machine rows, the servers they spawn.

`count_bench.py` and `stream_bench.py` import this as a sibling module (`python bench/<script>.py`
puts `bench/` first on `sys.path`). Times are `perf_counter_ns` integers throughout; the
formatters turn them into the strings of the report's value and detail columns.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import cattrs
from lsprotocol import converters, types
from pygls.lsp.client import LanguageClient
from rich.console import Console
from rich.table import Table

STOP_TIMEOUT_S: Final = 10.0
"""How long a server gets to answer `shutdown` and to exit before it is killed."""


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


def run_bench(
    doc: str | None,
    quick_help: str,
    measure: Callable[[Report, Console, bool], None],
    argv: Sequence[str] | None = None,
) -> int:
    """A bench script's `main`: parse `--quick`, measure into a report, print it and the run time.

    `measure(report, console, quick)` fills the report; the console is for its status spinners.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 132)
    report = Report()
    started = now()
    measure(report, console, args.quick)
    report.print(console)
    console.print(f"[dim]{'quick' if args.quick else 'full'} run took {ms(now() - started)}[/dim]")
    return 0


# --- time and size formats ------------------------------------------------------------------------


def now() -> int:
    """`time.perf_counter_ns()`: the one clock of every measurement."""
    return time.perf_counter_ns()


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


# --- the language server, with pygls' client ------------------------------------------------------


def plain_converter() -> cattrs.Converter:
    """lsprotocol's converter without pygls' namedtuple hooks: custom params and results stay
    plain JSON, as `vscode-jsonrpc` hands them to the extension."""
    return converters.get_converter()


def bench_client() -> LanguageClient:
    """A pygls client with `plain_converter`; register its handlers before `spawn_server`."""
    return LanguageClient("tokengauge-bench", "0", converter_factory=plain_converter)


@attrs.define
class LspServer:
    """A running `python -m tokengauge` and the pygls client talking to it over stdio."""

    client: LanguageClient
    process: asyncio.subprocess.Process
    stderr: list[bytes] = attrs.field(factory=list)
    """The last lines the server wrote to stderr."""

    async def initialize(self, options: dict[str, Any]) -> None:
        """`initialize` with these `initializationOptions`, then `initialized`."""
        params = types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options=options
        )
        await self.client.initialize_async(params)
        self.client.initialized(types.InitializedParams())

    async def request(self, method: str, params: Any) -> Any:
        """One request, awaited; params and result as plain JSON."""
        return await self.client.protocol.send_request_async(method, params)


async def drain(stream: asyncio.StreamReader | None, sink: list[bytes]) -> None:
    """Read the server's stderr so it never blocks on a full pipe; keep the last lines."""
    if stream is None:
        return
    while line := await stream.readline():
        sink.append(line)
        del sink[:-50]


async def kill(process: asyncio.subprocess.Process) -> None:
    """The last resort, for a server that did not exit when asked."""
    if process.returncode is None:
        process.kill()
        await process.wait()


async def stop(server: LspServer) -> None:
    """shutdown + exit, then wait for the process; kill it only if it does not go."""
    client, process = server.client, server.process
    with contextlib.suppress(Exception):
        if process.returncode is None and not client.stopped:
            await asyncio.wait_for(client.shutdown_async(None), STOP_TIMEOUT_S)
            client.exit(None)
    try:
        await asyncio.wait_for(client.stop(), STOP_TIMEOUT_S)  # type: ignore[no-untyped-call]
    except Exception:
        await kill(process)


@contextlib.asynccontextmanager
async def spawn_server(client: LanguageClient) -> AsyncIterator[LspServer]:
    """Start `python -m tokengauge` under `client` (not yet initialized); always stop it cleanly.

    On an error inside the block, the server's last stderr lines go to this process's stderr.
    """
    await client.start_io(sys.executable, "-m", "tokengauge")
    process = client._server
    if process is None:
        raise RuntimeError("the server process did not start")
    server = LspServer(client, process)
    reader = asyncio.create_task(drain(process.stderr, server.stderr))
    try:
        yield server
    except BaseException:
        tail = b"".join(server.stderr[-20:]).decode(errors="replace")
        print(f"server stderr (last lines):\n{tail}", file=sys.stderr)
        raise
    finally:
        await stop(server)
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(reader, STOP_TIMEOUT_S)


# --- the language server, with a bare JSON-RPC client ---------------------------------------------


@attrs.define
class BarePipe:
    """JSON-RPC framing over a server's stdin and stdout; subclasses say how a request is answered.

    No pygls on this side: what the bench measures through it is the server's share.
    """

    process: asyncio.subprocess.Process
    last_id: int = 0

    def send(self, message: dict[str, Any]) -> None:
        """Write one message (`jsonrpc` added) with its `Content-Length` header."""
        if self.process.stdin is None:
            raise RuntimeError("the server has no stdin")
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def receive(self) -> dict[str, Any]:
        """Read the next message; `ConnectionError` once the server has closed its output."""
        if self.process.stdout is None:
            raise RuntimeError("the server has no stdout")
        length = 0
        while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if not length:
            raise ConnectionError("the server closed its output")
        message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
        return message

    async def request(self, method: str, params: Any) -> Any:
        """One request, awaited: its result, or `RuntimeError` for an error answer."""
        raise NotImplementedError

    async def initialize(self, options: dict[str, Any]) -> None:
        """`initialize` with these `initializationOptions`, then `initialized`."""
        await self.request("initialize", {"capabilities": {}, "initializationOptions": options})
        self.send({"method": "initialized", "params": {}})

    async def shut_down(self) -> None:
        """`shutdown` + `exit`, if the server still answers."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.request("shutdown", None), STOP_TIMEOUT_S)
            self.send({"method": "exit"})


@contextlib.asynccontextmanager
async def bare_process() -> AsyncIterator[asyncio.subprocess.Process]:
    """`python -m tokengauge` on pipes, stderr discarded; waits for it to exit, else kills it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tokengauge",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield process
    finally:
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
        except asyncio.TimeoutError:
            await kill(process)
