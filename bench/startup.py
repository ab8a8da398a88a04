"""Server start: from spawning `python -m tokengauge` to its first answers, N times.

    .venv/bin/python -m bench.startup [--quick | --smoke]

Each run spawns the real server over stdio (a bare JSON-RPC client, so the figures are the
server's) and sends what the extension sends at activation: `initialize` at once, then
`initialized` and `tokenGauge/models` as soon as `initialize` is answered. It times spawn →
`initialize` answered, spawn → models answered, spawn → the first `tokenGauge/status`, and
spawn → a `countTokens` sent right after the models (the worst case for the encodings, which
load in the background after the models are answered). Two kinds of start: the very first one
(a new, empty storage directory each run) and the everyday one (a storage directory with a
ledger from an earlier session: calibration, actuals, the most asked strings, the last
conversation). One more start under `python -X importtime` lists the imports that finished
before the models were answered, the costliest first.

Run it on a quiet machine: the report gives the load average before and after. A benchmark, not
a test: it fails nothing. `--quick` makes 3 runs of each kind. The server is whatever
`python -m tokengauge` imports (`PYTHONPATH` chooses another tree's).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import attrs
from rich.console import Console

from bench import benchlib
from bench.benchlib import Report, Size, ms, now
from tests.harness.lsp import SERVER_COMMAND, BareClient, init_options

RUNS: Final[dict[Size, int]] = {"full": 10, "quick": 3, "smoke": 1}
TOP_IMPORTS: Final = 15
STOP_TIMEOUT_S: Final = 10.0
PROVIDERS: Final[list[dict[str, Any]]] = [
    {"id": "openai", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1"},
    {"id": "anthropic", "dialect": "anthropic", "baseUrl": "http://127.0.0.1:9"},
    {"id": "ollama", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1", "discover": False},
]
MODELS: Final = [
    {"id": "gpt-4o", "provider": "openai"},
    {"id": "gpt-4.1-mini", "provider": "openai"},
    {"id": "claude-sonnet-4-5", "provider": "anthropic"},
    {"id": "qwen2.5-coder:7b", "provider": "ollama"},
]
TOOL_STRINGS: Final = [
    f"{key} of the {thing}" for key in ("path", "query", "pattern", "description", "command")
    for thing in ("file", "workspace", "terminal", "notebook", "test", "symbol", "search")
]  # fmt: skip


def options(storage: str) -> dict[str, Any]:
    """`initializationOptions` as the extension sends them."""
    return init_options(storage, PROVIDERS, MODELS, log_level="info")


def text(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "value": value}]}


@attrs.define
class Start:
    """One start's times from the spawn, in ns (None: it did not happen)."""

    initialize: int
    models: int
    count: int
    status: int | None
    imports: list[tuple[int, str]] = attrs.field(factory=list)
    """(arrival time, `-X importtime` line) of each import line, under `--importtime`."""


async def start_once(storage: str, importtime: bool = False) -> Start:
    """Spawn the server, time its first answers, shut it down."""
    statuses: list[int] = []
    started = now()
    process = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND[:1],
        *(["-X", "importtime"] if importtime else []),
        *SERVER_COMMAND[1:],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE if importtime else asyncio.subprocess.DEVNULL,
    )

    def noted(message: dict[str, Any]) -> None:
        if message.get("method") == "tokenGauge/status":
            statuses.append(now() - started)

    client = BareClient(process, noted)
    reader = asyncio.create_task(client.read_messages())
    lines: list[tuple[int, str]] = []
    errors = asyncio.create_task(read_stderr(process, lines, started)) if importtime else None
    try:
        params = {"capabilities": {}, "initializationOptions": options(storage)}
        await client.request("initialize", params)
        initialized = now() - started
        client.send({"method": "initialized", "params": {}})
        await client.request("tokenGauge/models", {})
        models = now() - started
        await client.request("tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["hello"]})
        counted = now() - started
    finally:
        await client.shut_down()
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        await reader
        if errors is not None:
            await errors
    status = statuses[0] if statuses else None
    return Start(initialized, models, counted, status, lines)


async def read_stderr(
    process: asyncio.subprocess.Process, lines: list[tuple[int, str]], started: int
) -> None:
    """Keep each stderr line with its arrival time."""
    assert process.stderr is not None
    while line := await process.stderr.readline():
        lines.append((now() - started, line.decode(errors="replace")))


async def prepare_history(storage: str) -> None:
    """One earlier session: counts of the tool strings, and a conversation's usage reported."""
    process = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    client = BareClient(process)
    reader = asyncio.create_task(client.read_messages())
    try:
        await client.initialize(options(storage))
        for model in ("gpt-4o", "claude-sonnet-4-5"):
            params = {"modelId": model, "inputs": TOOL_STRINGS}
            await client.request("tokenGauge/countTokens", params)
        messages = [
            text("system", "You are a careful coding assistant. " * 40),
            text("user", "Explain the module. " * 200),
            text("assistant", "It reads the ledger. " * 100),
            text("user", "And the status bar?"),
        ]
        tools = [
            {"name": f"tool_{i}", "description": s, "inputSchema": {"type": "object"}}
            for i, s in enumerate(TOOL_STRINGS)
        ]
        usage = {"totalInputTokens": 4_200, "outputTokens": 310}
        for model in ("gpt-4o", "claude-sonnet-4-5"):
            report: dict[str, Any] = {
                "modelId": model,
                "messages": messages,
                "tools": tools,
                "usage": usage,
            }
            await client.request("tokenGauge/recordUsage", report)
    finally:
        await client.shut_down()
        await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
        await reader


async def run_starts(runs: int, history: bool) -> list[Start]:
    """`runs` starts, each on a new empty storage, or all on one storage with history."""
    starts = []
    with tempfile.TemporaryDirectory(prefix="tokengauge-startup-") as root:
        if history:
            await prepare_history(root)
        for index in range(runs):
            storage = root if history else str(Path(root) / f"run-{index}")
            starts.append(await start_once(storage))
    return starts


@attrs.frozen
class Import:
    """One line of `-X importtime`."""

    module: str
    depth: int
    own_us: int
    cumulative_us: int


def parse_importtime(line: str) -> Import | None:
    """`import time:  self |  cumulative | <indent>module`, or None for any other line."""
    if not line.startswith("import time:") or "[us]" in line:
        return None
    own, cumulative, name = line.split(":", 1)[1].split("|")
    depth = (len(name) - len(name.lstrip(" ")) - 1) // 2
    return Import(name.strip(), depth, int(own), int(cumulative))


def spread(values: Sequence[int]) -> tuple[str, str]:
    """The median, and `min … max`."""
    return ms(statistics.median(values)), f"min {ms(min(values))} · max {ms(max(values))}"


def add_starts(report: Report, section: str, starts: list[Start], detail: str) -> None:
    report.add(section, "runs", str(len(starts)), detail)
    for label, values in (
        ("spawn → initialize answered", [s.initialize for s in starts]),
        ("spawn → models answered", [s.models for s in starts]),
        ("spawn → first status", [s.status for s in starts if s.status is not None]),
        ("spawn → first count answered", [s.count for s in starts]),
    ):
        if values:
            median, rest = spread(values)
            report.add(section, label, median, rest)
        else:
            report.add(section, label, "none", "the server sent no status")


def add_imports(report: Report, section: str, start: Start) -> None:
    """The imports finished before the models were answered, costliest first."""
    before = [
        parsed
        for at, line in start.imports
        if at <= start.models and (parsed := parse_importtime(line)) is not None
    ]
    total = sum(i.cumulative_us for i in before if i.depth == 0)
    report.add(
        section,
        "imports before the models answer",
        ms(total * 1000),
        f"{len(before)} modules (under -X importtime, which slows them a little)",
    )
    for item in sorted(before, key=lambda i: i.cumulative_us, reverse=True)[:TOP_IMPORTS]:
        report.add(
            section,
            "  " * item.depth + item.module,
            ms(item.cumulative_us * 1000),
            f"own {ms(item.own_us * 1000)}",
        )


def load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def measure(report: Report, console: Console, size: Size) -> None:
    runs = RUNS[size]
    benchlib.machine_rows(report, "machine")
    report.add("machine", "load average before", load(), "1 / 5 / 15 min")
    with console.status(f"{runs} first starts"):
        first = asyncio.run(run_starts(runs, history=False))
    with console.status(f"{runs} everyday starts"):
        everyday = asyncio.run(run_starts(runs, history=True))
    with console.status("one start under -X importtime"), tempfile.TemporaryDirectory() as root:
        profiled = asyncio.run(start_once(root, importtime=True))
    report.add("machine", "load average after", load(), "1 / 5 / 15 min")
    add_starts(report, "1 first start", first, "a new, empty storage directory each")
    add_starts(report, "2 everyday start", everyday, "one storage directory with history")
    add_imports(report, "3 imports", profiled)


def main(argv: Sequence[str] | None = None) -> int:
    return benchlib.run_bench(__doc__, f"{RUNS['quick']} runs of each kind", measure, argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
